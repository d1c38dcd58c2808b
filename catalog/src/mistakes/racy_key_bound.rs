//! The key bound checked in one critical section and the new key inserted in another: the
//! first validates the call and, for a key not yet tracked, refuses it at `max_keys`; the lock
//! is released; the second decides and stores without looking at the bound again.
//!
//! - **Breaks:** R3 / I3. Two callers with new keys can both see room for one more key and
//!   both insert: the map holds more than `max_keys` keys. Every sequential run matches the
//!   reference exactly (a new key at the bound gets `KeyCapacityReached`); only an
//!   interleaving shows it.
//! - **Seed mistake:** "The map contains at most maxKeys" (I3, broken by a race); the seed's
//!   reference checks `buckets.size() == maxKeys` and inserts under one monitor.
//! - **Smallest scenario:** `max_keys` 2, `allow(a, 1, 0)`; then `allow(b, 1, 0)` and
//!   `allow(c, 1, 0)` at once: both pass their bound check before either inserts, both are
//!   admitted, and three keys are tracked. The reference refuses one of them whatever the
//!   order.
//!
//! The gap between the sections yields the thread: it stands for any work done between them,
//! and makes the window wide enough for real threads to meet in it, not only loom or shuttle.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{thread, Mutex},
    Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose key bound is checked apart from the insert.
#[derive(Debug)]
pub struct RacyKeyBound {
    state: Mutex<State>,
}

impl RacyKeyBound {
    /// First critical section: the call's validation and, for a new key, the bound.
    fn check(&self, key: &str, cost: u64, now: u64) -> Result<(), LimitError> {
        let s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        s.balance(key, now).map(|_| ())
    }

    /// Second critical section: the decision, stored for the key whatever the bound says now.
    fn decide(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        s.check_time(now)?;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &s.policy, now),
            None => ceiling(&s.policy),
        };
        Ok(s.decide(key, cost, now, balance))
    }
}

impl Limiter for RacyKeyBound {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RacyKeyBound {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        // FLAW: the bound is checked in one critical section and the key inserted in another.
        // The reference checks and inserts under one lock.
        self.check(key, cost, now)?;
        thread::yield_now();
        self.decide(key, cost, now)
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

    #[test]
    fn two_new_keys_checked_before_either_inserts_both_get_in() {
        let bad: RacyKeyBound = limiter(1, 2, 2);
        bad.allow("a", 1, 0).unwrap();
        // The interleaving two callers can produce, spelled out.
        bad.check("b", 1, 0).unwrap();
        bad.check("c", 1, 0).unwrap();
        assert_eq!(bad.decide("b", 1, 0), ok(true, 0, 0));
        assert_eq!(bad.decide("c", 1, 0), ok(true, 0, 0));
        assert_eq!(bad.key_count(), 3, "above max_keys 2");

        // The reference refuses the third key in either order.
        let good: TokenBucket = limiter(1, 2, 2);
        good.allow("a", 1, 0).unwrap();
        assert_eq!(good.allow("b", 1, 0), ok(true, 0, 0));
        assert_eq!(
            good.allow("c", 1, 0),
            Err(LimitError::KeyCapacityReached { max_keys: 2 })
        );
    }

    #[test]
    fn sequential_calls_match_the_reference() {
        let good: TokenBucket = limiter(1, 2, 2);
        let bad: RacyKeyBound = limiter(1, 2, 2);
        for key in ["a", "b", "c", "a"] {
            assert_eq!(bad.allow(key, 1, 0), good.allow(key, 1, 0), "{key}");
        }
        assert_eq!(bad.snapshot(), good.snapshot());
    }
}
