//! The seed's monitor, storing what the reference stores, but reporting its state as of one
//! instant: every bucket in a [`snapshot`](Limiter::snapshot) is refilled to the observed
//! time and dated it.
//!
//! # Idea
//!
//! One `Mutex` owns the policy, the observed time and a map from key to `(units,
//! last_nanos)`: the balance as of the key's own last call. A bucket is refilled lazily, only
//! when a call touches it (`allow` on its key, `evict_full` or `replace_policy` on every key),
//! exactly as the reference does.
//!
//! The one difference is the picture it gives. A snapshot brings every bucket to the
//! observed time `o` under the policy in force, `min(F, units + (o − last_nanos) × r)`, and
//! reports it with `last_nanos = o`. That is the same state: the balance at any time `t ≥ o`
//! of the reported bucket, `min(F, b(o) + (t − o) × r)`, equals the stored one's, because a
//! refill from `last_nanos` to `o` and then on to `t` earns what one refill from `last_nanos`
//! to `t` earns, and clamping at `F` in between changes nothing (once full, a bucket stays
//! full). A check that compares states must compare balances at the observed time, not the
//! stored pairs; this design is here so that one which compares the pairs is caught.
//!
//! # Why it is linearizable and exact
//!
//! Every call validates in the contract's order, then mutates, under the one lock, and takes
//! effect at one instant inside it; an error returns before the first write. The arithmetic
//! is exact `u128`: `F = capacity × 10⁹ < 2^93`, an earning `elapsed × r < 2^127`, and a
//! stored balance is at most `F`, so `units + earning < 2^128`; a shortfall is at most `F`.
//!
//! # Cost
//!
//! The serialization of one lock, as the seed's monitor. A snapshot computes one refill per
//! key.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// A token-bucket limiter behind one lock whose snapshot dates every bucket at the observed
/// time.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::ObservedTimeSnapshot;
///
/// let limiter = ObservedTimeSnapshot::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert!(limiter.allow("j", 1, 250_000_000)?.allowed);
/// let snap = limiter.snapshot().expect("a snapshot");
/// assert_eq!(snap.buckets["k"].units, 500_000_000);
/// assert_eq!(snap.buckets["k"].last_nanos, 250_000_000);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct ObservedTimeSnapshot {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    /// Each key's balance as of its own last refill.
    buckets: HashMap<String, BucketState>,
}

/// `F = capacity × 10⁹`.
fn full_units(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance `bucket` holds at `now` under `policy`: `min(F, units + (now − last) × r)`.
fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let earned =
        u128::from(now.saturating_sub(bucket.last_nanos)) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(full_units(policy))
}

impl ObservedTimeSnapshot {
    // No path panics while holding the lock; errors are returned before writes, so a lock
    // poisoned by a caller's panic still guards consistent state: recover it.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Limiter for ObservedTimeSnapshot {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(ObservedTimeSnapshot {
            state: Mutex::new(State {
                policy,
                max_keys,
                observed: 0,
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let mut s = self.lock();
        let policy = s.policy;
        contract::check_cost(&policy, cost)?;
        contract::check_time(now, s.observed)?;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &policy, now),
            None if s.buckets.len() >= s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                });
            }
            None => full_units(&policy),
        };
        let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
        let (allowed, left, retry_after_nanos) = match balance.checked_sub(need) {
            Some(left) => (true, left, 0),
            None => {
                let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
                let wait = u64::try_from(wait).map_or(MAX_QUANTITY, |w| w.min(MAX_QUANTITY));
                (false, balance, wait)
            }
        };
        let stored = BucketState {
            units: left,
            last_nanos: now,
        };
        match s.buckets.get_mut(key) {
            Some(bucket) => *bucket = stored,
            None => {
                s.buckets.insert(key.to_owned(), stored);
            }
        }
        s.observed = now;
        Ok(Decision {
            allowed,
            // left ≤ F, so the quotient is at most the capacity.
            whole_tokens: u64::try_from(left / u128::from(UNITS_PER_TOKEN))
                .unwrap_or(policy.capacity()),
            retry_after_nanos,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.lock();
        contract::check_time(now, s.observed)?;
        let policy = s.policy;
        let full = full_units(&policy);
        let before = s.buckets.len();
        s.buckets
            .retain(|_, bucket| refilled(bucket, &policy, now) < full);
        s.observed = now;
        Ok(before - s.buckets.len())
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut s = self.lock();
        contract::check_time(now, s.observed)?;
        contract::check_version(&s.policy, &next, expected_version)?;
        let old = s.policy;
        let clamp = full_units(&next);
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: refilled(bucket, &old, now).min(clamp),
                last_nanos: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.lock().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.lock();
        let at = s.observed;
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: at,
            buckets: s
                .buckets
                .iter()
                .map(|(key, bucket)| {
                    let state = BucketState {
                        units: refilled(bucket, &s.policy, at),
                        last_nanos: at,
                    };
                    (key.clone(), state)
                })
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::alternatives::differential;

    const SECOND: u64 = 1_000_000_000;
    const TOKEN: u128 = UNITS_PER_TOKEN as u128;

    fn p(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).unwrap()
    }

    fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Decision {
        Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        }
    }

    #[test]
    fn the_seeds_burst_then_retry() {
        let l = ObservedTimeSnapshot::new(p(1, 10, 2), 4).unwrap();
        assert_eq!(l.allow("k", 10, 0), Ok(decision(true, 0, 0)));
        assert_eq!(l.allow("k", 1, 0), Ok(decision(false, 0, 500_000_000)));
        assert_eq!(
            l.allow("k", 1, 250_000_000),
            Ok(decision(false, 0, 250_000_000))
        );
        assert_eq!(l.allow("k", 1, 500_000_000), Ok(decision(true, 0, 0)));
    }

    #[test]
    fn the_seeds_cutover_leaves_one_token_then_two() {
        let l = ObservedTimeSnapshot::new(p(1, 10, 2), 4).unwrap();
        assert!(l.allow("k", 10, 0).unwrap().allowed);
        l.replace_policy(p(2, 20, 4), 1, SECOND / 2).unwrap();
        assert_eq!(l.snapshot().unwrap().buckets["k"].units, TOKEN);
        assert_eq!(
            l.allow("k", 2, SECOND / 2),
            Ok(decision(false, 1, 250_000_000))
        );
        assert_eq!(l.allow("k", 2, 3 * SECOND / 4), Ok(decision(true, 0, 0)));
    }

    #[test]
    fn the_snapshot_refills_every_bucket_to_the_observed_time() {
        let l = ObservedTimeSnapshot::new(p(1, 10, 2), 4).unwrap();
        l.allow("a", 10, 0).unwrap();
        l.allow("b", 3, 100_000_000).unwrap();
        l.allow("c", 1, 250_000_000).unwrap();
        // Stored as of each key's own last call …
        assert_eq!(
            l.lock().buckets["a"],
            BucketState {
                units: 0,
                last_nanos: 0
            }
        );
        // … reported as of the observed time.
        let snap = l.snapshot().unwrap();
        assert_eq!(snap.observed_nanos, 250_000_000);
        let at = |units| BucketState {
            units,
            last_nanos: 250_000_000,
        };
        assert_eq!(snap.buckets["a"], at(TOKEN / 2));
        assert_eq!(snap.buckets["b"], at(7 * TOKEN + 3 * TOKEN / 10));
        assert_eq!(snap.buckets["c"], at(9 * TOKEN));
        assert!(l.allow("a", 1, 1).is_err());
        assert_eq!(l.snapshot().unwrap(), snap);
    }

    #[test]
    fn eviction_drops_only_buckets_full_at_now() {
        let l = ObservedTimeSnapshot::new(p(1, 10, 2), 3).unwrap();
        l.allow("spent", 10, 0).unwrap();
        l.allow("one", 1, 0).unwrap();
        assert_eq!(l.evict_full(499_999_999), Ok(0));
        assert_eq!(l.evict_full(SECOND / 2), Ok(1));
        assert_eq!(l.evict_full(4_999_999_999), Ok(0));
        assert_eq!(l.evict_full(5 * SECOND), Ok(1));
        assert_eq!(l.key_count(), 0);
    }

    #[test]
    fn errors_in_the_contracts_order_change_nothing() {
        let l = ObservedTimeSnapshot::new(p(1, 10, 2), 1).unwrap();
        assert_eq!(
            ObservedTimeSnapshot::new(p(1, 10, 2), 0).err(),
            Some(LimitError::InvalidMaxKeys)
        );
        l.allow("k", 1, 10).unwrap();
        let snap = l.snapshot().unwrap();
        assert_eq!(l.allow("\u{1f}", 0, 5), Err(LimitError::InvalidKey));
        assert_eq!(
            l.allow("k", 0, 5),
            Err(LimitError::InvalidCost {
                cost: 0,
                capacity: 10
            })
        );
        assert_eq!(
            l.allow("new", 1, 5),
            Err(LimitError::TimeWentBackwards {
                now: 5,
                observed: 10
            })
        );
        assert_eq!(
            l.allow("new", 1, 10),
            Err(LimitError::KeyCapacityReached { max_keys: 1 })
        );
        assert_eq!(
            l.replace_policy(p(3, 1, 1), 2, 10),
            Err(LimitError::StalePolicyVersion {
                expected: 2,
                current: 1,
                next: 3
            })
        );
        assert_eq!(l.snapshot().unwrap(), snap);
    }

    #[test]
    fn random_histories_match_the_reference() {
        differential::against_reference::<ObservedTimeSnapshot>();
    }
}
