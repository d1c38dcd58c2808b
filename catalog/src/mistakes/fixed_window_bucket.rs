//! A fixed window dressed as a token bucket: the balance snaps back to full at every
//! one-second boundary, with no gradual refill in between.
//!
//! - **Breaks:** R1 / I1. Across a boundary a key spends two capacities within one nanosecond,
//!   and inside a window the rate earns nothing. Stored balances stay within I1's bounds, so a
//!   snapshot's bound check passes; outcomes show it.
//! - **Seed mistake:** "Reset the balance every second and call it token bucket"; failing case:
//!   "Ten requests just before and ten just after a window boundary all pass."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 999_999_999)` then
//!   `allow(k, 10, 1_000_000_000)`. Both pass here; the reference rejects the second (it has
//!   earned 2 ns × 2 units, far from ten tokens).
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{ceiling, lock, State};

/// Balance reset to capacity at each whole second instead of refilled by elapsed time.
#[derive(Debug)]
pub struct FixedWindowBucket {
    state: Mutex<State>,
}

// FLAW: "refill" ignores the rate: a bucket last touched in an earlier one-second window comes
// back full, and one touched in this window earns nothing. The reference earns exactly
// `elapsed × rate` units, clamped to the ceiling.
fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    if now / UNITS_PER_TOKEN != bucket.last_nanos / UNITS_PER_TOKEN {
        ceiling(policy)
    } else {
        bucket.units.min(ceiling(policy))
    }
}

impl Limiter for FixedWindowBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(FixedWindowBucket {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow_with(refilled, key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        lock(&self.state).evict_full_with(refilled, now)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        lock(&self.state).replace_policy_with(refilled, next, expected_version, now)
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

    /// Ten unit requests just before the boundary, ten just after, then one at 1.5 s.
    fn boundary<L: Limiter>() -> (usize, usize, bool) {
        let l: L = limiter(10, 2, 8);
        let before = (0..10).filter(|_| l.allow("k", 1, 999_999_999).unwrap().allowed);
        let before = before.count();
        let after = (0..10).filter(|_| l.allow("k", 1, 1_000_000_000).unwrap().allowed);
        let after = after.count();
        (
            before,
            after,
            l.allow("k", 1, 1_500_000_000).unwrap().allowed,
        )
    }

    #[test]
    fn twenty_pass_across_a_boundary_and_none_refill_within_a_window() {
        assert_eq!(boundary::<TokenBucket>(), (10, 0, true));
        assert_eq!(boundary::<FixedWindowBucket>(), (10, 10, false));
    }

    #[test]
    fn half_a_second_earns_nothing_inside_a_window() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: FixedWindowBucket = limiter(10, 2, 8);
        for l in [&good as &dyn Limiter, &bad] {
            assert!(l.allow("k", 10, 0).unwrap().allowed);
        }
        assert_eq!(good.allow("k", 1, 500_000_000), ok(true, 0, 0));
        assert_eq!(bad.allow("k", 1, 500_000_000), ok(false, 0, 500_000_000));
    }
}
