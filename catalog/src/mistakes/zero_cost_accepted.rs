//! The cost check rejects only costs above the capacity: a cost of 0 is served as a free
//! request.
//!
//! - **Breaks:** R1 / none. `allow(k, 0, t)` is allowed (and refills and dates the bucket, and
//!   may create a key) instead of returning `InvalidCost`. Every valid request is exact.
//! - **Seed mistake:** "capacity, tokensPerSecond and request cost are positive longs." with
//!   "`cost < 1 || cost > policy.capacity()`" (the lower bound left out); "Validate identity,
//!   cost and elapsed time".
//! - **Smallest scenario:** `allow(k, 0, 0)`: the reference returns
//!   `InvalidCost { cost: 0, capacity: 10 }`, this design allows it with 10 tokens left.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that accepts a cost of 0.
#[derive(Debug)]
pub struct ZeroCostAccepted {
    state: Mutex<State>,
}

impl Limiter for ZeroCostAccepted {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(ZeroCostAccepted {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        // FLAW: only the upper bound; the reference also refuses `cost == 0`.
        let capacity = s.policy.capacity();
        if cost > capacity {
            return Err(LimitError::InvalidCost { cost, capacity });
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn free_request<L: Limiter>() -> (Result<Decision, LimitError>, usize) {
        let l: L = limiter(10, 2, 8);
        (l.allow("k", 0, 0), l.key_count())
    }

    #[test]
    fn a_cost_of_zero_is_served() {
        assert_eq!(
            free_request::<TokenBucket>(),
            (
                Err(LimitError::InvalidCost {
                    cost: 0,
                    capacity: 10
                }),
                0
            )
        );
        assert_eq!(
            free_request::<ZeroCostAccepted>(),
            (ok(true, 10, 0), 1),
            "allowed, and the key is tracked"
        );
    }
}
