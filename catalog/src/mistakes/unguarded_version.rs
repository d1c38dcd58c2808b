//! `expected_version` is ignored: any administrator may replace the policy as long as the new
//! version is larger, even one who read an older policy.
//!
//! - **Breaks:** R4 / none. Two administrators who both read version 1 both succeed, and the
//!   later write silently overwrites the earlier one (a lost update). Refill, clamp and
//!   publish are exact; only the guard is missing.
//! - **Seed mistake:** "Use expectedVersion to prevent a stale administrator from overwriting a
//!   newer policy."
//! - **Smallest scenario:** policy version 1: `replace_policy(v2, expected 1, 0)` succeeds,
//!   then `replace_policy(v3, expected 1, 0)`: the reference reports `StalePolicyVersion
//!   { expected: 1, current: 2, next: 3 }`, this design installs version 3.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cutover checks only that the version grows.
#[derive(Debug)]
pub struct UnguardedVersion {
    state: Mutex<State>,
}

impl Limiter for UnguardedVersion {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(UnguardedVersion {
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
        // FLAW: `expected_version != current` is not checked; the reference refuses it.
        if next.version() <= current {
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

    /// Two administrators both read version 1; each proposes its own successor.
    fn two_admins<L: Limiter>() -> (Result<(), LimitError>, u64) {
        let l: L = limiter(10, 2, 8);
        l.replace_policy(policy(2, 20, 2), 1, 0).unwrap();
        let second = l.replace_policy(policy(3, 1, 1), 1, 0);
        (second, l.snapshot().unwrap().policy.version())
    }

    #[test]
    fn a_stale_administrator_overwrites_the_newer_policy() {
        let stale = LimitError::StalePolicyVersion {
            expected: 1,
            current: 2,
            next: 3,
        };
        assert_eq!(two_admins::<TokenBucket>(), (Err(stale), 2));
        assert_eq!(two_admins::<UnguardedVersion>(), (Ok(()), 3));
    }
}
