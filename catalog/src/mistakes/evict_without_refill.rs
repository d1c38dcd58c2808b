//! `evict_full` judges fullness on the stored balance, without refilling it to `now`: only
//! buckets that were full at their last update go, never ones that have refilled since.
//!
//! - **Breaks:** R3 / I3. A spent bucket that has long since refilled is kept, so the map
//!   stays full and new keys get `KeyCapacityReached` although cleanup could have made room
//!   with no change in any budget. Nothing is ever evicted wrongly, and every balance is
//!   exact.
//! - **Seed mistake:** "evictFull refills for comparison and removes only full buckets."
//!   (the refill left out); "Cleanup removes only fully refilled buckets, whose recreation
//!   is equivalent to retained state."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)`, `evict_full(10 s)`: the
//!   reference removes k (full again since 0.5 s), this design keeps it.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, State};

/// Token bucket whose cleanup does not refill before comparing.
#[derive(Debug)]
pub struct EvictWithoutRefill {
    state: Mutex<State>,
}

impl Limiter for EvictWithoutRefill {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(EvictWithoutRefill {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = lock(&self.state);
        s.check_time(now)?;
        let full = ceiling(&s.policy);
        let before = s.buckets.len();
        // FLAW: the stored units, not refilled to `now`; the reference compares
        // `refilled(b, policy, now)` with the ceiling.
        s.buckets.retain(|_, b| b.units != full);
        s.observed = now;
        Ok(before - s.buckets.len())
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

    const SECOND: u64 = 1_000_000_000;

    /// One key refilled since its last use, at a key bound of 1; then a second key.
    fn make_room<L: Limiter>() -> (Result<usize, LimitError>, bool) {
        let l: L = limiter(10, 2, 1);
        l.allow("k", 1, 0).unwrap();
        (
            l.evict_full(10 * SECOND),
            l.allow("j", 1, 10 * SECOND).is_ok(),
        )
    }

    #[test]
    fn a_refilled_bucket_is_kept() {
        assert_eq!(make_room::<TokenBucket>(), (Ok(1), true));
        assert_eq!(
            make_room::<EvictWithoutRefill>(),
            (Ok(0), false),
            "no room for a new key"
        );
    }
}
