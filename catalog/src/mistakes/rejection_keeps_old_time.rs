//! A rejection stores the refilled balance but keeps the bucket's old time: the credit just
//! stored is earned a second time by the next refill.
//!
//! - **Breaks:** R1 / I1. After a rejection, the time since the previous update is credited
//!   twice, so a polling caller is admitted early and more is admitted than the budget covers
//!   (up to the capacity). Admissions store both halves correctly. A snapshot shows the stale
//!   time.
//! - **Seed mistake:** "Existing-key rejection still stores accrued fractional credit and
//!   last observed time." (the credit stored, the time not); trace table "At 250000000 ns
//!   consume 1: Rejected; half a token accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 250 ms)`
//!   (refused: half a token, dated 0), `allow(k, 1, 500 ms)` (allowed, leaving half a token
//!   instead of none), `allow(k, 1, 750 ms)`: the reference refuses, this design allows.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{judge, lock, State};

/// Token bucket whose rejections store the credit but not the time.
#[derive(Debug)]
pub struct RejectionKeepsOldTime {
    state: Mutex<State>,
}

impl Limiter for RejectionKeepsOldTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RejectionKeepsOldTime {
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
        // FLAW: a rejection keeps the bucket's previous time with the refilled units; the
        // reference stores `(after, now)` on either branch.
        let dated = match s.buckets.get(key) {
            Some(bucket) if !decision.allowed => bucket.last_nanos,
            _ => now,
        };
        s.store(key, after, dated);
        s.observed = now;
        Ok(decision)
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
    use crate::mistakes::base::test_support::limiter;
    use ratelimit_lab_reference::TokenBucket;

    const MS: u64 = 1_000_000;

    /// The trace table, then one more token at 750 ms.
    fn polls<L: Limiter>() -> Vec<bool> {
        let l: L = limiter(10, 2, 8);
        [(10, 0), (1, 250 * MS), (1, 500 * MS), (1, 750 * MS)]
            .map(|(cost, now)| l.allow("k", cost, now).unwrap().allowed)
            .to_vec()
    }

    #[test]
    fn the_quarter_second_before_a_rejection_is_credited_twice() {
        assert_eq!(polls::<TokenBucket>(), vec![true, false, true, false]);
        assert_eq!(
            polls::<RejectionKeepsOldTime>(),
            vec![true, false, true, true],
            "a token at 750 ms, where half a token was earned"
        );
    }
}
