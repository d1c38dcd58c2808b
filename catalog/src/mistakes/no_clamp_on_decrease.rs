//! The cutover refills each bucket under the old policy but does not clamp it to a smaller
//! new capacity, so stored balances sit above the new ceiling.
//!
//! - **Breaks:** I1 / R4. After a capacity decrease a stored balance exceeds
//!   `capacity × 10⁹`. Every read re-clamps through the refill, so no outcome ever differs
//!   from the reference: only a white-box check of the stored state (a snapshot's I1 bound)
//!   catches it. A design whose refill did not clamp on read would leak the excess.
//! - **Seed mistake:** "At cutover refill under the old rate, clamp to the new capacity, then
//!   use the new rate." (the clamp left out); I4 "existing budgets are clamped".
//! - **Smallest scenario:** capacity 10: `allow(k, 1, 0)` (9 tokens), cutover to capacity 5
//!   at 0: the reference stores 5 tokens for k, this design 9.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{lock, refilled, State};

/// Token bucket whose cutover never clamps to a smaller capacity.
#[derive(Debug)]
pub struct NoClampOnDecrease {
    state: Mutex<State>,
}

impl Limiter for NoClampOnDecrease {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(NoClampOnDecrease {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
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
        let mut s = lock(&self.state);
        s.check_time(now)?;
        s.check_version(&next, expected_version)?;
        let old = s.policy;
        for bucket in s.buckets.values_mut() {
            // FLAW: no `.min(ceiling(&next))`; the reference clamps to the new ceiling.
            *bucket = BucketState {
                units: refilled(bucket, &old, now),
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
    use crate::mistakes::base::test_support::{limiter, policy};
    use ratelimit_lab_reference::TokenBucket;

    fn lower_the_capacity<L: Limiter>() -> (Vec<Result<Decision, LimitError>>, u128) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        l.replace_policy(policy(2, 5, 2), 1, 0).unwrap();
        let stored = l.snapshot().unwrap().buckets["k"].units;
        let later = [(5, 0), (1, 250_000_000), (1, 500_000_000)];
        (
            later.map(|(cost, now)| l.allow("k", cost, now)).to_vec(),
            stored,
        )
    }

    #[test]
    fn the_stored_balance_exceeds_the_new_ceiling_while_outcomes_agree() {
        let (good, good_units) = lower_the_capacity::<TokenBucket>();
        let (bad, bad_units) = lower_the_capacity::<NoClampOnDecrease>();
        assert_eq!(
            (good_units, bad_units),
            (5_000_000_000, 9_000_000_000),
            "I1: at most 5e9"
        );
        assert_eq!(bad, good, "every read re-clamps, so no outcome differs");
    }
}
