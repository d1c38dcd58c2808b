//! `replace_policy` checks the versions before the time: a stale administrator arriving with
//! a stale time is told `StalePolicyVersion` instead of `TimeWentBackwards`.
//!
//! - **Breaks:** R1 / none. When both errors apply, the contract's order (time, then version)
//!   returns the time error; this design returns the version error. No state changes either
//!   way; only which error wins differs.
//! - **Seed mistake:** "Two threads sample 100 and 101; the 101 call arrives first. The older
//!   100 call is rejected" (as stale in time, on every method, before anything else is
//!   judged): the seed's `replacePolicy` calls `validateTime(now)` before comparing versions.
//!   On such a trace it returns what a cutover that forgot the observed time would return.
//! - **Smallest scenario:** `allow(k, 4, 100)`, then `replace_policy(v1, expected 7, at 5)`:
//!   the reference returns `TimeWentBackwards { now: 5, observed: 100 }`, this design
//!   `StalePolicyVersion { expected: 7, current: 1, next: 1 }`.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cutover checks versions before time.
#[derive(Debug)]
pub struct VersionBeforeTime {
    state: Mutex<State>,
}

impl Limiter for VersionBeforeTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(VersionBeforeTime {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
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
        let mut s = lock(&self.state);
        // FLAW: the version check first; the reference checks the time first.
        s.check_version(&next, expected_version)?;
        s.check_time(now)?;
        let old = s.policy;
        let new_ceiling = ceiling(&next);
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: refilled(bucket, &old, now).min(new_ceiling),
                last_nanos: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
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
    use crate::mistakes::base::test_support::{limiter, policy};
    use ratelimit_lab_reference::TokenBucket;

    fn stale_administrator<L: Limiter>() -> Result<(), LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 4, 100).unwrap();
        l.replace_policy(policy(1, 10, 2), 7, 5)
    }

    #[test]
    fn the_version_error_wins_over_the_time_error() {
        assert_eq!(
            stale_administrator::<TokenBucket>(),
            Err(LimitError::TimeWentBackwards {
                now: 5,
                observed: 100
            })
        );
        assert_eq!(
            stale_administrator::<VersionBeforeTime>(),
            Err(LimitError::StalePolicyVersion {
                expected: 7,
                current: 1,
                next: 1
            })
        );
    }
}
