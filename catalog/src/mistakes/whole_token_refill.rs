//! Refill rounded down to whole tokens on every request, while the bucket's time still moves
//! to `now`: the fraction earned since the last call is thrown away each time.
//!
//! - **Breaks:** R1 / I1. The balance equation loses credit, so a request the refilled budget
//!   covers is refused; a caller that polls faster than one token's refill never passes.
//!   Balances stay in bounds; outcomes show it, and a snapshot shows the lost fraction.
//! - **Seed mistake:** "Drop fractional refill on each request"; failing case: "At rate
//!   two/sec, checking every 250ms always rounds 0.5 to zero." Counterexample: "Round each
//!   refill to whole tokens: repeated calls at quarter-second intervals discard credit and may
//!   starve a caller."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, then `allow(k, 1, t)` at
//!   t = 250, 500, 750, 1000 ms. The reference passes at 500 and 1000 ms; here all four fail.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{ceiling, lock, State};

/// Token bucket whose refill keeps only whole tokens.
#[derive(Debug)]
pub struct WholeTokenRefill {
    state: Mutex<State>,
}

// FLAW: the earning is floored to whole tokens, yet the caller stores `last_nanos = now`, so the
// remainder is never earned. The reference adds `elapsed × rate` units exactly.
fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let elapsed = now.saturating_sub(bucket.last_nanos);
    let earned = u128::from(elapsed) * u128::from(policy.tokens_per_second());
    let unit = u128::from(UNITS_PER_TOKEN);
    (bucket.units + earned / unit * unit).min(ceiling(policy))
}

impl Limiter for WholeTokenRefill {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(WholeTokenRefill {
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
    use crate::mistakes::base::test_support::limiter;
    use ratelimit_lab_reference::TokenBucket;

    /// Spend the burst, then poll one token every quarter second for one second.
    fn quarter_second_polls<L: Limiter>() -> (Vec<bool>, u128) {
        let l: L = limiter(10, 2, 8);
        assert!(l.allow("k", 10, 0).unwrap().allowed);
        let passed = [250, 500, 750, 1000]
            .map(|ms| l.allow("k", 1, ms * 1_000_000).unwrap().allowed)
            .to_vec();
        (passed, l.snapshot().unwrap().buckets["k"].units)
    }

    #[test]
    fn quarter_second_polls_never_pass() {
        assert_eq!(
            quarter_second_polls::<TokenBucket>(),
            (vec![false, true, false, true], 0)
        );
        assert_eq!(
            quarter_second_polls::<WholeTokenRefill>(),
            (vec![false; 4], 0),
            "each poll discards the half token it earned"
        );
    }

    #[test]
    fn a_rejection_keeps_no_half_token() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: WholeTokenRefill = limiter(10, 2, 8);
        for l in [&good as &dyn Limiter, &bad] {
            l.allow("k", 10, 0).unwrap();
            assert!(!l.allow("k", 1, 250_000_000).unwrap().allowed);
        }
        let units = |l: &dyn Limiter| l.snapshot().unwrap().buckets["k"].units;
        assert_eq!((units(&good), units(&bad)), (500_000_000, 0));
    }
}
