//! A hang and a panicking `Drop`, in every mode: each fails the checks it happens in, with
//! the call named or the panic's message, and every other check still runs and reports.
//! `tests/isolation.rs` (std), `tests/shuttle.rs` and `tests/loom.rs` call these.
use std::time::Duration;

use ratelimit_lab::suite::{grade, run_check_within, Status, CHECKS};
use ratelimit_lab::{Decision, LimitError, Limiter, Policy, Snapshot};
use ratelimit_lab_reference::TokenBucket;

/// The reference, whose `evict_full` never returns (it sleeps, which no backend sees as a
/// deadlock: only the call's time limit can tell).
#[derive(Debug)]
pub struct EvictionNeverReturns(TokenBucket);

impl Limiter for EvictionNeverReturns {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(EvictionNeverReturns)
    }
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.0.allow(key, cost, now)
    }
    fn evict_full(&self, _now: u64) -> Result<usize, LimitError> {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected, now)
    }
    fn key_count(&self) -> usize {
        self.0.key_count()
    }
    fn snapshot(&self) -> Option<Snapshot> {
        self.0.snapshot()
    }
}

/// The reference, whose `Drop` panics (as a lock-free design that frees a node twice would,
/// or one whose free loom reports as a causality violation).
#[derive(Debug)]
pub struct DropPanics(TokenBucket);

impl Limiter for DropPanics {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(DropPanics)
    }
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.0.allow(key, cost, now)
    }
    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.0.evict_full(now)
    }
    fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected, now)
    }
    fn key_count(&self) -> usize {
        self.0.key_count()
    }
    fn snapshot(&self) -> Option<Snapshot> {
        self.0.snapshot()
    }
}

impl Drop for DropPanics {
    fn drop(&mut self) {
        panic!("retired node freed twice");
    }
}

/// A call that never returns fails its check within the limit, and the failure names it.
pub fn a_call_that_never_returns_is_named_within_the_limit() {
    let started = std::time::Instant::now();
    let r = run_check_within::<EvictionNeverReturns>(
        "r3_evict_full_drops_only_full_buckets",
        Duration::from_secs(2),
        &[],
    );
    let Status::TimedOut {
        limit_secs, call, ..
    } = &r.status
    else {
        panic!("expected a timeout, got {:?}", r.status)
    };
    assert_eq!(*limit_secs, 2);
    assert!(call.starts_with("evict_full(at "), "{call}");
    // The poll is 0.2 s; a loaded machine may add more, never the check's whole search.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let text = r.explain("x");
    assert!(text.contains("did not return within 2 s"), "{text}");
}

/// A design whose `Drop` panics fails every check that drops an instance, with the panic's
/// message, and every check of the suite reports: the process did not end.
pub fn a_panicking_drop_fails_its_checks_and_every_check_reports() {
    let report = grade::<DropPanics>(&[]);
    assert_eq!(report.results.len(), CHECKS.len());
    let mut named = 0;
    for (name, r) in &report.results {
        assert!(
            !r.passed(),
            "{name} passed, yet every instance panics when dropped"
        );
        if let Status::Failed(f) = &r.status {
            if f.summary.contains("retired node freed twice") {
                named += 1;
            }
        }
    }
    assert!(
        named * 2 > CHECKS.len(),
        "most checks name the panic: {named} of {}",
        CHECKS.len()
    );
}
