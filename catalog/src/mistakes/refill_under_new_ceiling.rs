//! The cutover refills with the old rate but clamps only to the *new* capacity, skipping the
//! old capacity's clamp: a long idle period banks credit beyond the old burst when the
//! capacity grows.
//!
//! - **Breaks:** R4 / I4. Time before the cutover earns up to the new capacity, although under
//!   the old policy the bucket stopped filling at the old one; a capacity raise turns idle
//!   time into a burst the old policy never allowed. Decreases, and raises on buckets that had
//!   not filled yet, are exact.
//! - **Seed mistake:** "Clamp to ceiling so a long idle period cannot bank unlimited burst
//!   credit." with "Historical time is evaluated using the old policy and capacity increase
//!   is not a budget grant."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)` (9 tokens), cutover to
//!   capacity 100 at 60 s: the reference settles k at 10 tokens (full under the old policy),
//!   this design at 100 (9 + 120 earned, clamped to 100); `allow(k, 50, 60 s)` then passes here
//!   only.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, State};

/// Token bucket whose cutover refill is clamped to the new capacity only.
#[derive(Debug)]
pub struct RefillUnderNewCeiling {
    state: Mutex<State>,
}

impl Limiter for RefillUnderNewCeiling {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RefillUnderNewCeiling {
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
        let new_ceiling = ceiling(&next);
        for bucket in s.buckets.values_mut() {
            // FLAW: the old-rate earning is not clamped to the old ceiling first. The reference
            // computes `refilled(bucket, &old, now)` (clamped to the old capacity), then the
            // new clamp.
            let elapsed = now.saturating_sub(bucket.last_nanos);
            let earned = u128::from(elapsed) * u128::from(old.tokens_per_second());
            *bucket = BucketState {
                units: (bucket.units + earned).min(new_ceiling),
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

    const MINUTE: u64 = 60_000_000_000;

    fn raise_after_a_long_idle<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        l.replace_policy(policy(2, 100, 2), 1, MINUTE).unwrap();
        l.allow("k", 50, MINUTE)
    }

    #[test]
    fn idle_time_banks_credit_up_to_the_new_capacity() {
        // The reference holds the old capacity, 10 tokens: 40 short at 2 per second.
        let refused = ok(false, 10, 20_000_000_000);
        assert_eq!(raise_after_a_long_idle::<TokenBucket>(), refused);
        assert_eq!(
            raise_after_a_long_idle::<RefillUnderNewCeiling>(),
            ok(true, 50, 0)
        );
    }
}
