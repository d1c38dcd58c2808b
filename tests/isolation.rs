//! A design that panics or hangs fails the check it is in, with its message or a timeout,
//! and nothing else: the runner isolates every check.
use std::time::Duration;

use ratelimit_lab::catalog::suspects;
use ratelimit_lab::reference::TokenBucket;
use ratelimit_lab::suite::{run_check, run_check_within, Status};
use ratelimit_lab::{Decision, LimitError, Limiter, Policy};

/// The reference, except that `allow` panics on one key.
#[derive(Debug)]
struct PanicsOnKeyB(TokenBucket);

impl Limiter for PanicsOnKeyB {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(PanicsOnKeyB)
    }
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        assert_ne!(key, "b", "the design gave up on key b");
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
}

/// The reference, except that `evict_full` never returns.
#[derive(Debug)]
struct EvictionHangs(TokenBucket);

impl Limiter for EvictionHangs {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(EvictionHangs)
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
}

#[test]
fn a_panic_fails_only_its_check_with_the_message_and_the_trace() {
    let r = run_check::<PanicsOnKeyB>("r1_new_key_starts_full", suspects());
    let Status::Failed(f) = &r.status else {
        panic!("expected a failure, got {:?}", r.status)
    };
    assert!(f.panicked);
    assert!(
        f.summary.contains("the design gave up on key b"),
        "{}",
        f.summary
    );
    assert_eq!(f.trace.len(), 2, "the trace ends at the panicking step");
    assert_eq!(r.mistake(), None, "a panic resembles no particular mistake");
    let text = r.explain("cargo test -- --exact r1_new_key_starts_full");
    assert!(text.contains("to rerun it: cargo test -- --exact r1_new_key_starts_full"));
    // A check that never touches key "b" is unaffected.
    assert!(run_check::<PanicsOnKeyB>("seed_trace_table", suspects()).passed());
}

#[test]
fn a_hang_times_out_that_check_alone() {
    // The hang never ends, so the limit always strikes; the check that never evicts gets a
    // limit no loaded machine comes near.
    let r = run_check_within::<EvictionHangs>(
        "r3_evict_full_drops_only_full_buckets",
        Duration::from_secs(1),
        suspects(),
    );
    assert_eq!(r.status, Status::TimedOut { limit_secs: 1 });
    assert!(r.explain("x").contains("did not finish within 1 s"));
    let r =
        run_check_within::<EvictionHangs>("seed_trace_table", Duration::from_secs(600), suspects());
    assert!(r.passed(), "{:?}", r.status);
}

#[test]
fn an_unknown_check_is_reported_not_panicked() {
    let r = run_check::<TokenBucket>("r9_no_such_check", suspects());
    let Status::Failed(f) = &r.status else {
        panic!("expected a failure")
    };
    assert!(
        f.summary.contains("r1_fractional_credit_is_kept"),
        "lists the known checks"
    );
}
