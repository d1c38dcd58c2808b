//! A design instance that lives in a controlled execution of its own, driven by calls from
//! outside it.
//!
//! Loom gives one execution at most five threads in all (a finished thread's slot is never
//! reused), so a design that spawns a thread per instance, such as an actor behind a
//! channel, could be built only three times inside the one execution a sequential check
//! would otherwise run in, while a property test builds one instance per case. Under loom a
//! sequential check that runs out of threads in one execution therefore runs again, driving
//! every instance through a [`Hosted`] handle instead:
//! [`Hosted::new`] starts an execution of its own on an OS thread of its own, builds the
//! design inside it, and each call is sent to that execution and answered from it. The
//! instance and its threads end with the handle.
//!
//! A hosted call behaves as the design's own: it returns what the design returned, and a
//! panic of the design is raised again, with its message, on the caller's thread.
use std::panic::resume_unwind;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::suite::core::panics::{guarded, panic_message};
use crate::suite::host::runtime::in_execution;
use crate::{Decision, LimitError, Limiter, Policy, Snapshot};

/// One call for the hosted instance, answering on a channel of its own.
type Job<L> = Box<dyn FnOnce(&L) + Send>;

/// How building the instance went: its own result, or its panic's message.
type Built = Result<Result<(), LimitError>, String>;

/// A handle on a design instance hosted in an execution of its own (see the module docs).
pub(crate) struct Hosted<L: Limiter> {
    /// Calls for the instance; dropping it ends the instance and its execution.
    jobs: Option<Sender<Job<L>>>,
    /// The OS thread the execution runs on; it returns why the execution ended.
    host: Mutex<Option<JoinHandle<String>>>,
}

impl<L: Limiter> Hosted<L> {
    /// Runs `f` on the hosted instance and returns what it returned; a panic inside `f` is
    /// raised again here, with its message.
    fn call<T: Send + 'static>(&self, f: impl FnOnce(&L) -> T + Send + 'static) -> T {
        let (answer, answered) = channel();
        let job: Job<L> = Box::new(move |design| {
            let _ = answer.send(guarded(|| f(design)));
        });
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(job));
        match (sent, answered.recv()) {
            (Some(Ok(())), Ok(Ok(value))) => value,
            (Some(Ok(())), Ok(Err(panic))) => resume_unwind(Box::new(panic)),
            _ => resume_unwind(Box::new(self.why_ended())),
        }
    }

    /// Why the hosted execution is gone: waits for its thread and returns what it said.
    fn why_ended(&self) -> String {
        let host = self
            .host
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match host.map(JoinHandle::join) {
            Some(Ok(why)) => why,
            Some(Err(payload)) => panic_message(payload.as_ref()),
            None => "the design's execution has ended".to_string(),
        }
    }
}

/// Builds the design inside the current execution, reports how that went on `built`, then
/// answers `jobs` one at a time until the handle is dropped.
fn serve<L: Limiter>(
    policy: Policy,
    max_keys: usize,
    built: Sender<Built>,
    jobs: Receiver<Job<L>>,
) {
    let design = match guarded(|| L::new(policy, max_keys)) {
        Ok(Ok(design)) => design,
        Ok(Err(e)) => {
            let _ = built.send(Ok(Err(e)));
            return;
        }
        Err(panic) => {
            let _ = built.send(Err(panic));
            return;
        }
    };
    let _ = built.send(Ok(Ok(())));
    drop(built);
    while let Ok(job) = jobs.recv() {
        job(&design);
    }
}

impl<L: Limiter> Limiter for Hosted<L> {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        let (jobs, inbox) = channel::<Job<L>>();
        let (built, building) = channel::<Built>();
        let host = std::thread::Builder::new()
            .name("hosted design".to_string())
            .spawn(move || {
                match guarded(|| in_execution(move || serve::<L>(policy, max_keys, built, inbox))) {
                    Ok(Ok(())) => "the design's execution has ended".to_string(),
                    Ok(Err(panic)) | Err(panic) => {
                        format!("the design's execution ended with a panic: {panic}")
                    }
                }
            });
        let hosted = match host {
            Ok(host) => Hosted {
                jobs: Some(jobs),
                host: Mutex::new(Some(host)),
            },
            Err(e) => resume_unwind(Box::new(format!(
                "could not start a thread for the design's execution: {e}"
            ))),
        };
        match building.recv() {
            Ok(Ok(Ok(()))) => Ok(hosted),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(panic)) => resume_unwind(Box::new(panic)),
            Err(_) => resume_unwind(Box::new(hosted.why_ended())),
        }
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let key = key.to_string();
        self.call(move |design| design.allow(&key, cost, now))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.call(move |design| design.evict_full(now))
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.call(move |design| design.replace_policy(next, expected_version, now))
    }

    fn key_count(&self) -> usize {
        self.call(|design| design.key_count())
    }

    fn snapshot(&self) -> Option<Snapshot> {
        self.call(|design| design.snapshot())
    }
}

impl<L: Limiter> Drop for Hosted<L> {
    /// Ends the instance (its execution drops it) and waits for the execution to finish, so
    /// that instances never pile up; a design whose drop hangs is caught by the check's
    /// time limit.
    fn drop(&mut self) {
        self.jobs = None;
        let _ = self.why_ended();
    }
}

impl<L: Limiter> std::fmt::Debug for Hosted<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hosted")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::TokenBucket;

    fn policy() -> Policy {
        Policy::new(1, 2, 1).expect("a valid policy")
    }

    #[test]
    fn a_hosted_design_answers_as_the_design_does() {
        let hosted = Hosted::<TokenBucket>::new(policy(), 2).expect("it builds");
        let direct = TokenBucket::new(policy(), 2).expect("it builds");
        for now in [0, 0, 0, 500_000_000, 1_000_000_000] {
            assert_eq!(hosted.allow("k", 1, now), direct.allow("k", 1, now));
        }
        assert_eq!(hosted.allow("", 1, 2), direct.allow("", 1, 2));
        assert_eq!(hosted.key_count(), direct.key_count());
        assert_eq!(hosted.snapshot(), direct.snapshot());
        assert_eq!(
            hosted.replace_policy(policy(), 1, 3),
            direct.replace_policy(policy(), 1, 3)
        );
        assert_eq!(hosted.evict_full(u64::MAX), direct.evict_full(u64::MAX));
    }

    /// Builds, counts no keys, and panics on everything else.
    struct Unwritten;

    impl Limiter for Unwritten {
        fn new(_: Policy, max_keys: usize) -> Result<Self, LimitError> {
            assert!(max_keys != 7, "seven keys are not written yet");
            Ok(Unwritten)
        }
        fn allow(&self, _: &str, _: u64, _: u64) -> Result<Decision, LimitError> {
            panic!("allow is not written yet")
        }
        fn evict_full(&self, _: u64) -> Result<usize, LimitError> {
            panic!("evict_full is not written yet")
        }
        fn replace_policy(&self, _: Policy, _: u64, _: u64) -> Result<(), LimitError> {
            panic!("replace_policy is not written yet")
        }
        fn key_count(&self) -> usize {
            0
        }
    }

    #[test]
    fn a_design_panic_comes_back_with_its_message_and_the_instance_answers_on() {
        let hosted = Hosted::<Unwritten>::new(policy(), 1).expect("it builds");
        assert_eq!(
            guarded(|| hosted.allow("k", 1, 0)).err().as_deref(),
            Some("allow is not written yet")
        );
        assert_eq!(hosted.key_count(), 0);
        assert_eq!(
            guarded(|| Hosted::<Unwritten>::new(policy(), 7))
                .err()
                .as_deref(),
            Some("seven keys are not written yet")
        );
    }

    #[test]
    fn a_refusal_to_build_is_returned() {
        assert_eq!(
            Hosted::<TokenBucket>::new(policy(), 0).err(),
            TokenBucket::new(policy(), 0).err()
        );
    }
}
