//! The response rounds the remaining balance to the *nearest* whole token, so half a token or
//! more is reported as a token the caller does not have.
//!
//! - **Breaks:** R1 / none. `whole_tokens` claims a token that a request for it is refused
//!   whenever the fraction is at least one half. The stored balance is exact; only the
//!   response is wrong (fractions below one half come out right, unlike a ceiling).
//! - **Seed mistake:** "wholeTokens floors the remaining fraction only in the response."
//!   (rounded instead of floored); trace table "At 250000000 ns consume 1: Rejected; half a
//!   token accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, then `allow(k, 1, 250 ms)`
//!   is rejected with half a token: the reference reports 0 whole tokens, this design 1.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{judge, lock, State};

/// Token bucket whose response rounds the balance to the nearest token.
#[derive(Debug)]
pub struct RoundedWholeTokens {
    state: Mutex<State>,
}

impl Limiter for RoundedWholeTokens {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RoundedWholeTokens {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        let (decision, after) = judge(balance, cost, &s.policy);
        s.store(key, after, now);
        s.observed = now;
        // FLAW: rounded half up; the reference floors `after / 10⁹`.
        let unit = u128::from(UNITS_PER_TOKEN);
        let rounded = u64::try_from((after + unit / 2) / unit).unwrap_or(u64::MAX);
        Ok(Decision {
            whole_tokens: rounded,
            ..decision
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

    /// The trace table to 250 ms (half a token), then 100 ms later (0.7 token).
    fn fractions<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        vec![l.allow("k", 1, 250_000_000), l.allow("k", 1, 350_000_000)]
    }

    #[test]
    fn half_a_token_is_reported_as_one() {
        assert_eq!(
            fractions::<TokenBucket>(),
            vec![ok(false, 0, 250_000_000), ok(false, 0, 150_000_000)]
        );
        assert_eq!(
            fractions::<RoundedWholeTokens>(),
            vec![ok(false, 1, 250_000_000), ok(false, 1, 150_000_000)],
            "a refused token is reported as held"
        );
    }
}
