//! Runs one check in isolation: on its own thread, with a time limit, with panics caught, so
//! that a panicking or hanging design fails that check and nothing else.
use crate::suite::host::subject::Subject;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::Limiter;

use crate::suite::checks::table::{dispatch, find, CheckInfo, Kind};
use crate::suite::core::cause::Cause;
use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::core::panics::guarded;
use crate::suite::diagnose::suspects::{diagnose, Suspect};
use crate::suite::host::runtime::in_execution;
use crate::suite::oracle::broken_requirement::broken_requirement;
use crate::suite::run::wait::{wait_for_check, waits, Waited, BACKSTOP};
use crate::suite::search::explorer::{replay_subject, set_current_check};

/// How a check ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// The design did what the check guards.
    Passed,
    /// The design broke what the check guards.
    Failed(Failure),
    /// A call into the design did not return within the time limit: the design hangs.
    TimedOut {
        /// The limit, in seconds.
        limit_secs: u64,
        /// The call that had not returned, in words (`allow("k", cost 1, at 0 ns)`); empty
        /// when no call was in flight (the check as a whole ran past its backstop).
        #[serde(skip_serializing_if = "String::is_empty")]
        call: String,
        /// The check's threads blocked in a lock, condition variable or channel of
        /// [`sync`](crate::sync) when the limit passed, one sentence each (real threads only:
        /// shuttle and loom report a deadlock themselves, as a failure).
        waiting: Vec<String>,
    },
}

/// One check's result.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// The check.
    pub check: CheckInfo,
    /// How it ended.
    pub status: Status,
    /// Wall time it took.
    pub elapsed: Duration,
    /// What the check's own searches covered (concurrency checks), and whether the budget
    /// ended one early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::suite::core::budget::Coverage>,
}

impl CheckResult {
    /// The seed mistake the failure's evidence singles out (see [`Report::diagnosis`]):
    /// never the check's own label by default, since a check fails for more than one mistake.
    ///
    /// [`Report::diagnosis`]: crate::suite::report::results::Report::diagnosis
    pub fn mistake(&self) -> Option<crate::Mistake> {
        match &self.status {
            Status::Failed(f) if !f.panicked => f.mistake,
            _ => None,
        }
    }

    /// `true` when the check passed.
    pub fn passed(&self) -> bool {
        self.status == Status::Passed
    }

    /// Points earned: all of the check's or none.
    pub fn score(&self) -> u32 {
        if self.passed() {
            self.check.points
        } else {
            0
        }
    }

    /// The invariant to name beside the requirement: for a failure whose cause is known, the
    /// one that cause breaks (none for a wrong answer such as a retry estimate); otherwise
    /// the one the check guards.
    pub fn invariant(&self) -> Option<crate::Invariant> {
        match &self.status {
            Status::Failed(Failure {
                cause: Some(cause), ..
            }) => cause.breaks,
            _ => self.check.invariant,
        }
    }

    /// The requirement its failure is filed under: for a failure with a sequential trace, the
    /// requirement of the step where the design first differs from the specification (a retry
    /// estimate found by a cutover check is R1's, a version guard found by an R1 check is
    /// R4's); otherwise, and for a check that passed, the requirement the check guards.
    pub fn requirement(&self) -> crate::Requirement {
        match &self.status {
            Status::Failed(f) if !f.panicked => f
                .replay
                .as_ref()
                .and_then(|trace| broken_requirement(trace, f.cause.as_ref()))
                .unwrap_or(self.check.requirement),
            _ => self.check.requirement,
        }
    }

    /// The cause of its failure, when it failed with a known one.
    pub fn cause(&self) -> Option<&crate::suite::core::cause::Cause> {
        match &self.status {
            Status::Failed(f) => f.cause.as_ref(),
            _ => None,
        }
    }

    /// The full explanation for a person: what is guarded, what broke, the minimal trace, the
    /// seed mistake and hint, and `rerun`, the command that runs just this check.
    pub fn explain(&self, rerun: &str) -> String {
        let c = &self.check;
        let invariant = self.invariant();
        let requirement = self.requirement();
        let mut out = format!(
            "{} ({}{}): {}\n  {}: {}\n",
            c.name,
            requirement,
            invariant.map(|i| format!(", {i}")).unwrap_or_default(),
            match self.status {
                Status::Passed => "passed",
                Status::Failed(_) => "FAILED",
                Status::TimedOut { .. } => "TIMED OUT",
            },
            requirement,
            requirement.text()
        );
        if let Some(i) = invariant {
            out.push_str(&format!("  {i}: {}\n", i.text()));
        }
        out.push_str(&format!("  checks: {}\n", c.guards));
        if requirement != c.requirement {
            out.push_str(&format!(
                "  filed under {requirement}: the step where the design differs is {requirement}'s, \
                 though the check is one of {}'s\n",
                c.requirement
            ));
        }
        out.push('\n');
        match &self.status {
            Status::Passed => {}
            Status::Failed(f) => {
                out.push_str(&f.to_string());
                if f.mistake.is_none() && !f.panicked {
                    out.push_str(&requirement_hint(requirement));
                }
            }
            Status::TimedOut {
                limit_secs, call, ..
            } if call.is_empty() => out.push_str(&format!(
                "the check did not finish within {} s although every call into the design returned within its limit of {limit_secs} s: the design's calls are slow, or the check's own work on their answers is, and this report cannot tell which (raise {} to allow more; a check whose own work runs long is the harness's defect, please report it)\n",
                limit_secs.saturating_mul(BACKSTOP),
                env::TIMEOUT
            )),
            Status::TimedOut {
                limit_secs,
                call,
                waiting,
            } if waiting.is_empty() => out.push_str(&format!(
                "{call} did not return within {limit_secs} s, and none of the check's threads waits in a lock, condition variable or channel of ratelimit_lab::sync: the design runs in an endless loop there, or waits on something else\n"
            )),
            Status::TimedOut {
                limit_secs,
                call,
                waiting,
            } => {
                out.push_str(&format!(
                    "{call} did not return within {limit_secs} s: the design hangs. The check's threads blocked then:\n"
                ));
                for w in waiting {
                    out.push_str(&format!("  {w}\n"));
                }
                let any = |text: &str| waiting.iter().any(|w| w.contains(text));
                if any(", which it holds itself") {
                    out.push_str("A thread waiting on a lock it holds itself took it twice: std's locks are not reentrant (release the guard first, or pass the guarded state to the inner call).\n");
                }
                if any(", held by thread") || any(", held by an unnamed thread") {
                    out.push_str("Threads waiting on locks that other waiting threads hold wait on each other: locks taken in different orders (take them in one order everywhere), or a lock held while waiting for something else (release it first).\n");
                }
                if any(" waits in Receiver::recv ") {
                    out.push_str("A thread waiting in Receiver::recv waits for a message that no thread sends: the thread meant to answer has stopped, or waits itself.\n");
                }
                if any(", held by a thread that is not waiting here") {
                    out.push_str("A lock held by a thread that is not waiting was never released: a guard kept alive (stored, forgotten, or held across a loop that never ends).\n");
                }
            }
        }
        if let Some(coverage) = self
            .coverage
            .filter(crate::suite::core::budget::Coverage::was_cut_short)
        {
            out.push_str(&format!("\n{coverage}\n"));
        }
        if !self.passed() {
            out.push_str(&format!("\nto rerun it: {rerun}\n"));
        }
        crate::suite::core::failure::fitted(&out)
    }
}

/// The requirement's hint, wrapped, for a failure that names no mistake.
fn requirement_hint(requirement: crate::Requirement) -> String {
    format!(
        "{}\n",
        crate::suite::core::failure::wrapped(
            &format!("hint ({requirement}): {}", requirement.hint()),
            crate::suite::core::failure::HINT_WIDTH,
            "      "
        )
    )
}

/// Runs the check called `name` on `L`, isolated on its own thread and limited to
/// [`env::TIMEOUT`](crate::suite::core::env::TIMEOUT) seconds. A sequential failure is replayed on
/// `suspects` to name the mistake it resembles (pass `&[]` for no diagnosis).
///
/// An unknown name fails with a message listing the known ones; a panic anywhere in the
/// check fails it with the panic's message.
pub fn run_check<L: Limiter>(name: &str, suspects: &[Suspect]) -> CheckResult {
    run_subject(Subject::of::<L>(), name, env::timeout(), suspects)
}

/// [`run_check`] with an explicit time limit instead of the environment's.
pub fn run_check_within<L: Limiter>(
    name: &str,
    limit: Duration,
    suspects: &[Suspect],
) -> CheckResult {
    run_subject(Subject::of::<L>(), name, limit, suspects)
}

/// [`run_check_within`] on a design given as a [`Subject`].
pub(crate) fn run_subject(
    subject: Subject,
    name: &str,
    limit: Duration,
    suspects: &[Suspect],
) -> CheckResult {
    let Some(check) = find(name) else {
        let known: Vec<&str> = crate::suite::checks::table::CHECKS
            .iter()
            .map(|c| c.name)
            .collect();
        return CheckResult {
            check: crate::suite::checks::table::CHECKS[0],
            status: Status::Failed(Failure::new(format!(
                "there is no check called {name:?}; the checks are: {}",
                known.join(", ")
            ))),
            elapsed: Duration::ZERO,
            coverage: None,
        };
    };
    let started = Instant::now();
    let (tx, rx) = mpsc::channel::<Done>();
    let owned = check.name;
    let check_kind = check.kind;
    let group = waits::group_name(owned);
    let member = group.clone();
    let calls = crate::suite::core::watch::new_group();
    let spawned = thread::Builder::new()
        .name(format!("check {owned}"))
        .spawn(move || {
            let _member = waits::join(&member);
            let _calls = crate::suite::core::watch::adopt(calls);
            crate::suite::core::budget::begin(env::budget());
            crate::suite::core::quiet_panics::begin();
            // A sequential check runs inside an execution of the controlled backend (the
            // design's locks belong to it); a concurrency check explores on its own.
            set_current_check(owned);
            let result = if check_kind == Kind::Concurrency {
                match crate::suite::search::counterexample::requested(owned) {
                    Some(Ok((cx, file))) => guarded(|| Some(replay_subject(subject, &cx, &file))),
                    Some(Err(failure)) => Ok(Some(Err(failure))),
                    None => guarded(|| dispatch(subject, owned)),
                }
            } else {
                sequential(subject, owned)
            };
            let place = crate::suite::core::quiet_panics::end();
            let coverage = crate::suite::core::budget::end();
            let _ = tx.send((result, place, coverage));
        });
    let mut coverage = None;
    let status = match spawned {
        Err(e) => Status::Failed(Failure::new(format!(
            "could not start the check's thread: {e}"
        ))),
        Ok(_) => match wait_for_check(&rx, calls, limit, started) {
            Ok((result, place, covered)) => {
                coverage = covered;
                let status = match result {
                    Ok(Some(Ok(()))) => Status::Passed,
                    Ok(Some(Err(failure))) => Status::Failed(failure),
                    Ok(None) => {
                        Status::Failed(Failure::new(format!("there is no check called {owned:?}")))
                    }
                    Err(msg) => Status::Failed(
                        Failure::new(format!("the design panicked: {msg}")).as_panic(),
                    ),
                };
                match (status, place) {
                    (Status::Failed(f), Some(place)) if f.panicked => {
                        // Panics at one place are one slip, whichever call reached it and
                        // whatever its message says.
                        let cause = Cause::new(format!("the design panics at {place}"));
                        Status::Failed(f.with_panic_place(&place).because(cause))
                    }
                    (status, _) => status,
                }
            }
            Err(Waited::Hung(call)) => Status::TimedOut {
                limit_secs: limit.as_secs(),
                call,
                waiting: waits::waiting(&group),
            },
            Err(Waited::Ended) => {
                Status::Failed(Failure::new("the check's thread ended without a result"))
            }
        },
    };
    // A panic in the design's `Drop` was caught (it would have aborted the process while
    // another panic unwound); it fails the check that met it.
    let status = match (
        status,
        crate::suite::core::watch::drop_panics(calls).first(),
    ) {
        (Status::Passed, Some(why)) => {
            Status::Failed(Failure::new(format!("the design's Drop panicked: {why}")).as_panic())
        }
        (status, _) => status,
    };
    let status = match status {
        // The suspects are designs too: under shuttle and loom their locks belong to the
        // controlled backend, so the replay runs inside one execution. The diagnosis also
        // runs the design itself (the battery of `behaviour`), which may hang where no check
        // reached yet: it gets its own thread and the check's time limit, and without an
        // answer in time the failure stands undiagnosed.
        Status::Failed(failure) => {
            let (list, kept) = (suspects.to_vec(), failure.clone());
            let design = subject.builder();
            let (tx, rx) = mpsc::channel();
            let spawned = thread::Builder::new()
                .name(format!("diagnosis of {owned}"))
                .spawn(move || {
                    crate::suite::core::quiet_panics::begin();
                    let _ = tx.send(in_execution(move || diagnose(failure, &list, design)));
                    crate::suite::core::quiet_panics::end();
                });
            match spawned.ok().and_then(|_| rx.recv_timeout(limit).ok()) {
                Some(Ok(diagnosed)) => Status::Failed(diagnosed),
                _ => Status::Failed(kept),
            }
        }
        other => other,
    };
    CheckResult {
        check: *check,
        status,
        elapsed: started.elapsed(),
        coverage,
    }
}

/// What a check's thread sends when it is done: its result, the place of its first panic,
/// and what its searches covered.
type Done = (
    Dispatched,
    Option<String>,
    Option<crate::suite::core::budget::Coverage>,
);

/// What a sequential check's dispatch returns, or the panic that ended it.
type Dispatched = Result<Option<Result<(), Failure>>, String>;

/// Runs the sequential check `name`; a fixed scenario's failure comes with its trace shrunk
/// (see [`minimal`](crate::suite::oracle::minimal)).
fn dispatch_minimal(subject: Subject, name: &str) -> Option<Result<(), Failure>> {
    let result = dispatch(subject, name)?;
    let scenario = find(name).is_some_and(|c| c.kind == Kind::Scenario);
    Some(match result {
        Err(failure) if scenario => Err(crate::suite::oracle::minimal::shrunk(subject, failure)),
        other => other,
    })
}

/// Runs the sequential check `name` inside an execution of the backend (directly under
/// std).
#[cfg(not(loom))]
fn sequential(subject: Subject, name: &'static str) -> Dispatched {
    guarded(|| in_execution(move || dispatch_minimal(subject, name))).and_then(|r| r)
}

/// Under loom, inside one execution as under shuttle; but loom allows five threads per
/// execution in all, so when a design that spawns threads (an actor, one per instance) runs
/// out of them there, the check runs again with each instance in an execution of its own
/// ([`Hosted`](crate::suite::host::hosted::Hosted)), which costs a thread hand-off per call. Only loom
/// limits threads, so only loom builds compile the hosted variant.
#[cfg(loom)]
fn sequential(subject: Subject, name: &'static str) -> Dispatched {
    let once = quiet_about_thread_limit(|| {
        guarded(|| in_execution(move || dispatch_minimal(subject, name))).and_then(|r| r)
    });
    if out_of_threads(&once) {
        // The thread limit's assertion was the first panic: the place kept is the design's.
        crate::suite::core::quiet_panics::forget_place();
        guarded(|| dispatch_minimal(subject.hosted(), name))
    } else {
        once
    }
}

/// Loom's assertion when an execution starts a thread beyond its limit.
#[cfg(loom)]
const LOOM_THREAD_LIMIT: &str = "self.threads.len() < self.max()";

/// Runs `f` on the calling thread without the panic hook printing loom's thread-limit
/// assertion: that panic is the signal to host the instances, not the design's fault, and
/// the suite reports every other panic itself. Other panics, and panics on other threads,
/// reach the hook that was there before.
#[cfg(loom)]
fn quiet_about_thread_limit<T>(f: impl FnOnce() -> T) -> T {
    use std::cell::Cell;
    use std::sync::{Arc, Once};
    std::thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static FILTER: Once = Once::new();
    FILTER.call_once(|| {
        let before: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
            Arc::from(std::panic::take_hook());
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            let quiet = QUIET.with(Cell::get);
            if !(quiet && text.is_some_and(|t| t.contains(LOOM_THREAD_LIMIT))) {
                before(info);
            }
        }));
    });
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(self.0));
        }
    }
    let _restore = Restore(QUIET.with(|q| q.replace(true)));
    f()
}

/// Whether a sequential check ended on loom's thread limit rather than on the design.
#[cfg(loom)]
fn out_of_threads(result: &Dispatched) -> bool {
    match result {
        Err(panic) => panic.contains(LOOM_THREAD_LIMIT),
        Ok(Some(Err(failure))) => {
            failure.summary.contains(LOOM_THREAD_LIMIT)
                || failure
                    .detail
                    .as_deref()
                    .is_some_and(|d| d.contains(LOOM_THREAD_LIMIT))
        }
        _ => false,
    }
}
