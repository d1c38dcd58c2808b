//! `evict_full` also removes buckets with no whole token left that nobody touched at the
//! sweep's instant, as dead weight: an exhausted key is dropped and comes back full.
//!
//! - **Breaks:** R3 / I3. A depleted key is removed by cleanup and its next request finds a
//!   full bucket: the eviction grants a burst that keeping the bucket would not have. Full
//!   buckets go as in the reference; buckets holding a token or more, or updated at the sweep's own time, are kept.
//! - **Seed mistake:** "Evict any idle/LRU key under memory pressure"; failing case: "An
//!   exhausted key is removed and returns immediately to a full bucket."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `evict_full(1 ns)` (the
//!   reference keeps k, this design removes it), then `allow(k, 10, 1 ns)`: refused by the
//!   reference, allowed here.
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cleanup also drops exhausted buckets.
#[derive(Debug)]
pub struct EvictEmptyBuckets {
    state: Mutex<State>,
}

impl Limiter for EvictEmptyBuckets {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(EvictEmptyBuckets {
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
        // FLAW: a bucket below one token, not updated at `now`, goes too; the reference
        // removes only full ones.
        s.buckets.retain(|_, b| {
            let units = refilled(b, &policy, now);
            units != full && (units >= u128::from(UNITS_PER_TOKEN) || b.last_nanos == now)
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

    fn evict_an_exhausted_key<L: Limiter>(
    ) -> (Result<usize, LimitError>, Result<Decision, LimitError>) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        (l.evict_full(1), l.allow("k", 10, 1))
    }

    #[test]
    fn an_exhausted_key_comes_back_full() {
        assert_eq!(
            evict_an_exhausted_key::<TokenBucket>(),
            (Ok(0), ok(false, 0, 4_999_999_999))
        );
        assert_eq!(
            evict_an_exhausted_key::<EvictEmptyBuckets>(),
            (Ok(1), ok(true, 0, 0))
        );
    }
}
