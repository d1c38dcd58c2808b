//! Per-key locks with the observed time in an atomic that is checked with a `load` and
//! published with a `store` after the key's lock is released: the time check and the time's
//! publication are not one step.
//!
//! - **Breaks:** R2 / I1. Two admissions on different keys, at 2 s and at 1 s, both load an
//!   observed time they pass, both are admitted, and the one at 1 s stores its time last: the
//!   observed time goes back to 1 s, and a later call at 1.5 s is admitted although a call
//!   at 2 s has already returned. Every sequential run matches the reference exactly (a call
//!   that passes its check has `now` at least the observed time, so its store raises it);
//!   only an interleaving shows it.
//! - **Seed mistake:** the API "rejects values older than the last observed service time";
//!   the seed keeps `observedTime` under the monitor that decides, so a check and its update
//!   are one step ([`Mistake::SplitTimeCheck`](ratelimit_lab_api::Mistake::SplitTimeCheck)).
//! - **Smallest scenario:** keys `a` and `b` new; `allow(a, 1, 2 s)` and `allow(b, 1, 1 s)`
//!   at once, each stores after the other's check, `b`'s store last; then `allow(c, 1, 1.5
//!   s)` is admitted. The reference, in either order, refuses it with `TimeWentBackwards`
//!   (observed 2 s).
//!
//! The rest is a correct per-key design: a map of cells under an `RwLock`, an existing key's
//! admission under the read lock and its own cell's `Mutex`, a new key, `evict_full` and
//! `replace_policy` under the write lock. A repair is one line: raise the time with
//! `fetch_max` (or a compare-and-swap loop that re-checks) while the cell is still locked.
//! Nothing widens the gap between the admission and the store (no yield, no sleep): the
//! suite must find the race as a learner's design would present it.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, judge, lock, refilled};

/// Token bucket with a lock per key and an observed time published after the key's lock is
/// released.
#[derive(Debug)]
pub struct RacyObservedTime {
    shared: RwLock<Shared>,
    /// The largest time a successful call has seen, or so it should be.
    observed: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    policy: Policy,
    max_keys: usize,
    cells: HashMap<String, Mutex<BucketState>>,
}

/// Refills `bucket` to `now`, decides, and stores the balance either way.
fn spend(bucket: &mut BucketState, policy: &Policy, cost: u64, now: u64) -> Decision {
    let (decision, after) = judge(refilled(bucket, policy, now), cost, policy);
    *bucket = BucketState {
        units: after,
        last_nanos: now,
    };
    decision
}

impl RacyObservedTime {
    // A lock poisoned by a caller's panic still guards consistent state: recover it.
    fn read(&self) -> RwLockReadGuard<'_, Shared> {
        self.shared.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Shared> {
        self.shared.write().unwrap_or_else(|p| p.into_inner())
    }

    fn check_time(&self, now: u64) -> Result<(), LimitError> {
        contract::check_time(now, self.observed.load(Ordering::SeqCst))
    }

    /// The admission proper: validation, then the decision under the key's cell lock (an
    /// existing key) or under the write lock (a new key). Returns with every lock released
    /// and the observed time not yet raised.
    fn admit(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        {
            let shared = self.read();
            contract::check_cost(&shared.policy, cost)?;
            self.check_time(now)?;
            if let Some(cell) = shared.cells.get(key) {
                return Ok(spend(&mut lock(cell), &shared.policy, cost, now));
            }
        }
        // A new key: checked again, since a cutover may have run between the two sections.
        let mut shared = self.write();
        let policy = shared.policy;
        contract::check_cost(&policy, cost)?;
        self.check_time(now)?;
        if let Some(cell) = shared.cells.get(key) {
            return Ok(spend(&mut lock(cell), &policy, cost, now));
        }
        if shared.cells.len() >= shared.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: shared.max_keys,
            });
        }
        let mut bucket = BucketState {
            units: ceiling(&policy),
            last_nanos: now,
        };
        let decision = spend(&mut bucket, &policy, cost, now);
        shared.cells.insert(key.to_owned(), Mutex::new(bucket));
        Ok(decision)
    }

    /// Publishes `now` as the observed time, whatever was published since the check.
    fn publish(&self, now: u64) {
        self.observed.store(now, Ordering::SeqCst);
    }
}

impl Limiter for RacyObservedTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(RacyObservedTime {
            shared: RwLock::new(Shared {
                policy,
                max_keys,
                cells: HashMap::new(),
            }),
            observed: AtomicU64::new(0),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        // FLAW: the time was checked with a `load` inside `admit`, and is published here with
        // a `store`, after every lock is released: a concurrent admission at a later time may
        // publish first and be overwritten. The reference checks and raises the observed
        // time under the one lock that decides.
        let decision = self.admit(key, cost, now)?;
        self.publish(now);
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut shared = self.write();
        self.check_time(now)?;
        let policy = shared.policy;
        let full = ceiling(&policy);
        let before = shared.cells.len();
        shared
            .cells
            .retain(|_, cell| refilled(&lock(cell), &policy, now) != full);
        self.publish(now);
        Ok(before - shared.cells.len())
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut shared = self.write();
        self.check_time(now)?;
        contract::check_version(&shared.policy, &next, expected_version)?;
        let old = shared.policy;
        let clamp = ceiling(&next);
        for cell in shared.cells.values() {
            let mut bucket = lock(cell);
            *bucket = BucketState {
                units: refilled(&bucket, &old, now).min(clamp),
                last_nanos: now,
            };
        }
        shared.policy = next;
        self.publish(now);
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.read().cells.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let shared = self.read();
        Some(Snapshot {
            policy: shared.policy,
            observed_nanos: self.observed.load(Ordering::SeqCst),
            buckets: shared
                .cells
                .iter()
                .map(|(key, cell)| (key.clone(), *lock(cell)))
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::alternatives::differential;
    use crate::mistakes::base::test_support::{limiter, ok, policy};
    use ratelimit_lab_reference::TokenBucket;

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_later_time_overwritten_by_an_earlier_one_lets_a_stale_call_in() {
        let bad: RacyObservedTime = limiter(2, 1, 4);
        // The interleaving two callers can produce, spelled out: both admitted, the call at
        // 2 s publishes first, the call at 1 s last.
        assert_eq!(bad.admit("a", 1, 2 * SECOND), ok(true, 1, 0));
        assert_eq!(bad.admit("b", 1, SECOND), ok(true, 1, 0));
        bad.publish(2 * SECOND);
        bad.publish(SECOND);
        assert_eq!(bad.allow("c", 1, 3 * SECOND / 2), ok(true, 1, 0));
        assert_eq!(bad.snapshot().unwrap().observed_nanos, 3 * SECOND / 2);

        // The reference, in either order of the two admissions, refuses the call at 1.5 s.
        for later_first in [true, false] {
            let good: TokenBucket = limiter(2, 1, 4);
            let first = if later_first {
                good.allow("a", 1, 2 * SECOND)
            } else {
                good.allow("b", 1, SECOND)
            };
            assert_eq!(first, ok(true, 1, 0));
            let second = if later_first {
                good.allow("b", 1, SECOND)
            } else {
                good.allow("a", 1, 2 * SECOND)
            };
            assert_eq!(second.is_ok(), !later_first);
            assert_eq!(
                good.allow("c", 1, 3 * SECOND / 2),
                Err(LimitError::TimeWentBackwards {
                    now: 3 * SECOND / 2,
                    observed: 2 * SECOND
                })
            );
        }
    }

    #[test]
    fn sequential_calls_match_the_reference() {
        let good: TokenBucket = limiter(10, 2, 2);
        let bad: RacyObservedTime = limiter(10, 2, 2);
        for l in [&good as &dyn Limiter, &bad] {
            assert_eq!(l.allow("k", 10, 0), ok(true, 0, 0));
            assert_eq!(l.allow("k", 1, 0), ok(false, 0, 500_000_000));
            assert_eq!(l.allow("j", 1, 250_000_000), ok(true, 9, 0));
            assert_eq!(
                l.allow("k", 1, 100),
                Err(LimitError::TimeWentBackwards {
                    now: 100,
                    observed: 250_000_000
                })
            );
            assert_eq!(
                l.allow("x", 1, 250_000_000),
                Err(LimitError::KeyCapacityReached { max_keys: 2 })
            );
            l.replace_policy(policy(2, 20, 4), 1, SECOND / 2).unwrap();
            assert_eq!(l.allow("k", 2, SECOND / 2), ok(false, 1, 250_000_000));
            assert_eq!(l.allow("k", 2, 3 * SECOND / 4), ok(true, 0, 0));
            assert_eq!(l.evict_full(3 * SECOND / 4), Ok(0));
            assert_eq!(l.evict_full(6 * SECOND), Ok(2));
        }
        assert_eq!(bad.snapshot(), good.snapshot());
    }

    #[test]
    fn random_sequential_histories_match_the_reference() {
        differential::against_reference::<RacyObservedTime>();
    }
}
