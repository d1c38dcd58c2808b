//! Cleanup by idleness: `evict_full` also removes any bucket untouched for a second or more,
//! whatever its balance, as a time-to-live cache would.
//!
//! - **Breaks:** R3 / I3. A depleted key that sat idle is removed and comes back full: the
//!   eviction grants tokens that keeping the bucket would not have. The seed's own cleanup
//!   check at 0.5 s still passes (nothing has been idle a second yet); a depleted key
//!   evicted at 1 s or later shows it.
//! - **Seed mistake:** "Evict any idle/LRU key under memory pressure"; failing case: "An
//!   exhausted key is removed and returns immediately to a full bucket." Counterexample:
//!   "Evict a zero-token key merely because it is least recently used; the next request creates
//!   it with capacity ten."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `evict_full(1 s)` (the
//!   reference removes nothing: k holds 2 tokens; this design removes k), then
//!   `allow(k, 10, 1 s)`: refused by the reference, allowed here.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, refilled, State};

/// How long a bucket may sit untouched before this design drops it.
const IDLE_NANOS: u64 = 1_000_000_000;

/// Token bucket whose cleanup also drops idle, non-full buckets.
#[derive(Debug)]
pub struct LruEviction {
    state: Mutex<State>,
}

impl Limiter for LruEviction {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(LruEviction {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = lock(&self.state);
        s.check_time(now)?;
        let policy = s.policy;
        let full = ceiling(&policy);
        let before = s.buckets.len();
        // FLAW: a bucket idle for `IDLE_NANOS` goes too, full or not. The reference keeps
        // every bucket whose refilled balance is below the ceiling, however old.
        s.buckets.retain(|_, b| {
            refilled(b, &policy, now) != full && now.saturating_sub(b.last_nanos) < IDLE_NANOS
        });
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    const SECOND: u64 = 1_000_000_000;

    fn evict_a_depleted_key<L: Limiter>(
    ) -> (Result<usize, LimitError>, Result<Decision, LimitError>) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        assert_eq!(l.evict_full(SECOND / 2), Ok(0), "the seed's 0.5 s check");
        (l.evict_full(SECOND), l.allow("k", 10, SECOND))
    }

    #[test]
    fn an_idle_depleted_key_comes_back_full() {
        assert_eq!(
            evict_a_depleted_key::<TokenBucket>(),
            (Ok(0), ok(false, 2, 4 * SECOND))
        );
        assert_eq!(
            evict_a_depleted_key::<LruEviction>(),
            (Ok(1), ok(true, 0, 0))
        );
    }
}
