//! The retry estimate divides the shortfall by the rate rounding down, so it can name an
//! instant at which the same request still fails.
//!
//! - **Breaks:** R1 / none. The response's `retry_after_nanos` is not the least wait after
//!   which the request passes: whenever the shortfall is not a multiple of the rate it is one
//!   nanosecond early. Balances and admissions are exact; only the estimate is wrong.
//! - **Seed mistake:** "retryAfter uses ceiling division and saturates rather than
//!   overflowing." (the rule broken); change exercise: "With capacity one and rate three/sec,
//!   calculate the first nanosecond at which a request can pass. ...
//!   Ceiling(1e9/3)=333333334ns. The preceding nanosecond is insufficient."
//! - **Smallest scenario:** capacity 1, rate 3: `allow(k, 1, 0)` twice. The second is
//!   rejected with a retry of 333 333 334 ns in the reference, 333 333 333 ns here; at
//!   333 333 333 ns the request is still rejected.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
};

use super::base::{lock, need, whole_tokens, State};

/// Token bucket whose retry estimate is rounded down.
#[derive(Debug)]
pub struct FloorRetryEstimate {
    state: Mutex<State>,
}

impl Limiter for FloorRetryEstimate {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(FloorRetryEstimate {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        let need = need(cost);
        let (allowed, after, retry_after_nanos) = if balance >= need {
            (true, balance - need, 0)
        } else {
            // FLAW: floor division; the reference uses `div_ceil`.
            let wait = (need - balance) / u128::from(s.policy.tokens_per_second());
            let retry = u64::try_from(wait.min(u128::from(MAX_QUANTITY))).unwrap_or(MAX_QUANTITY);
            (false, balance, retry)
        };
        s.store(key, after, now);
        s.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens: whole_tokens(after),
            retry_after_nanos,
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

    /// Spend the one token, ask again, then retry after exactly the estimate.
    fn retry_on_time<L: Limiter>() -> (Result<Decision, LimitError>, bool) {
        let l: L = limiter(1, 3, 8);
        l.allow("k", 1, 0).unwrap();
        let rejected = l.allow("k", 1, 0);
        let retry = rejected.as_ref().map_or(0, |d| d.retry_after_nanos);
        (rejected, l.allow("k", 1, retry).unwrap().allowed)
    }

    #[test]
    fn the_estimate_is_one_nanosecond_early() {
        assert_eq!(
            retry_on_time::<TokenBucket>(),
            (ok(false, 0, 333_333_334), true)
        );
        assert_eq!(
            retry_on_time::<FloorRetryEstimate>(),
            (ok(false, 0, 333_333_333), false),
            "retrying after the estimate still fails"
        );
    }
}
