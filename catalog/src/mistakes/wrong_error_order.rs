//! Time is checked before the cost: a call with both an impossible cost and a stale time
//! reports `TimeWentBackwards` instead of `InvalidCost`.
//!
//! - **Breaks:** R1 / none: the contract's error order. Every call that is valid, or wrong in
//!   only one way, behaves exactly like the reference; only the combination shows it, and no
//!   state ever differs.
//! - **Seed mistake:** "Validate cost and key before reading time." (the rule broken; the API
//!   fixes the order `InvalidKey`, `InvalidCost`, `TimeWentBackwards`, `KeyCapacityReached`).
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 10)`, then `allow(k, 0, 5)`:
//!   the reference reports `InvalidCost { cost: 0, capacity: 10 }`, this design
//!   `TimeWentBackwards { now: 5, observed: 10 }`.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that validates time before cost.
#[derive(Debug)]
pub struct WrongErrorOrder {
    state: Mutex<State>,
}

impl Limiter for WrongErrorOrder {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(WrongErrorOrder {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        // FLAW: the two checks are swapped; the reference checks the cost first.
        s.check_time(now)?;
        s.check_cost(cost)?;
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

    fn bad_cost_and_stale_time<L: Limiter>(cost: u64) -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 10).unwrap();
        l.allow("k", cost, 5)
    }

    #[test]
    fn time_wins_over_cost() {
        for cost in [0, 11] {
            assert_eq!(
                bad_cost_and_stale_time::<TokenBucket>(cost),
                Err(LimitError::InvalidCost { cost, capacity: 10 })
            );
            assert_eq!(
                bad_cost_and_stale_time::<WrongErrorOrder>(cost),
                Err(LimitError::TimeWentBackwards {
                    now: 5,
                    observed: 10
                })
            );
        }
    }
}
