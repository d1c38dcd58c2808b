//! Every rejection answers the largest retry estimate there is, `MAX_QUANTITY`, instead of the
//! wait the refill needs.
//!
//! - **Breaks:** R1 / none. `retry_after_nanos` must be the least wait after which the same
//!   request passes with no competitor; "never" is only right when that wait exceeds the
//!   range. Balances and admissions are exact.
//! - **Seed mistake:** "retryAfter uses ceiling division and saturates rather than
//!   overflowing." (saturating everything); worked example 1: "Second rejected with
//!   retryAfterNanos=500000000."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, then `allow(k, 1, 0)` is
//!   rejected with a retry of 9223372036854775807 ns instead of 500000000 ns.
//! - **Why it is catalogued:** a property that skips rejections whose estimate saturates (they
//!   cannot be retried within range) has nothing left to check on this design; it must fail
//!   for running too few cases, not pass on none.
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
};

use super::base::{lock, State};

/// Token bucket whose every rejection says "retry after `MAX_QUANTITY` ns".
#[derive(Debug)]
pub struct SaturatedRetry {
    state: Mutex<State>,
}

impl Limiter for SaturatedRetry {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(SaturatedRetry {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let decision = lock(&self.state).allow(key, cost, now)?;
        Ok(if decision.allowed {
            decision
        } else {
            Decision {
                // FLAW: the estimate is always the saturated one.
                retry_after_nanos: MAX_QUANTITY,
                ..decision
            }
        })
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

    fn burst_then_one<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 4);
        l.allow("k", 10, 0).unwrap();
        l.allow("k", 1, 0)
    }

    #[test]
    fn the_worked_example_gets_no_finite_estimate() {
        assert_eq!(burst_then_one::<TokenBucket>(), ok(false, 0, 500_000_000));
        assert_eq!(
            burst_then_one::<SaturatedRetry>(),
            ok(false, 0, MAX_QUANTITY)
        );
    }
}
