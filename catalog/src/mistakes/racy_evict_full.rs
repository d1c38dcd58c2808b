//! Cleanup in two critical sections: the first lists the buckets that are full, the lock is
//! released, and the second removes every listed key without looking again.
//!
//! - **Breaks:** R3 / I3. A spend between the two sections empties a listed bucket, which is
//!   then removed anyway: its key comes back full, and the spend is undone. Every sequential
//!   run matches the reference exactly; only an interleaving shows it.
//! - **Seed mistake:** "That equivalence is the proof for evictFull, and the shared monitor
//!   prevents a concurrent consumption between the check and deletion." (the protection
//!   removed); "An exhausted key is removed and returns immediately to a full bucket."
//! - **Smallest scenario:** capacity 10: `allow(k, 10, 0)`; at 5 s `evict_full` lists k (full
//!   again), a concurrent `allow(k, 10, 5 s)` passes, the removal drops k, and a second
//!   `allow(k, 10, 5 s)` passes too: 20 tokens at one instant. The reference refuses the
//!   second whatever the order.
//!
//! The gap between the sections yields the thread: it stands for any work done between them,
//! and makes the window wide enough for real threads to meet in it, not only loom or shuttle.
use ratelimit_lab_api::{
    sync::{thread, Mutex},
    Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cleanup decides and deletes under two separate locks.
#[derive(Debug)]
pub struct RacyEvictFull {
    state: Mutex<State>,
}

impl RacyEvictFull {
    /// First critical section: the keys whose buckets are full at `now`.
    fn list_full(&self, now: u64) -> Result<Vec<String>, LimitError> {
        let mut s = lock(&self.state);
        s.check_time(now)?;
        let full = ceiling(&s.policy);
        let keys = s
            .buckets
            .iter()
            .filter(|(_, b)| refilled(b, &s.policy, now) == full);
        let keys = keys.map(|(k, _)| k.clone()).collect();
        s.observed = now;
        Ok(keys)
    }

    /// Second critical section: removes the listed keys, whatever happened to them since.
    fn remove(&self, keys: &[String]) -> usize {
        let mut s = lock(&self.state);
        keys.iter()
            .filter(|k| s.buckets.remove(k.as_str()).is_some())
            .count()
    }
}

impl Limiter for RacyEvictFull {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RacyEvictFull {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        // FLAW: the check and the deletion are two critical sections. The reference tests and
        // removes each bucket under one lock (`retain`).
        let keys = self.list_full(now)?;
        thread::yield_now();
        Ok(self.remove(&keys))
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

    const T: u64 = 5_000_000_000;

    #[test]
    fn a_spend_between_list_and_remove_is_undone() {
        let bad: RacyEvictFull = limiter(10, 2, 8);
        bad.allow("k", 10, 0).unwrap();
        // The interleaving a cleaner thread and a caller can produce, spelled out.
        let listed = bad.list_full(T).unwrap();
        assert_eq!(bad.allow("k", 10, T), ok(true, 0, 0));
        assert_eq!(bad.remove(&listed), 1, "the depleted bucket is removed");
        assert_eq!(bad.allow("k", 10, T), ok(true, 0, 0), "and comes back full");

        // The reference, in either order of cleanup and spend, refuses the second spend.
        for evict_first in [true, false] {
            let good: TokenBucket = limiter(10, 2, 8);
            good.allow("k", 10, 0).unwrap();
            let removed = if evict_first {
                good.evict_full(T)
            } else {
                Ok(0)
            };
            assert_eq!(good.allow("k", 10, T), ok(true, 0, 0));
            let removed = if evict_first {
                removed
            } else {
                good.evict_full(T)
            };
            assert_eq!(removed, Ok(usize::from(evict_first)));
            assert_eq!(good.allow("k", 10, T), ok(false, 0, 5_000_000_000));
        }
    }

    #[test]
    fn sequential_calls_match_the_reference() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: RacyEvictFull = limiter(10, 2, 8);
        for l in [&good as &dyn Limiter, &bad] {
            l.allow("depleted", 10, 0).unwrap();
            l.allow("full", 1, 0).unwrap();
        }
        assert_eq!(bad.evict_full(T / 10), good.evict_full(T / 10));
        assert_eq!(bad.snapshot(), good.snapshot());
    }
}
