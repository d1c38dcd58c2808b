//! The cutover settles every bucket to the cutover time, but under the *new* policy: the time
//! since each bucket's last update earns at the new rate, up to the new capacity.
//!
//! - **Breaks:** R4 / I4. Credit earned before the cutover is recomputed at the new rate: a
//!   faster rate credits tokens never earned, a slower one takes credit back, and a capacity
//!   raise lets a long-idle bucket fill past the old capacity. Balances are clamped to the
//!   new ceiling, so stored values stay in bounds.
//! - **Seed mistake:** counterexample "Changing rate two→four at 0.5s incorrectly credits two
//!   tokens instead of the one earned under the old rate." ("Refill each bucket with OLD rate
//!   to the cutover time", done with the new one).
//! - **Smallest scenario:** the seed's worked example: capacity 10, rate 2, `allow(k, 10, 0)`,
//!   cutover to capacity 20, rate 4 at 0.5 s, then `allow(k, 1, 0.5 s)`: the reference has one
//!   token and leaves 0, this design has two and leaves 1.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{lock, refilled, State};

/// Token bucket whose cutover settles buckets under the new policy.
#[derive(Debug)]
pub struct CutoverRefillsAtNewRate {
    state: Mutex<State>,
}

impl Limiter for CutoverRefillsAtNewRate {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(CutoverRefillsAtNewRate {
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
        for bucket in s.buckets.values_mut() {
            // FLAW: refilled under `next` (its rate and ceiling); the reference refills under
            // the old policy, then clamps to the new ceiling.
            *bucket = BucketState {
                units: refilled(bucket, &next, now),
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
    fn two_to_four<L: Limiter>() -> (Result<Decision, LimitError>, u128) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.replace_policy(policy(2, 20, 4), 1, HALF).unwrap();
        let stored = l.snapshot().unwrap().buckets["k"].units;
        (l.allow("k", 1, HALF), stored)
    }

    #[test]
    fn the_old_half_second_earns_at_the_new_rate() {
        assert_eq!(
            two_to_four::<TokenBucket>(),
            (ok(true, 0, 0), 1_000_000_000)
        );
        assert_eq!(
            two_to_four::<CutoverRefillsAtNewRate>(),
            (ok(true, 1, 0), 2_000_000_000),
            "two tokens at the cutover instead of one"
        );
    }
}
