//! Refill counts whole milliseconds of elapsed time, while the bucket's time still moves to
//! `now`: the sub-millisecond remainder is thrown away on every call.
//!
//! - **Breaks:** R1 / I1. The balance equation loses up to a millisecond's earning per call,
//!   so a request the exact refill covers is refused at the nanosecond it first should pass
//!   (later, or never for a caller polling often enough). Balances stay in bounds; outcomes
//!   show it, and a snapshot shows the lost credit.
//! - **Seed mistake:** "Store tokens in billionths so nanosecond elapsed time times an integer
//!   rate has an exact representation." (elapsed truncated to milliseconds); change exercise:
//!   "Ceiling(1e9/3)=333333334ns. The preceding nanosecond is insufficient."
//! - **Smallest scenario:** capacity 1, rate 3: `allow(k, 1, 0)`, then `allow(k, 1, 333333334)`:
//!   the reference passes (1 000 000 002 units, a full token), this design refuses (333 ms earn 999 000 000).
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, State};

/// Nanoseconds in the millisecond this design counts in.
const NANOS_PER_MILLI: u64 = 1_000_000;

/// Token bucket whose refill counts whole milliseconds.
#[derive(Debug)]
pub struct MillisecondRefill {
    state: Mutex<State>,
}

// FLAW: the elapsed time is truncated to whole milliseconds, yet the caller stores
// `last_nanos = now`, so the remainder is never earned. The reference multiplies the exact
// elapsed nanoseconds by the rate.
fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let millis = now.saturating_sub(bucket.last_nanos) / NANOS_PER_MILLI;
    let earned =
        u128::from(millis) * u128::from(NANOS_PER_MILLI) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(ceiling(policy))
}

impl Limiter for MillisecondRefill {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(MillisecondRefill {
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

    /// The change exercise: capacity 1, rate 3, the first nanosecond that should pass.
    fn first_pass<L: Limiter>() -> (bool, u128) {
        let l: L = limiter(1, 3, 8);
        l.allow("k", 1, 0).unwrap();
        let passed = l.allow("k", 1, 333_333_334).unwrap().allowed;
        (passed, l.snapshot().unwrap().buckets["k"].units)
    }

    #[test]
    fn the_last_millisecond_fraction_is_lost() {
        assert_eq!(first_pass::<TokenBucket>(), (true, 0));
        assert_eq!(
            first_pass::<MillisecondRefill>(),
            (false, 999_000_000),
            "333 ms earn 0.999 token"
        );
    }
}
