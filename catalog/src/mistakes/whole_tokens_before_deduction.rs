//! The response reports the whole tokens of the balance *before* the deduction: an admitted
//! request is told the tokens it has just spent are still there.
//!
//! - **Breaks:** R1 / none. On every admission `whole_tokens` is too large by the cost (a
//!   refusal, which deducts nothing, comes out right). The stored balance is exact; only the
//!   response is wrong.
//! - **Seed mistake:** "wholeTokens floors the remaining fraction only in the response." (of
//!   the balance before the spend, not the remaining one); trace table "At 0 ns consume 10:
//!   Allowed; 0 tokens remain".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)` reports 0 tokens in the
//!   reference and 10 here.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{judge, lock, whole_tokens, State};

/// Token bucket that reports the balance it had before spending.
#[derive(Debug)]
pub struct WholeTokensBeforeDeduction {
    state: Mutex<State>,
}

impl Limiter for WholeTokensBeforeDeduction {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(WholeTokensBeforeDeduction {
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
        // FLAW: the refilled balance before the deduction; the reference reports `after`.
        Ok(Decision {
            whole_tokens: whole_tokens(balance),
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

    /// The trace table's first two steps.
    fn burst<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        vec![l.allow("k", 10, 0), l.allow("k", 1, 0)]
    }

    #[test]
    fn an_admission_reports_the_spent_tokens() {
        assert_eq!(
            burst::<TokenBucket>(),
            vec![ok(true, 0, 0), ok(false, 0, 500_000_000)]
        );
        assert_eq!(
            burst::<WholeTokensBeforeDeduction>(),
            vec![ok(true, 10, 0), ok(false, 0, 500_000_000)],
            "ten tokens reported after spending ten"
        );
    }
}
