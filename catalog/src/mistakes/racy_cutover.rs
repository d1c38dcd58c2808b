//! Policy change in two critical sections: the first validates and builds the settled map
//! from a copy of the state, the lock is released, and the second publishes map and policy.
//!
//! - **Breaks:** R4 / I2. A spend between the two sections is overwritten by the copy: its
//!   tokens come back. Two administrators who read the same version can both pass the guard,
//!   the later publish silently replacing the earlier one, and a key created in between
//!   vanishes. Every sequential run matches the reference exactly; only an interleaving shows
//!   it.
//! - **Seed mistake:** "Validate versions, refill using the still-current old policy into a
//!   temporary map and clamp each balance. Publish map, policy and observedTime together under
//!   the monitor." (done under two monitors instead of one)
//! - **Smallest scenario:** capacity 10: `allow(k, 1, 0)` (9 left); a cutover copies k = 9; a
//!   concurrent `allow(k, 9, 0)` passes; the cutover publishes k = 9; a second
//!   `allow(k, 9, 0)` passes too: 19 tokens from a capacity of 10 at one instant. The
//!   reference refuses the second whatever the order.
//!
//! The gap between the sections yields the thread: it stands for any work done between them,
//! and makes the window wide enough for real threads to meet in it, not only loom or shuttle.
use std::collections::HashMap;

use ratelimit_lab_api::{
    sync::{thread, Mutex},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cutover is built under one lock and published under another.
#[derive(Debug)]
pub struct RacyCutover {
    state: Mutex<State>,
}

/// A cutover ready to publish.
#[derive(Debug)]
struct Cutover {
    policy: Policy,
    now: u64,
    buckets: HashMap<String, BucketState>,
}

impl RacyCutover {
    /// First critical section: validate and settle a copy of every bucket.
    fn prepare(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<Cutover, LimitError> {
        let s = lock(&self.state);
        s.check_time(now)?;
        s.check_version(&next, expected_version)?;
        let new_ceiling = ceiling(&next);
        let settle = |b: &BucketState| BucketState {
            units: refilled(b, &s.policy, now).min(new_ceiling),
            last_nanos: now,
        };
        let buckets = s
            .buckets
            .iter()
            .map(|(k, b)| (k.clone(), settle(b)))
            .collect();
        Ok(Cutover {
            policy: next,
            now,
            buckets,
        })
    }

    /// Second critical section: install the copy, whatever happened since it was taken.
    fn publish(&self, cutover: Cutover) {
        let mut s = lock(&self.state);
        s.buckets = cutover.buckets;
        s.policy = cutover.policy;
        s.observed = cutover.now;
    }
}

impl Limiter for RacyCutover {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RacyCutover {
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
        // FLAW: build and publish are two critical sections. The reference validates, settles
        // and publishes under one lock.
        let cutover = self.prepare(next, expected_version, now)?;
        thread::yield_now();
        self.publish(cutover);
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
    use crate::mistakes::base::test_support::{limiter, ok, policy};
    use ratelimit_lab_reference::TokenBucket;

    #[test]
    fn a_spend_during_the_cutover_is_undone() {
        let bad: RacyCutover = limiter(10, 2, 8);
        bad.allow("k", 1, 0).unwrap();
        // The interleaving an administrator and a caller can produce, spelled out.
        let cutover = bad.prepare(policy(2, 10, 2), 1, 0).unwrap();
        assert_eq!(bad.allow("k", 9, 0), ok(true, 0, 0));
        bad.publish(cutover);
        assert_eq!(
            bad.allow("k", 9, 0),
            ok(true, 0, 0),
            "the nine tokens came back"
        );

        // The reference, with the cutover before or after the spend, refuses the second one.
        for cutover_first in [true, false] {
            let good: TokenBucket = limiter(10, 2, 8);
            good.allow("k", 1, 0).unwrap();
            let replace = || good.replace_policy(policy(2, 10, 2), 1, 0).unwrap();
            if cutover_first {
                replace();
            }
            assert_eq!(good.allow("k", 9, 0), ok(true, 0, 0));
            if !cutover_first {
                replace();
            }
            assert_eq!(good.allow("k", 9, 0), ok(false, 0, 4_500_000_000));
        }
    }

    #[test]
    fn two_administrators_on_one_version_both_succeed() {
        let bad: RacyCutover = limiter(10, 2, 8);
        let first = bad.prepare(policy(2, 20, 2), 1, 0).unwrap();
        let second = bad.prepare(policy(3, 5, 1), 1, 0).unwrap();
        bad.publish(first);
        bad.publish(second);
        assert_eq!(bad.snapshot().unwrap().policy, policy(3, 5, 1));

        let good: TokenBucket = limiter(10, 2, 8);
        good.replace_policy(policy(2, 20, 2), 1, 0).unwrap();
        assert!(good.replace_policy(policy(3, 5, 1), 1, 0).is_err());
    }
}
