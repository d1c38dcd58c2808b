//! The bucket is settled (refilled to `now` and saved, observed time raised) before the cost
//! is validated, so a call that fails with `InvalidCost` has already changed the state.
//!
//! - **Breaks:** R1 / none: the rule that an error changes no state. After a failed call
//!   with a later time, a valid call between the two times is refused with
//!   `TimeWentBackwards`; a snapshot also shows the bucket's `last_nanos` moved. Settling
//!   itself is harmless (refill is additive, and settling at `max(now, last)` never moves
//!   time back): the only flaw is doing it before validation, and the error order is
//!   unchanged.
//! - **Seed mistake:** "Reject invalid input or time reversal before mutation." (the rule
//!   broken); "Failures before replacement leave the original map authoritative."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)`, `allow(k, 0, 10)`
//!   (`InvalidCost` in both), `allow(k, 1, 5)`: the reference allows it, this design reports
//!   `TimeWentBackwards` because the failed call raised the observed time to 10.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{lock, refilled, State};

/// Token bucket that settles the bucket before it validates the cost.
#[derive(Debug)]
pub struct ErrorMutatesState {
    state: Mutex<State>,
}

impl Limiter for ErrorMutatesState {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(ErrorMutatesState {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        // FLAW: the bucket and the observed time are brought up to `now` before the cost and
        // time checks, so a failing call still mutates. The reference validates first.
        let policy = s.policy;
        if let Some(bucket) = s.buckets.get_mut(key) {
            let at = now.max(bucket.last_nanos);
            *bucket = BucketState {
                units: refilled(bucket, &policy, at),
                last_nanos: at,
            };
        }
        s.observed = s.observed.max(now);
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        Ok(s.decide(key, cost, now, balance))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        lock(&self.state).evict_full(now)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        lock(&self.state).replace_policy(next, expected_version, now)
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn failed_call_then_earlier_call<L: Limiter>() -> (Vec<Result<Decision, LimitError>>, Snapshot)
    {
        let l: L = limiter(10, 2, 8);
        let outcomes = [(1, 0), (0, 10), (1, 5)].map(|(cost, now)| l.allow("k", cost, now));
        (outcomes.to_vec(), l.snapshot().unwrap())
    }

    #[test]
    fn an_invalid_cost_raises_the_observed_time() {
        let invalid = Err(LimitError::InvalidCost {
            cost: 0,
            capacity: 10,
        });
        let (good, after_good) = failed_call_then_earlier_call::<TokenBucket>();
        let (bad, after_bad) = failed_call_then_earlier_call::<ErrorMutatesState>();
        assert_eq!(good, [ok(true, 9, 0), invalid.clone(), ok(true, 8, 0)]);
        let backwards = Err(LimitError::TimeWentBackwards {
            now: 5,
            observed: 10,
        });
        assert_eq!(bad, [ok(true, 9, 0), invalid, backwards]);
        assert_eq!(
            (after_good.observed_nanos, after_bad.observed_nanos),
            (5, 10)
        );
        assert_eq!(
            after_bad.buckets["k"].last_nanos, 10,
            "the failed call saved the bucket"
        );
    }
}
