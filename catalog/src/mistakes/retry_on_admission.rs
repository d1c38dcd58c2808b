//! An admitted request also gets a retry estimate: the wait until the same request would pass
//! again, instead of 0.
//!
//! - **Breaks:** R1 / none. An allowed decision whose remaining balance does not cover
//!   another request of the same cost carries a non-zero `retry_after_nanos`, which the
//!   contract reserves for refusals ("`0` when allowed"). Balances, admissions and the
//!   estimates of refusals are exact.
//! - **Seed mistake:** "Return rejection with ceiling retry estimate" (only a rejection
//!   carries one); the trace table's "At 0 ns consume 10: Allowed; 0 tokens remain", whose
//!   Decision has retry 0.
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)` is allowed with retry 0 by
//!   the reference and with retry 5 000 000 000 ns here.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, need, retry_after, whole_tokens, State};

/// Token bucket that estimates a retry on admissions too.
#[derive(Debug)]
pub struct RetryOnAdmission {
    state: Mutex<State>,
}

impl Limiter for RetryOnAdmission {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RetryOnAdmission {
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
        let allowed = balance >= need;
        let after = if allowed { balance - need } else { balance };
        // FLAW: the estimate is computed from what is left on both branches; the reference
        // reports 0 when allowed.
        let retry_after_nanos = if after < need {
            retry_after(need, after, &s.policy)
        } else {
            0
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

    fn burst<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        vec![l.allow("k", 4, 0), l.allow("k", 10, 0), l.allow("k", 6, 0)]
    }

    #[test]
    fn an_admission_carries_a_retry() {
        assert_eq!(
            burst::<TokenBucket>(),
            vec![ok(true, 6, 0), ok(false, 6, 2_000_000_000), ok(true, 0, 0)]
        );
        assert_eq!(
            burst::<RetryOnAdmission>(),
            vec![
                ok(true, 6, 0),
                ok(false, 6, 2_000_000_000),
                ok(true, 0, 3_000_000_000)
            ],
            "allowed, yet told to wait"
        );
    }
}
