//! The retry estimate rounds the shortfall over the rate down and adds one nanosecond, a
//! ceiling that is one nanosecond late whenever the division is exact.
//!
//! - **Breaks:** R1 / none. When the shortfall is a multiple of the rate, `retry_after_nanos`
//!   is one more than the least wait after which the request passes. The seed's change
//!   exercise (333 333 334 ns) comes out right; its trace table does not. Balances and
//!   admissions are exact.
//! - **Seed mistake:** "retryAfter uses ceiling division" (`floor + 1` in its place); change
//!   exercise: "Ceiling(1e9/3)=333333334ns. The preceding nanosecond is insufficient."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 0)`: the
//!   reference retries after 500 000 000 ns (the trace table), this design after 500 000 001.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
};

use super::base::{lock, need, whole_tokens, State};

/// Token bucket whose retry estimate is `floor + 1`.
#[derive(Debug)]
pub struct FloorPlusOneRetry {
    state: Mutex<State>,
}

impl Limiter for FloorPlusOneRetry {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(FloorPlusOneRetry {
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
            // FLAW: `shortfall / rate + 1`; the reference uses `div_ceil`, equal unless the
            // division is exact.
            let wait = (need - balance) / u128::from(s.policy.tokens_per_second()) + 1;
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

    /// The retry after an emptied bucket, at rate 2 (exact) and rate 3 (not).
    fn retries<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        [(10, 2), (1, 3)]
            .into_iter()
            .map(|(capacity, rate)| {
                let l: L = limiter(capacity, rate, 8);
                l.allow("k", capacity, 0).unwrap();
                l.allow("k", 1, 0)
            })
            .collect()
    }

    #[test]
    fn an_exact_division_is_one_nanosecond_late() {
        assert_eq!(
            retries::<TokenBucket>(),
            vec![ok(false, 0, 500_000_000), ok(false, 0, 333_333_334)]
        );
        assert_eq!(
            retries::<FloorPlusOneRetry>(),
            vec![ok(false, 0, 500_000_001), ok(false, 0, 333_333_334)],
            "late only where the shortfall divides evenly"
        );
    }
}
