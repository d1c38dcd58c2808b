//! `allow` stores the new balance but never moves the bucket's time: every refill counts the
//! time since the key was created (or last cut over), though earlier refills already earned
//! part of it.
//!
//! - **Breaks:** R1 / I1. The same elapsed time is credited again on every call, so a caller
//!   polling an emptied bucket gets tokens faster than the rate (up to the capacity): more is
//!   admitted than the budget covers. A snapshot shows the stale time.
//! - **Seed mistake:** "Refill units=min(capacity×UNIT,oldUnits+elapsedNanos×tokensPerSecond)"
//!   with `elapsed` from a fixed origin instead of the bucket's last update (`new Bucket(after,
//!   now)` dropped); the trace table's "At 500000000 ns consume 1: Allowed; 0 tokens remain".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 250 ms)`
//!   (refused, half a token), `allow(k, 1, 500 ms)` (allowed with 1.5 tokens, not 1),
//!   `allow(k, 2, 750 ms)`: the reference refuses (half a token), this design allows (two).
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{judge, lock, State};

/// Token bucket whose `allow` never moves a bucket's time.
#[derive(Debug)]
pub struct RefillFromCreation {
    state: Mutex<State>,
}

impl Limiter for RefillFromCreation {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RefillFromCreation {
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
        // FLAW: the bucket keeps the time it was created with; the reference dates the stored
        // balance `now`, so the next refill counts only time not yet credited.
        let dated = s.buckets.get(key).map_or(now, |b| b.last_nanos);
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

    /// The trace table, then two tokens at 750 ms.
    fn polls<L: Limiter>() -> Vec<bool> {
        let l: L = limiter(10, 2, 8);
        [(10, 0), (1, 250 * MS), (1, 500 * MS), (2, 750 * MS)]
            .map(|(cost, now)| l.allow("k", cost, now).unwrap().allowed)
            .to_vec()
    }

    #[test]
    fn elapsed_time_is_credited_twice() {
        assert_eq!(polls::<TokenBucket>(), vec![true, false, true, false]);
        assert_eq!(
            polls::<RefillFromCreation>(),
            vec![true, false, true, true],
            "two tokens at 750 ms, where half a token was earned"
        );
    }
}
