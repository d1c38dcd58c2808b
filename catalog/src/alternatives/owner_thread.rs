//! An actor: one owner thread holds all the state, with no lock; every call is a message
//! carrying a channel for its answer.
//!
//! # Why it is linearizable
//!
//! The owner thread takes one request at a time from its inbox and answers it before taking
//! the next, so each call takes effect at one instant between its send and its answer, in
//! the order the inbox received them. Nothing else touches the state. The time check, the
//! key bound, the refill and the cutover are the single-owner state's, applied to one
//! request at a time: the same steps the seed's monitor takes under its lock.
//!
//! # Cost
//!
//! Two channel hand-offs and a wake-up of the owner per call, and every call waits its turn
//! behind every other, as under one lock. One thread per instance, joined when the instance
//! is dropped.
use ratelimit_lab_api::sync::mpsc::{channel, Receiver, Sender};
use ratelimit_lab_api::sync::thread::{self, JoinHandle};
use ratelimit_lab_api::sync::Mutex;
use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy, Snapshot};

use crate::mistakes::base::State;

/// What the owner thread is asked to do; each carries the channel for its answer.
#[derive(Debug)]
enum Request {
    Allow {
        key: String,
        cost: u64,
        now: u64,
        answer: Sender<Result<Decision, LimitError>>,
    },
    EvictFull {
        now: u64,
        answer: Sender<Result<usize, LimitError>>,
    },
    ReplacePolicy {
        next: Policy,
        expected_version: u64,
        now: u64,
        answer: Sender<Result<(), LimitError>>,
    },
    KeyCount {
        answer: Sender<usize>,
    },
    Snapshot {
        answer: Sender<Snapshot>,
    },
    /// End the owner thread. A message rather than the inbox closing: loom's channels never
    /// tell a receiver that every sender is gone.
    Stop,
}

/// A token-bucket limiter whose state lives on one owner thread behind a channel.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::OwnerThread;
///
/// let limiter = OwnerThread::new(Policy::new(1, 1, 1)?, 4)?;
/// assert!(limiter.allow("k", 1, 0)?.allowed);
/// assert!(!limiter.allow("k", 1, 0)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct OwnerThread {
    /// The owner's inbox.
    inbox: Sender<Request>,
    /// The owner thread, joined on drop (behind a lock only because a handle need not be
    /// `Sync` in every backend).
    owner: Mutex<Option<JoinHandle<()>>>,
}

impl OwnerThread {
    /// Sends the request `ask` builds and waits for its answer.
    ///
    /// # Panics
    ///
    /// When the owner thread has ended (before the handle drops, only by panicking).
    fn ask<T>(&self, ask: impl FnOnce(Sender<T>) -> Request) -> T {
        let (answer, answered) = channel();
        let sent = self.inbox.send(ask(answer));
        match (sent, answered.recv()) {
            (Ok(()), Ok(value)) => value,
            _ => panic!("the owner thread has ended"),
        }
    }
}

/// The owner thread: answers each request in arrival order until told to stop.
fn own(mut state: State, requests: Receiver<Request>) {
    while let Ok(request) = requests.recv() {
        // An answer nobody waits for any more is dropped.
        let _ = match request {
            Request::Allow {
                key,
                cost,
                now,
                answer,
            } => answer.send(state.allow(&key, cost, now)).is_ok(),
            Request::EvictFull { now, answer } => answer.send(state.evict_full(now)).is_ok(),
            Request::ReplacePolicy {
                next,
                expected_version,
                now,
                answer,
            } => answer
                .send(state.replace_policy(next, expected_version, now))
                .is_ok(),
            Request::KeyCount { answer } => answer.send(state.buckets.len()).is_ok(),
            Request::Snapshot { answer } => answer.send(state.snapshot()).is_ok(),
            Request::Stop => break,
        };
    }
}

impl Limiter for OwnerThread {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        let state = State::new(policy, max_keys)?;
        let (inbox, requests) = channel();
        let owner = thread::spawn(move || own(state, requests));
        Ok(OwnerThread {
            inbox,
            owner: Mutex::new(Some(owner)),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let key = key.to_owned();
        self.ask(|answer| Request::Allow {
            key,
            cost,
            now,
            answer,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.ask(|answer| Request::EvictFull { now, answer })
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.ask(|answer| Request::ReplacePolicy {
            next,
            expected_version,
            now,
            answer,
        })
    }

    fn key_count(&self) -> usize {
        self.ask(|answer| Request::KeyCount { answer })
    }

    fn snapshot(&self) -> Option<Snapshot> {
        Some(self.ask(|answer| Request::Snapshot { answer }))
    }
}

impl Drop for OwnerThread {
    /// Tells the owner thread to stop after the requests before it, and joins it.
    fn drop(&mut self) {
        let _ = self.inbox.send(Request::Stop);
        let owner = self
            .owner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(owner) = owner {
            let _ = owner.join();
        }
    }
}
