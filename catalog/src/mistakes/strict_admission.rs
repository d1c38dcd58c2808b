//! Admission compares the balance with the cost strictly (`>`), so a request that would leave
//! the bucket at exactly zero is refused.
//!
//! - **Breaks:** R1 / none. A full bucket refuses a request for its whole capacity, and the
//!   instant the retry estimate names (balance equal to the cost) is refused too: waiting
//!   `retry_after_nanos` never suffices. Balances are exact; only the comparison is off by one.
//! - **Seed mistake:** "Treat retryAfter as guaranteed admission" (the estimate names an
//!   instant that is refused); the rule broken: "A request is admitted only if the refilled
//!   budget covers its entire cost" (`compareTo(need) >= 0`), and the trace table's "At 0 ns
//!   consume 10: Allowed; 0 tokens remain".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)` is allowed by the reference
//!   and refused here (10 tokens kept, retry 0).
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, need, retry_after, whole_tokens, State};

/// Token bucket that admits only when the balance exceeds the cost.
#[derive(Debug)]
pub struct StrictAdmission {
    state: Mutex<State>,
}

impl Limiter for StrictAdmission {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(StrictAdmission {
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
        // FLAW: `>`; the reference admits when `balance >= need`.
        let (allowed, after, retry_after_nanos) = if balance > need {
            (true, balance - need, 0)
        } else {
            (false, balance, retry_after(need, balance, &s.policy))
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

    /// The trace table's first step, then the instant its retry estimate names.
    fn spend_exactly<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        vec![
            l.allow("k", 10, 0),
            l.allow("j", 1, 0),
            l.allow("j", 9, 0),
            l.allow("j", 1, 0),
        ]
    }

    #[test]
    fn a_request_for_the_whole_balance_is_refused() {
        assert_eq!(
            spend_exactly::<TokenBucket>(),
            vec![
                ok(true, 0, 0),
                ok(true, 9, 0),
                ok(true, 0, 0),
                ok(false, 0, 500_000_000)
            ]
        );
        assert_eq!(
            spend_exactly::<StrictAdmission>(),
            vec![
                ok(false, 10, 0),
                ok(true, 9, 0),
                ok(false, 9, 0),
                ok(true, 8, 0)
            ],
            "an exact fit is refused with a retry of 0"
        );
    }
}
