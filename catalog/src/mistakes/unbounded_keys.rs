//! No key bound: a new key is always tracked, however many are already in the map.
//!
//! - **Breaks:** R3 / I3. `key_count()` grows past `max_keys` with the number of distinct
//!   keys a client sends, so memory is unbounded; no call ever reports `KeyCapacityReached`.
//!   Every bucket is still exact, so only the key count (or a snapshot's size) shows it.
//! - **Seed mistake:** "At maxKeys, a new key is rejected with an explicit capacity error."
//!   (the rule broken); "Unbounded maps exhaust memory; evicting a depleted key grants a new
//!   burst on recreation."
//! - **Smallest scenario:** `max_keys` 1: `allow(a, 1, 0)`, then `allow(b, 1, 0)`: the
//!   reference reports `KeyCapacityReached { max_keys: 1 }`, this design allows it and tracks
//!   two keys.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket that never refuses a new key.
#[derive(Debug)]
pub struct UnboundedKeys {
    state: Mutex<State>,
}

impl Limiter for UnboundedKeys {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(UnboundedKeys {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &s.policy, now),
            // FLAW: no `buckets.len() >= max_keys` arm; the reference refuses the new key
            // with `KeyCapacityReached`.
            None => ceiling(&s.policy),
        };
        Ok(s.decide(key, cost, now, balance))
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

    fn two_keys_with_room_for_one<L: Limiter>() -> (Result<Decision, LimitError>, usize) {
        let l: L = limiter(10, 2, 1);
        l.allow("a", 1, 0).unwrap();
        (l.allow("b", 1, 0), l.key_count())
    }

    #[test]
    fn the_key_count_passes_max_keys() {
        assert_eq!(
            two_keys_with_room_for_one::<TokenBucket>(),
            (Err(LimitError::KeyCapacityReached { max_keys: 1 }), 1)
        );
        assert_eq!(
            two_keys_with_room_for_one::<UnboundedKeys>(),
            (ok(true, 9, 0), 2)
        );
    }
}
