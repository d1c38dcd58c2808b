//! The refill is compared with the cost before it is clamped to the capacity; the clamp comes
//! after the spend, on what is stored. A long idle period is a bank the next request spends
//! from, and what is left is still a full bucket.
//!
//! - **Breaks:** R1 / I1. After idling past the time to fill, a bucket admits its capacity and
//!   is still full: two capacity-sized bursts pass at one instant. Stored balances never
//!   exceed the capacity, so only outcomes show it.
//! - **Seed mistake:** "Clamp to ceiling so a long idle period cannot bank unlimited burst
//!   credit." (clamped too late); the refill is `min(capacity×UNIT, oldUnits+elapsed×rate)`
//!   before the comparison.
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, then `allow(k, 10, 60 s)`
//!   twice: the reference admits the first only, this design both.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, judge, lock, whole_tokens, State};

/// Token bucket that clamps after spending instead of before.
#[derive(Debug)]
pub struct ClampAfterSpend {
    state: Mutex<State>,
}

impl Limiter for ClampAfterSpend {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(ClampAfterSpend {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let rate = u128::from(s.policy.tokens_per_second());
        // FLAW: the earned units are not clamped before the comparison; the reference compares
        // `min(units + earned, ceiling)` with the cost.
        let banked = match s.buckets.get(key) {
            Some(b) => b.units + u128::from(now.saturating_sub(b.last_nanos)) * rate,
            None => s.balance(key, now)?,
        };
        let (decision, after) = judge(banked, cost, &s.policy);
        let after = after.min(ceiling(&s.policy));
        s.store(key, after, now);
        s.observed = now;
        Ok(Decision {
            whole_tokens: whole_tokens(after),
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

    const SECOND: u64 = 1_000_000_000;

    fn idle_then_burst<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        vec![
            l.allow("k", 10, 0),
            l.allow("k", 10, 60 * SECOND),
            l.allow("k", 10, 60 * SECOND),
        ]
    }

    #[test]
    fn an_idle_minute_pays_for_two_bursts() {
        assert_eq!(
            idle_then_burst::<TokenBucket>(),
            vec![ok(true, 0, 0), ok(true, 0, 0), ok(false, 0, 5 * SECOND)]
        );
        assert_eq!(
            idle_then_burst::<ClampAfterSpend>(),
            vec![ok(true, 0, 0), ok(true, 10, 0), ok(true, 0, 0)],
            "the bucket is full after spending its capacity"
        );
    }
}
