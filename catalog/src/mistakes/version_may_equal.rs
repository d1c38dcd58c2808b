//! The version guard refuses only a *lower* next version: a policy carrying the current
//! version number replaces the current one.
//!
//! - **Breaks:** R4 / none. An R1 check catches it first (a refused call changes nothing: it
//!   replays an equal version, which this design applies); the failure is filed under R4, the
//!   requirement of the step that differs. Two different policies can be published under one version, so a
//!   version no longer identifies a policy, and a replay of an administrator's change with the
//!   same version is applied again. The expected-version check and every cutover are exact.
//! - **Seed mistake:** "Reject stale expectedVersion or non-increasing next.version." with
//!   `next.version() <= policy.version()` written as `<`.
//! - **Smallest scenario:** capacity 10: `replace_policy(v1: capacity 5, expected 1)`: the
//!   reference returns `StalePolicyVersion { expected: 1, current: 1, next: 1 }`, this design
//!   replaces the policy.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose version guard lets an equal version through.
#[derive(Debug)]
pub struct VersionMayEqual {
    state: Mutex<State>,
}

impl Limiter for VersionMayEqual {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(VersionMayEqual {
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
        s.check_time(now)?;
        let current = s.policy.version();
        // FLAW: `<`; the reference also refuses `next.version() == current`.
        if expected_version != current || next.version() < current {
            return Err(LimitError::StalePolicyVersion {
                expected: expected_version,
                current,
                next: next.version(),
            });
        }
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

    fn same_version<L: Limiter>() -> (Result<(), LimitError>, u64) {
        let l: L = limiter(10, 2, 8);
        let replaced = l.replace_policy(policy(1, 5, 2), 1, 0);
        (replaced, l.snapshot().unwrap().policy.capacity())
    }

    #[test]
    fn an_equal_version_replaces_the_policy() {
        assert_eq!(
            same_version::<TokenBucket>(),
            (
                Err(LimitError::StalePolicyVersion {
                    expected: 1,
                    current: 1,
                    next: 1
                }),
                10
            )
        );
        assert_eq!(same_version::<VersionMayEqual>(), (Ok(()), 5));
    }
}
