//! `evict_full` counts a bucket as full when its balance rounded *up* to whole tokens is the
//! capacity, so a bucket a fraction of a token short of full is removed.
//!
//! - **Breaks:** R3 / I3. A bucket holding, say, 9.5 of 10 tokens is evicted and comes back
//!   full: the eviction grants the missing fraction, which keeping the bucket would not have.
//!   Buckets more than a token short are kept, and every admission is exact.
//! - **Seed mistake:** "evictFull refills for comparison and removes only full buckets"
//!   (`refill(...).units().equals(ceiling())`, compared in rounded tokens instead of exact
//!   units); I3 "eviction grants no extra tokens compared with keeping a full bucket".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)`, `evict_full(250 ms)` (k
//!   holds 9.5 tokens: kept by the reference, removed here), `allow(k, 10, 250 ms)`: refused
//!   by the reference, allowed here.
use ratelimit_lab_api::{
    sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN,
};

use super::base::{lock, refilled, State};

/// Token bucket whose cleanup rounds balances up before comparing.
#[derive(Debug)]
pub struct EvictNearlyFull {
    state: Mutex<State>,
}

impl Limiter for EvictNearlyFull {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(EvictNearlyFull {
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
        let capacity = u128::from(policy.capacity());
        let before = s.buckets.len();
        // FLAW: fullness in tokens rounded up; the reference compares exact units with the
        // ceiling.
        s.buckets.retain(|_, b| {
            refilled(b, &policy, now).div_ceil(u128::from(UNITS_PER_TOKEN)) != capacity
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

    const QUARTER: u64 = 250_000_000;

    fn evict_nine_and_a_half<L: Limiter>(
    ) -> (Result<usize, LimitError>, Result<Decision, LimitError>) {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        (l.evict_full(QUARTER), l.allow("k", 10, QUARTER))
    }

    #[test]
    fn half_a_token_short_is_evicted_and_comes_back_full() {
        assert_eq!(
            evict_nine_and_a_half::<TokenBucket>(),
            (Ok(0), ok(false, 9, QUARTER))
        );
        assert_eq!(
            evict_nine_and_a_half::<EvictNearlyFull>(),
            (Ok(1), ok(true, 0, 0))
        );
    }
}
