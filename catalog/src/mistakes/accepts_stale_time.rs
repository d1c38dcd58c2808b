//! No time-reversal check: a call older than the last one observed is served, its elapsed time
//! saturating to zero, and the bucket's time is moved *back* to it.
//!
//! - **Breaks:** R1 / I1. The interval between the stale time and the newer one is earned a
//!   second time on the next call, minting tokens, and every stale call that should be an
//!   error is answered. Outcomes show it (an `Ok` where `TimeWentBackwards` is due, then a
//!   request passed on credit nobody earned); a snapshot shows `last_nanos` and the observed
//!   time moving backwards.
//! - **Seed mistake:** counterexample "Two threads sample 100 and 101; the 101 call arrives
//!   first. The older 100 call is rejected instead of silently earning negative credit."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 1 s)`, `allow(k, 1, 0)` (the
//!   reference reports `TimeWentBackwards`; here it is a rejection that stores time 0), then
//!   `allow(k, 2, 1 s)`: the reference rejects (no time passed), this design allows it on two
//!   tokens re-earned for the second it already counted.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket that never checks whether time went backwards.
#[derive(Debug)]
pub struct AcceptsStaleTime {
    state: Mutex<State>,
}

// FLAW: none of the three methods calls `check_time`; the reference rejects `now` below the
// observed time in each of them before changing anything.
impl Limiter for AcceptsStaleTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(AcceptsStaleTime {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        let balance = s.balance(key, now)?;
        Ok(s.decide(key, cost, now, balance))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = lock(&self.state);
        let policy = s.policy;
        let full = ceiling(&policy);
        let before = s.buckets.len();
        s.buckets.retain(|_, b| refilled(b, &policy, now) != full);
        s.observed = now;
        Ok(before - s.buckets.len())
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut s = lock(&self.state);
        s.check_version(&next, expected_version)?;
        let old = s.policy;
        let new_ceiling = ceiling(&next);
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: refilled(bucket, &old, now).min(new_ceiling),
                last_nanos: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        lock(&self.state).buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        Some(lock(&self.state).snapshot())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mistakes::base::test_support::{limiter, ok, policy};
    use ratelimit_lab_reference::TokenBucket;

    const SECOND: u64 = 1_000_000_000;

    fn stale_call_between<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        [(10, SECOND), (1, 0), (2, SECOND)]
            .map(|(cost, now)| l.allow("k", cost, now))
            .to_vec()
    }

    #[test]
    fn a_stale_call_is_served_and_mints_the_interval_again() {
        let backwards = Err(LimitError::TimeWentBackwards {
            now: 0,
            observed: SECOND,
        });
        assert_eq!(
            stale_call_between::<TokenBucket>(),
            [ok(true, 0, 0), backwards, ok(false, 0, SECOND)]
        );
        assert_eq!(
            stale_call_between::<AcceptsStaleTime>(),
            [ok(true, 0, 0), ok(false, 0, 500_000_000), ok(true, 0, 0)],
            "two tokens earned twice"
        );
    }

    #[test]
    fn the_other_methods_accept_stale_time_too() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: AcceptsStaleTime = limiter(10, 2, 8);
        for l in [&good as &dyn Limiter, &bad] {
            l.allow("k", 1, 101).unwrap();
        }
        let next = policy(2, 10, 2);
        assert!(good.evict_full(100).is_err() && good.replace_policy(next, 1, 100).is_err());
        assert_eq!(
            (bad.evict_full(100), bad.replace_policy(next, 1, 100)),
            (Ok(0), Ok(()))
        );
        assert_eq!(
            bad.snapshot().unwrap().observed_nanos,
            100,
            "observed time went back"
        );
    }
}
