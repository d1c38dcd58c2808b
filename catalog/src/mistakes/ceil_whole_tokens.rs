//! The response rounds the remaining balance *up* to whole tokens, so it reports a token the
//! caller does not have.
//!
//! - **Breaks:** R1 / none. `whole_tokens` claims a token that a request for it is refused; a
//!   caller that trusts it retries at once and is rejected. The stored balance is exact; only
//!   the response is wrong.
//! - **Seed mistake:** "wholeTokens floors the remaining fraction only in the response." (the
//!   rule broken); trace table "At 250000000 ns consume 1: Rejected; half a token
//!   accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, then `allow(k, 1, 250 ms)`
//!   is rejected with half a token: the reference reports 0 whole tokens, this design 1.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{lock, need, retry_after, State};

/// Token bucket whose response rounds the balance up.
#[derive(Debug)]
pub struct CeilWholeTokens {
    state: Mutex<State>,
}

impl Limiter for CeilWholeTokens {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(CeilWholeTokens {
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
            (false, balance, retry_after(need, balance, &s.policy))
        };
        s.store(key, after, now);
        s.observed = now;
        // FLAW: rounds up; the reference floors (`after / UNITS_PER_TOKEN`).
        let whole = after.div_ceil(u128::from(UNITS_PER_TOKEN));
        Ok(Decision {
            allowed,
            whole_tokens: u64::try_from(whole).unwrap_or(u64::MAX),
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

    /// Spend the burst, ask at 250 ms (half a token), then spend what the response reported.
    fn half_token<L: Limiter>() -> (Result<Decision, LimitError>, bool) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        let d = l.allow("k", 1, 250_000_000);
        let reported = d.as_ref().map_or(0, |d| d.whole_tokens);
        let spent = reported > 0 && l.allow("k", reported, 250_000_000).unwrap().allowed;
        (d, spent)
    }

    #[test]
    fn half_a_token_is_reported_as_one() {
        assert_eq!(
            half_token::<TokenBucket>(),
            (ok(false, 0, 250_000_000), false)
        );
        assert_eq!(
            half_token::<CeilWholeTokens>(),
            (ok(false, 1, 250_000_000), false),
            "the reported token cannot be spent"
        );
    }
}
