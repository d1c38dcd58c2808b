//! The key bound is checked with `>` instead of `>=`: the map takes one key more than
//! `max_keys` before it refuses.
//!
//! - **Breaks:** R3 / I3. `key_count()` reaches `max_keys + 1`; the key that should have got
//!   `KeyCapacityReached` is tracked and served a full bucket. Every bucket is exact.
//! - **Seed mistake:** "At maxKeys, a new key is rejected with an explicit capacity error."
//!   (one past it); I3 "The map contains at most maxKeys".
//! - **Smallest scenario:** `max_keys` 1: `allow(a, 1, 0)`, then `allow(b, 1, 0)`: the
//!   reference returns `KeyCapacityReached { max_keys: 1 }`, this design allows it and tracks
//!   two keys; a third key is refused.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose key bound is one too large.
#[derive(Debug)]
pub struct OneKeyOverBound {
    state: Mutex<State>,
}

impl Limiter for OneKeyOverBound {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(OneKeyOverBound {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &s.policy, now),
            // FLAW: `>`; the reference refuses a new key once `len >= max_keys`.
            None if s.buckets.len() > s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                })
            }
            None => ceiling(&s.policy),
        };
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

    fn three_keys<L: Limiter>() -> (Vec<Result<Decision, LimitError>>, usize) {
        let l: L = limiter(10, 2, 1);
        let outcomes = ["a", "b", "c"].map(|k| l.allow(k, 1, 0)).to_vec();
        (outcomes, l.key_count())
    }

    #[test]
    fn one_key_more_than_the_bound_is_tracked() {
        let full = Err(LimitError::KeyCapacityReached { max_keys: 1 });
        assert_eq!(
            three_keys::<TokenBucket>(),
            (vec![ok(true, 9, 0), full.clone(), full.clone()], 1)
        );
        assert_eq!(
            three_keys::<OneKeyOverBound>(),
            (vec![ok(true, 9, 0), ok(true, 9, 0), full], 2)
        );
    }
}
