//! `allow` checks the time against the key's own last time instead of the limiter's observed
//! time: a call older than another key's last call is served, and a new key takes any time.
//!
//! - **Breaks:** R1 / I1. The contract rejects any `now` below the largest time the limiter
//!   has seen, whichever key it came with; here only the same key's time counts, so a call
//!   dated before the newest call of another key (or any call on a new key) is served and the
//!   limiter's clock runs backwards for that key.
//! - **Seed mistake:** "Accept a caller-sampled time older than one already seen" (the
//!   comparison made per bucket; the seed keeps one `lastObservedNanos` for the whole limiter).
//! - **Smallest scenario:** `allow(a, 1, 10)`, then `allow(b, 1, 5)`: the reference returns
//!   `TimeWentBackwards { now: 5, observed: 10 }`, this design admits it. With `max_keys` 1
//!   the same calls return `KeyCapacityReached` here, as [`KeyCapacityBeforeTime`]'s do: this
//!   design is its sibling for those traces, told apart by the unbounded ones.
//!
//! [`KeyCapacityBeforeTime`]: super::KeyCapacityBeforeTime
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that checks each key's time against that key's last time only.
#[derive(Debug)]
pub struct PerKeyTime {
    state: Mutex<State>,
}

impl Limiter for PerKeyTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(PerKeyTime {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        // FLAW: the key's own last time, not the limiter's observed time; a new key has none.
        if let Some(bucket) = s.buckets.get(key) {
            contract::check_time(now, bucket.last_nanos)?;
        }
        let balance = s.balance(key, now)?;
        let observed = s.observed;
        let decision = s.decide(key, cost, now, balance);
        s.observed = observed.max(now);
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

    fn stale_other_key<L: Limiter>(max_keys: usize) -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, max_keys);
        l.allow("a", 1, 10).unwrap();
        l.allow("b", 1, 5)
    }

    #[test]
    fn a_time_older_than_another_keys_is_served() {
        let stale = Err(LimitError::TimeWentBackwards {
            now: 5,
            observed: 10,
        });
        assert_eq!(stale_other_key::<TokenBucket>(2), stale);
        assert!(stale_other_key::<PerKeyTime>(2).is_ok_and(|d| d.allowed));
        // At a full map the capacity error shows instead, as KeyCapacityBeforeTime's does.
        assert_eq!(
            stale_other_key::<PerKeyTime>(1),
            Err(LimitError::KeyCapacityReached { max_keys: 1 })
        );
    }
}
