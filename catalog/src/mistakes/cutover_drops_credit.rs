//! The cutover re-dates every bucket to the cutover time and clamps it, but does not refill
//! it first: the credit earned since each bucket's last update is lost.
//!
//! - **Breaks:** R4 / I4. Time before the cutover earns nothing at all, instead of earning at
//!   the old rate; a caller that was refilling loses its progress whenever an administrator
//!   changes the policy, even to the same rate. Buckets touched at the cutover instant, and
//!   the clamp, are exact.
//! - **Seed mistake:** "At cutover refill under the old rate, clamp to the new capacity, then
//!   use the new rate." (the refill left out); I4 "old policy earns all pre-cutover credit";
//!   worked example: one token at the cutover, not zero.
//! - **Smallest scenario:** the seed's worked example: capacity 10, rate 2, `allow(k, 10, 0)`,
//!   cutover to capacity 20, rate 4 at 0.5 s, then `allow(k, 1, 0.5 s)`: the reference has one
//!   token and passes, this design has none (retry 250 ms).
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, State};

/// Token bucket whose cutover re-dates buckets without refilling them.
#[derive(Debug)]
pub struct CutoverDropsCredit {
    state: Mutex<State>,
}

impl Limiter for CutoverDropsCredit {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(CutoverDropsCredit {
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
        let new_ceiling = ceiling(&next);
        for bucket in s.buckets.values_mut() {
            // FLAW: the stored units, not refilled to `now` under the old policy, are dated
            // `now`; the reference stores `refilled(bucket, old, now).min(new_ceiling)`.
            *bucket = BucketState {
                units: bucket.units.min(new_ceiling),
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

    const HALF: u64 = 500_000_000;

    /// The seed's worked example: rate 2 → 4 and capacity 10 → 20 at 0.5 s.
    fn two_to_four<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.replace_policy(policy(2, 20, 4), 1, HALF).unwrap();
        l.allow("k", 1, HALF)
    }

    #[test]
    fn the_half_second_before_the_cutover_earns_nothing() {
        assert_eq!(two_to_four::<TokenBucket>(), ok(true, 0, 0));
        assert_eq!(
            two_to_four::<CutoverDropsCredit>(),
            ok(false, 0, 250_000_000),
            "no token at the cutover instead of one"
        );
    }
}
