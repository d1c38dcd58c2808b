//! `allow` checks the key bound before the time: a new key arriving with a stale time at a
//! full map is told `KeyCapacityReached` instead of `TimeWentBackwards`.
//!
//! - **Breaks:** R1 / none. When both errors apply, the contract's order (key, cost, time,
//!   then key capacity) returns the time error; this design returns the capacity error. No
//!   state changes either way; only which error wins differs.
//! - **Seed mistake:** "Validate cost and key before reading time. New keys check capacity."
//!   (the capacity check moved before the time check); `validateTime(now)` precedes
//!   `buckets.size() == maxKeys` in the seed's `allow`.
//! - **Smallest scenario:** `max_keys` 1: `allow(a, 1, 10)`, then `allow(b, 1, 5)`: the
//!   reference returns `TimeWentBackwards { now: 5, observed: 10 }`, this design
//!   `KeyCapacityReached { max_keys: 1 }`.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that checks the key bound before the time.
#[derive(Debug)]
pub struct KeyCapacityBeforeTime {
    state: Mutex<State>,
}

impl Limiter for KeyCapacityBeforeTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(KeyCapacityBeforeTime {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        // FLAW: the key bound before the time; the reference checks the time first.
        if !s.buckets.contains_key(key) && s.buckets.len() >= s.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: s.max_keys,
            });
        }
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
    use crate::mistakes::base::test_support::limiter;
    use ratelimit_lab_reference::TokenBucket;

    fn stale_new_key<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 1);
        l.allow("a", 1, 10).unwrap();
        l.allow("b", 1, 5)
    }

    #[test]
    fn the_capacity_error_wins_over_the_time_error() {
        assert_eq!(
            stale_new_key::<TokenBucket>(),
            Err(LimitError::TimeWentBackwards {
                now: 5,
                observed: 10
            })
        );
        assert_eq!(
            stale_new_key::<KeyCapacityBeforeTime>(),
            Err(LimitError::KeyCapacityReached { max_keys: 1 })
        );
    }
}
