//! `evict_full` checks the time but does not record it as observed: a later call with an
//! earlier time is served.
//!
//! - **Breaks:** R3 / I1 (first seen on eviction sequences). After an eviction at t, a call
//!   at an earlier time is accepted, and a key evicted at t comes back full at that earlier
//!   time. Calls that follow only `allow` or `replace_policy` are exact.
//! - **Seed mistake:** "Two threads sample 100 and 101; the 101 call arrives first. The older
//!   100 call is rejected instead of silently earning negative credit." with `evictFull`'s
//!   `observedTime = now` left out.
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)`, `evict_full(10 s)` (k is
//!   full again: removed), then `allow(k, 1, 5 s)`: the reference returns
//!   `TimeWentBackwards { now: 5 s, observed: 10 s }`, this design allows it.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cleanup does not raise the observed time.
#[derive(Debug)]
pub struct EvictKeepsObservedTime {
    state: Mutex<State>,
}

impl Limiter for EvictKeepsObservedTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(EvictKeepsObservedTime {
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
        s.buckets.retain(|_, b| refilled(b, &policy, now) != full);
        // FLAW: no `observed = now`; the reference raises the observed time here too.
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

    fn back_after_cleanup<L: Limiter>() -> (Result<usize, LimitError>, Result<Decision, LimitError>)
    {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        (l.evict_full(10 * SECOND), l.allow("k", 1, 5 * SECOND))
    }

    #[test]
    fn an_earlier_time_is_served_after_an_eviction() {
        assert_eq!(
            back_after_cleanup::<TokenBucket>(),
            (
                Ok(1),
                Err(LimitError::TimeWentBackwards {
                    now: 5 * SECOND,
                    observed: 10 * SECOND
                })
            )
        );
        assert_eq!(
            back_after_cleanup::<EvictKeepsObservedTime>(),
            (Ok(1), ok(true, 9, 0))
        );
    }
}
