//! A correct design written as a learner writes one, against `ratelimit_lab` alone (the
//! catalog's `RwLockBucket`, renamed): the other submissions here build on it, each with one
//! planted problem, and graded alone (`correct.rs`) it passes every check.
//!
//! One `RwLock` around the policy, the observed time and the bucket map: observers share it,
//! every call that can change state takes it exclusively.
//!
//! # Idea
//!
//! `key_count` and `snapshot` change nothing, so they take the *read* lock and may run side by
//! side; `allow`, `evict_full` and `replace_policy` take the *write* lock and run alone, each
//! validating before it mutates. Buckets sit in a `BTreeMap`, so a snapshot is a plain clone
//! of the map, already in key order.
//!
//! # Why it is still linearizable and exact
//!
//! Every call does all its reading and writing while holding the one lock, in read mode only
//! when it writes nothing: a call takes effect at any instant during its critical section, and
//! writers exclude each other and every reader. An error is returned before the first write,
//! so a failed call changes nothing.
//!
//! The arithmetic is the seed's, derived here as a *deficit* rather than a sum: a bucket is
//! full at `t` exactly when what it earned since `last_nanos` covers what it lacked, so the
//! clamped balance is `full` when `earned ≥ full − units` and `units + earned` otherwise. With
//! every quantity at most `M = 2^63 − 1` and time below `2^64`:
//!
//! - `full = capacity × 10⁹ < 2^63 × 2^30 = 2^93`, and a stored balance is at most `full`
//!   (I1), so `full − units` never underflows;
//! - `earned = elapsed × rate < 2^64 × 2^63 = 2^127`;
//! - `units + earned` is only formed when it is below `full`;
//! - a shortfall `cost × 10⁹ − balance` is at most `2^93`, and the rounding-up division by the
//!   rate cannot exceed it.
//!
//! Nothing can overflow a `u128`, and no path panics.
//!
//! # Cost
//!
//! Observers no longer queue behind one another, but an admission still excludes everything:
//! throughput of `allow` is that of one mutex, and a `RwLock` costs a little more than a
//! `Mutex` to take. A steady stream of readers can delay writers on some platforms. A
//! `BTreeMap` lookup is `O(log K)` string comparisons rather than one hash.
use std::collections::BTreeMap;

use ratelimit_lab::rules as contract;
use ratelimit_lab::{
    sync::{RwLock, RwLockReadGuard, RwLockWriteGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// A token-bucket limiter whose observers (`key_count`, `snapshot`) share one `RwLock` and
/// whose mutators take it exclusively.
///
/// # Example
///
/// ```
/// use ratelimit_lab::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::Design;
///
/// let limiter = Design::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 500_000_000);
/// assert_eq!(limiter.key_count(), 1);
/// # Ok::<(), ratelimit_lab::LimitError>(())
/// ```
#[derive(Debug)]
pub struct Design {
    inner: RwLock<Inner>,
}

#[derive(Debug)]
struct Inner {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: BTreeMap<String, BucketState>,
}

/// The balance of a full bucket under `policy`: `capacity × 10⁹ < 2^93`.
fn full_units(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance `bucket` reaches at `now` under `policy`, clamped to full. Requires
/// `bucket.units <= full_units(policy)`, which every stored bucket keeps (I1).
fn balance_at(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let full = full_units(policy);
    let lacking = full.saturating_sub(bucket.units);
    let earned =
        u128::from(now.saturating_sub(bucket.last_nanos)) * u128::from(policy.tokens_per_second());
    if earned >= lacking {
        full
    } else {
        bucket.units + earned
    }
}

impl Inner {}

impl Design {
    // No path panics while holding the lock; if a caller's panic ever poisoned it, the state
    // is still consistent (errors are returned before writes), so recover it.
    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl Limiter for Design {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(Design {
            inner: RwLock::new(Inner {
                policy,
                max_keys,
                observed: 0,
                buckets: BTreeMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let mut inner = self.write();
        let policy = inner.policy;
        contract::check_cost(&policy, cost)?;
        contract::check_time(now, inner.observed)?;
        let balance = match inner.buckets.get(key) {
            Some(bucket) => balance_at(bucket, &policy, now),
            None if inner.buckets.len() >= inner.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: inner.max_keys,
                });
            }
            None => full_units(&policy),
        };
        let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
        let decision_units = balance.checked_sub(need);
        let left = decision_units.unwrap_or(balance);
        let retry_after_nanos = match decision_units {
            Some(_) => 0,
            None => {
                let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
                u64::try_from(wait).map_or(MAX_QUANTITY, |w| w.min(MAX_QUANTITY))
            }
        };
        let state = BucketState {
            units: left,
            last_nanos: now,
        };
        if let Some(bucket) = inner.buckets.get_mut(key) {
            *bucket = state;
        } else {
            inner.buckets.insert(key.to_owned(), state);
        }
        inner.observed = now;
        Ok(Decision {
            allowed: decision_units.is_some(),
            // left ≤ full, so the quotient is at most the capacity.
            whole_tokens: u64::try_from(left / u128::from(UNITS_PER_TOKEN))
                .unwrap_or(policy.capacity()),
            retry_after_nanos,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut inner = self.write();
        contract::check_time(now, inner.observed)?;
        let policy = inner.policy;
        let full = full_units(&policy);
        let before = inner.buckets.len();
        inner
            .buckets
            .retain(|_, bucket| balance_at(bucket, &policy, now) < full);
        inner.observed = now;
        Ok(before - inner.buckets.len())
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut inner = self.write();
        contract::check_time(now, inner.observed)?;
        contract::check_version(&inner.policy, &next, expected_version)?;
        let old = inner.policy;
        let clamp = full_units(&next);
        for bucket in inner.buckets.values_mut() {
            bucket.units = balance_at(bucket, &old, now).min(clamp);
            bucket.last_nanos = now;
        }
        inner.policy = next;
        inner.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.read().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let inner = self.read();
        Some(Snapshot {
            policy: inner.policy,
            observed_nanos: inner.observed,
            buckets: inner.buckets.clone(),
        })
    }
}
