//! A cost above the capacity is treated as an ordinary request that the balance does not
//! cover: it is refused with a retry estimate instead of being an error.
//!
//! - **Breaks:** R1 / none. `allow(k, capacity + 1, t)` returns a rejection whose finite
//!   `retry_after_nanos` promises a wait after which the request would pass, which never
//!   comes (the bucket never holds more than the capacity); it also refills and dates the
//!   bucket, and can create a key. Every valid request is exact.
//! - **Seed mistake:** "Cost above capacity is invalid because the request can never be
//!   admitted; it does not receive a misleading finite retry time." (broken)
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 11, 0)`: the reference returns
//!   `InvalidCost { cost: 11, capacity: 10 }`, this design a rejection with retry
//!   500 000 000 ns.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that refuses an impossible cost instead of reporting it invalid.
#[derive(Debug)]
pub struct OversizedCostRefused {
    state: Mutex<State>,
}

impl Limiter for OversizedCostRefused {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(OversizedCostRefused {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        // FLAW: only the lower bound; a cost above the capacity falls through to the
        // comparison, which refuses it. The reference returns `InvalidCost`.
        if cost == 0 {
            return Err(LimitError::InvalidCost {
                cost,
                capacity: s.policy.capacity(),
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn impossible<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 11, 0)
    }

    #[test]
    fn an_impossible_cost_gets_a_finite_retry() {
        assert_eq!(
            impossible::<TokenBucket>(),
            Err(LimitError::InvalidCost {
                cost: 11,
                capacity: 10
            })
        );
        assert_eq!(
            impossible::<OversizedCostRefused>(),
            ok(false, 10, 500_000_000),
            "a wait after which the bucket still cannot hold 11"
        );
    }
}
