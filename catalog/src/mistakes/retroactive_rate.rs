//! Policy change swaps the policy and nothing else: buckets are not settled at the cutover,
//! so the new rate is applied to time that passed under the old one.
//!
//! - **Breaks:** R4 / I4. Time before the cutover earns at the new rate and up to the new
//!   capacity on the next refill. A faster rate credits tokens never earned; a slower one
//!   takes credit back. A capacity decrease also leaves stored balances above the new
//!   ceiling (I1) until the next touch, which a snapshot shows.
//! - **Seed mistake:** counterexample "Changing rate two→four at 0.5s incorrectly credits two
//!   tokens instead of the one earned under the old rate."
//! - **Smallest scenario:** the seed's worked example: capacity 10, rate 2, `allow(k, 10, 0)`,
//!   cutover to capacity 20, rate 4 at 0.5 s, then `allow(k, 1, 0.5 s)`. The reference has one
//!   token and leaves 0; this design has two and leaves 1.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket whose cutover does not settle the buckets under the old policy.
#[derive(Debug)]
pub struct RetroactiveRate {
    state: Mutex<State>,
}

impl Limiter for RetroactiveRate {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RetroactiveRate {
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
        // FLAW: no bucket is refilled under the old policy (nor clamped to the new capacity)
        // before the swap. The reference settles every bucket to `now` first.
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
    fn two_to_four<L: Limiter>() -> (Result<Decision, LimitError>, Result<Decision, LimitError>) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.replace_policy(policy(2, 20, 4), 1, HALF).unwrap();
        (l.allow("k", 1, HALF), l.allow("k", 1, 3 * HALF / 2))
    }

    #[test]
    fn the_new_rate_is_credited_for_old_time() {
        assert_eq!(
            two_to_four::<TokenBucket>(),
            (ok(true, 0, 0), ok(true, 0, 0))
        );
        assert_eq!(
            two_to_four::<RetroactiveRate>(),
            (ok(true, 1, 0), ok(true, 1, 0)),
            "two tokens credited at the cutover instead of one"
        );
    }

    #[test]
    fn a_smaller_capacity_leaves_balances_above_it() {
        let l: RetroactiveRate = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        l.replace_policy(policy(2, 5, 2), 1, 0).unwrap();
        let s = l.snapshot().unwrap();
        assert_eq!(
            s.buckets["k"].units, 9_000_000_000,
            "above the 5-token ceiling"
        );
    }
}
