//! A rejection saves the new time but not the refilled balance: the bucket's time moves to
//! `now` while its units stay where they were before the refill.
//!
//! - **Breaks:** R1 / I1. Credit earned before a rejection is lost, so a later request the
//!   budget covers is refused; a caller polling faster than one token's refill starves.
//!   Outcomes show it, and a snapshot shows the stale units.
//! - **Seed mistake:** "Existing-key rejection still stores accrued fractional credit and
//!   last observed time." (the rule broken); the trace table's "At 250000000 ns consume 1:
//!   Rejected; half a token accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 250 ms)`
//!   (rejected in both), `allow(k, 1, 500 ms)`: the reference passes, this design refuses
//!   (it holds half a token).
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, need, retry_after, whole_tokens, State};

/// Token bucket whose rejections discard the credit they refilled.
#[derive(Debug)]
pub struct RejectionForgetsCredit {
    state: Mutex<State>,
}

impl Limiter for RejectionForgetsCredit {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RejectionForgetsCredit {
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
        if balance >= need {
            s.store(key, balance - need, now);
            s.observed = now;
            return Ok(Decision {
                allowed: true,
                whole_tokens: whole_tokens(balance - need),
                retry_after_nanos: 0,
            });
        }
        // FLAW: a rejection stores the units held *before* the refill, under the new time, so
        // everything earned since the last call is forgotten. The reference stores `balance`.
        // (A rejected key always exists: a new key starts full and a valid cost fits.)
        let before = s.buckets.get(key).map_or(balance, |b| b.units);
        s.store(key, before, now);
        s.observed = now;
        Ok(Decision {
            allowed: false,
            whole_tokens: whole_tokens(balance),
            retry_after_nanos: retry_after(need, balance, &s.policy),
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

    /// The seed's trace table: 10 at 0, 1 at 0, 1 at 250 ms, 1 at 500 ms.
    fn trace<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        [(10, 0), (1, 0), (1, 250_000_000), (1, 500_000_000)]
            .map(|(cost, now)| l.allow("k", cost, now))
            .to_vec()
    }

    #[test]
    fn the_half_token_earned_before_a_rejection_is_lost() {
        let head = [
            ok(true, 0, 0),
            ok(false, 0, 500_000_000),
            ok(false, 0, 250_000_000),
        ];
        assert_eq!(
            trace::<TokenBucket>(),
            [&head[..], &[ok(true, 0, 0)]].concat()
        );
        assert_eq!(
            trace::<RejectionForgetsCredit>(),
            [&head[..], &[ok(false, 0, 250_000_000)]].concat(),
            "at 500 ms only the half token earned since 250 ms is left"
        );
    }
}
