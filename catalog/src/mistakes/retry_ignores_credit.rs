//! The retry estimate is the time to earn the whole cost, as if the bucket were empty: the
//! credit it already holds is left out of the shortfall.
//!
//! - **Breaks:** R1 / none. Whenever a refused bucket holds any credit, `retry_after_nanos`
//!   is later than the least wait after which the request passes. Balances and admissions are
//!   exact; only the estimate is wrong (it is right on an empty bucket, as in the seed's first
//!   example).
//! - **Seed mistake:** "retryAfter uses ceiling division and saturates rather than
//!   overflowing." with the shortfall `need.subtract(after)` (the balance left out); trace
//!   table: "At 250000000 ns consume 1: Rejected; half a token accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 250 ms)`:
//!   the reference retries after 250 000 000 ns (half a token is missing), this design after
//!   500 000 000 ns.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, need, retry_after, whole_tokens, State};

/// Token bucket whose retry estimate ignores the stored credit.
#[derive(Debug)]
pub struct RetryIgnoresCredit {
    state: Mutex<State>,
}

impl Limiter for RetryIgnoresCredit {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RetryIgnoresCredit {
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
            // FLAW: the shortfall is taken as the whole cost; the reference divides
            // `need - balance`.
            (false, balance, retry_after(need, 0, &s.policy))
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

    /// The trace table to 250 ms.
    fn half_a_token<L: Limiter>() -> (Result<Decision, LimitError>, Result<Decision, LimitError>) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        (l.allow("k", 1, 0), l.allow("k", 1, 250_000_000))
    }

    #[test]
    fn the_estimate_ignores_half_a_token() {
        assert_eq!(
            half_a_token::<TokenBucket>(),
            (ok(false, 0, 500_000_000), ok(false, 0, 250_000_000))
        );
        assert_eq!(
            half_a_token::<RetryIgnoresCredit>(),
            (ok(false, 0, 500_000_000), ok(false, 0, 500_000_000)),
            "right on an empty bucket, late with half a token"
        );
    }
}
