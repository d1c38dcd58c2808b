//! Per-key locking: buckets live in `SHARDS` (eight) maps, each behind its own `Mutex`, so
//! admissions for keys in different shards run in parallel.
//!
//! # Idea
//!
//! - A global `RwLock` guards the policy, the key bound and the key count. An `allow` on a key
//!   that already has a bucket takes it in *read* mode plus the one shard lock of its key.
//! - `evict_full`, `replace_policy` and the first `allow` of a new key take the global lock in
//!   *write* mode: they see every shard at rest. Inserting under the write lock is what keeps
//!   the key count exact without a reservation that a later error would have to undo (a
//!   released reservation could make a concurrent new key fail with
//!   [`KeyCapacityReached`](LimitError::KeyCapacityReached) against a count the sequential
//!   specification never reached).
//! - The observed time is one `AtomicU64`. A fast-path `allow` checks and raises it in a
//!   single compare-and-swap loop while holding its shard lock; writers read and store it
//!   plainly, since they run alone.
//! - `key_count` reads the count under the read lock; `snapshot` takes the read lock and then
//!   every shard lock in index order, so no admission is half-done while it copies.
//!
//! # Why every call has a linearization point
//!
//! Lock order is global, then shards in ascending index, and nobody waits for a lock while
//! holding a later one, so there is no deadlock. The linearization points are:
//!
//! - a *write-mode* call (`evict_full`, `replace_policy`, a new key's `allow`): any instant of
//!   its critical section, which excludes every other call that reads or writes state;
//! - a *fast-path* `allow` that succeeds: its successful compare-and-swap on the observed
//!   time. Between taking its shard lock and releasing it, nothing else can read or write its
//!   bucket (same-key calls need the shard lock, everything else that reads buckets needs the
//!   write lock or all shard locks), and the policy cannot change (it holds the read lock), so
//!   the decision it computes is the one the state had at that instant;
//! - a fast-path `TimeWentBackwards`: the load (or failed swap) that returned an observed time
//!   above `now`, which is the observed time of the state at that instant;
//! - `InvalidKey` anywhere, `InvalidCost` anywhere while the read lock is held;
//! - `key_count`: any instant under the read lock (only write-mode calls change the count);
//!   `snapshot`: any instant while it holds every shard lock.
//!
//! The abstract observed time *is* the atomic, because every call that raises it does so at
//! its linearization point. Take two fast-path admissions on different keys, `A` at `now = 5`
//! and `B` at `now = 3`, running together. Their swaps are totally ordered on the one atomic.
//! If `A` swaps first, `B` then reads 5 and fails with `TimeWentBackwards { now: 3, observed:
//! 5 }`, exactly what the sequence `A; B` gives. If `B` swaps first, `A` swaps 3 → 5 and both
//! succeed, as the sequence `B; A` gives. No order lets both succeed with the observed time
//! left at 3, nor `B` fail against a time no call has reached.
//!
//! The arithmetic is the seed's in `u128`, bounded as in the crate's other designs: a full
//! bucket is `capacity × 10⁹ < 2^93`, an earning `elapsed × rate < 2^127`, so a balance plus an
//! earning is below `2^93 + 2^127 < 2^128`, and a shortfall is at most `2^93`.
//!
//! # Cost
//!
//! Admissions on existing keys in different shards proceed in parallel, contending only on the
//! observed-time atomic. The first admission of each key, every cleanup and every cutover
//! stop the world; a workload of mostly new keys is slower than one mutex. Keys hash to shards
//! with a fixed hasher, so many hot keys may share a shard.
use std::collections::{hash_map::DefaultHasher, HashMap};
use std::hash::Hasher;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// How many independently locked maps hold the buckets.
const SHARDS: usize = 8;

type Shard = HashMap<String, BucketState>;

/// A token-bucket limiter with one lock per shard of keys, a global `RwLock` for the policy
/// and an atomic observed time.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::ShardedLocks;
///
/// let limiter = ShardedLocks::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 500_000_000);
/// assert!(limiter.allow("other", 1, 0)?.allowed);
/// assert_eq!(limiter.key_count(), 2);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct ShardedLocks {
    global: RwLock<Global>,
    shards: [Mutex<Shard>; SHARDS],
    observed: AtomicU64,
}

#[derive(Debug)]
struct Global {
    policy: Policy,
    max_keys: usize,
    /// The number of buckets across all shards; changed only under the write lock.
    keys: usize,
}

fn full_units(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let earned =
        u128::from(now.saturating_sub(bucket.last_nanos)) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(full_units(policy))
}

/// Spends `cost` from `bucket` at `now` if its refilled balance covers it, storing the
/// refilled balance either way. `cost` must be in `1..=capacity`.
fn spend(bucket: &mut BucketState, policy: &Policy, cost: u64, now: u64) -> Decision {
    let balance = refilled(bucket, policy, now);
    let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
    let allowed = balance >= need;
    let (left, retry_after_nanos) = if allowed {
        (balance - need, 0)
    } else {
        let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
        (
            balance,
            u64::try_from(wait).map_or(MAX_QUANTITY, |w| w.min(MAX_QUANTITY)),
        )
    };
    *bucket = BucketState {
        units: left,
        last_nanos: now,
    };
    Decision {
        allowed,
        whole_tokens: u64::try_from(left / u128::from(UNITS_PER_TOKEN))
            .unwrap_or(policy.capacity()),
        retry_after_nanos,
    }
}

fn shard_of(key: &str) -> usize {
    // A fixed-key hasher keeps shard choice deterministic, which loom and shuttle need.
    let mut hasher = DefaultHasher::new();
    hasher.write(key.as_bytes());
    usize::try_from(hasher.finish() % SHARDS as u64).unwrap_or(0)
}

impl ShardedLocks {
    // No path panics while holding a lock; errors are returned before writes, so a lock
    // poisoned by a caller's panic still guards consistent state: recover it.
    fn read(&self) -> RwLockReadGuard<'_, Global> {
        self.global.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Global> {
        self.global.write().unwrap_or_else(|p| p.into_inner())
    }

    fn shard(&self, index: usize) -> MutexGuard<'_, Shard> {
        self.shards[index % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Raises the observed time to `now` in one step, or reports the later time that is
    /// already observed and changes nothing.
    fn advance_time(&self, now: u64) -> Result<(), LimitError> {
        let mut seen = self.observed.load(Ordering::SeqCst);
        loop {
            contract::check_time(now, seen)?;
            match self
                .observed
                .compare_exchange(seen, now, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(actual) => seen = actual,
            }
        }
    }

    /// Every shard locked in index order: the caller sees no admission half-done.
    fn all_shards(&self) -> Vec<MutexGuard<'_, Shard>> {
        (0..SHARDS).map(|i| self.shard(i)).collect()
    }

    /// The pieces a snapshot is made of, each read on its own (for the catalog's wrong
    /// designs that build a snapshot from them): the policy under the read lock, then one
    /// shard's buckets under that shard's lock alone, then the observed time.
    pub(crate) fn policy_alone(&self) -> Policy {
        self.read().policy
    }

    /// One shard's buckets (`index` below [`ShardedLocks::SHARDS`]), copied under its lock.
    pub(crate) fn shard_alone(&self, index: usize) -> Vec<(String, BucketState)> {
        self.shard(index)
            .iter()
            .map(|(k, b)| (k.clone(), *b))
            .collect()
    }

    /// The observed time, read alone.
    pub(crate) fn observed_alone(&self) -> u64 {
        self.observed.load(Ordering::SeqCst)
    }

    /// How many shards hold the buckets.
    pub(crate) const SHARDS: usize = SHARDS;
}

impl Limiter for ShardedLocks {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(ShardedLocks {
            global: RwLock::new(Global {
                policy,
                max_keys,
                keys: 0,
            }),
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            observed: AtomicU64::new(0),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let index = shard_of(key);
        {
            // Fast path: an existing key, the global lock shared.
            let global = self.read();
            contract::check_cost(&global.policy, cost)?;
            let mut shard = self.shard(index);
            if let Some(bucket) = shard.get_mut(key) {
                self.advance_time(now)?;
                return Ok(spend(bucket, &global.policy, cost, now));
            }
        }
        // A new key: everything is checked again, since a cutover or a cleanup may have run
        // between the two critical sections.
        let mut global = self.write();
        let policy = global.policy;
        contract::check_cost(&policy, cost)?;
        contract::check_time(now, self.observed.load(Ordering::SeqCst))?;
        let mut shard = self.shard(index);
        let decision = if let Some(bucket) = shard.get_mut(key) {
            spend(bucket, &policy, cost, now)
        } else {
            if global.keys >= global.max_keys {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: global.max_keys,
                });
            }
            let mut bucket = BucketState {
                units: full_units(&policy),
                last_nanos: now,
            };
            let decision = spend(&mut bucket, &policy, cost, now);
            shard.insert(key.to_owned(), bucket);
            global.keys += 1;
            decision
        };
        self.observed.store(now, Ordering::SeqCst);
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut global = self.write();
        contract::check_time(now, self.observed.load(Ordering::SeqCst))?;
        let policy = global.policy;
        let full = full_units(&policy);
        let mut removed = 0;
        for mut shard in self.all_shards() {
            let before = shard.len();
            shard.retain(|_, bucket| refilled(bucket, &policy, now) != full);
            removed += before - shard.len();
        }
        global.keys -= removed.min(global.keys);
        self.observed.store(now, Ordering::SeqCst);
        Ok(removed)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut global = self.write();
        contract::check_time(now, self.observed.load(Ordering::SeqCst))?;
        contract::check_version(&global.policy, &next, expected_version)?;
        let old = global.policy;
        let clamp = full_units(&next);
        for mut shard in self.all_shards() {
            for bucket in shard.values_mut() {
                *bucket = BucketState {
                    units: refilled(bucket, &old, now).min(clamp),
                    last_nanos: now,
                };
            }
        }
        global.policy = next;
        self.observed.store(now, Ordering::SeqCst);
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.read().keys
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let global = self.read();
        let shards = self.all_shards();
        Some(Snapshot {
            policy: global.policy,
            observed_nanos: self.observed.load(Ordering::SeqCst),
            buckets: shards
                .iter()
                .flat_map(|shard| shard.iter().map(|(k, b)| (k.clone(), *b)))
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;

    #[test]
    fn sixty_four_keys_reach_every_shard() {
        let used: std::collections::BTreeSet<usize> =
            (0..64).map(|i| shard_of(&format!("key-{i}"))).collect();
        assert_eq!(used.len(), SHARDS, "{used:?}");
        assert!(used.iter().all(|&s| s < SHARDS));
    }

    #[test]
    fn an_error_on_the_fast_path_leaves_the_observed_time() {
        let limiter = ShardedLocks::new(Policy::new(1, 10, 2).unwrap(), 2).unwrap();
        limiter.allow("a", 1, 5).unwrap();
        limiter.allow("b", 1, 9).unwrap();
        assert_eq!(
            limiter.allow("a", 1, 6),
            Err(LimitError::TimeWentBackwards {
                now: 6,
                observed: 9
            })
        );
        assert_eq!(limiter.snapshot().unwrap().observed_nanos, 9);
        // Time before capacity on the slow path, too.
        assert_eq!(
            limiter.allow("c", 1, 8),
            Err(LimitError::TimeWentBackwards {
                now: 8,
                observed: 9
            })
        );
        assert_eq!(
            limiter.allow("c", 1, 9),
            Err(LimitError::KeyCapacityReached { max_keys: 2 })
        );
        assert_eq!(limiter.key_count(), 2);
    }

    #[test]
    fn eviction_frees_key_slots() {
        let limiter = ShardedLocks::new(Policy::new(1, 1, 1).unwrap(), 1).unwrap();
        limiter.allow("a", 1, 0).unwrap();
        assert_eq!(limiter.evict_full(999_999_999), Ok(0));
        assert_eq!(limiter.evict_full(1_000_000_000), Ok(1));
        assert_eq!(limiter.key_count(), 0);
        assert!(limiter.allow("b", 1, 1_000_000_000).unwrap().allowed);
    }
}

/// Exhaustive interleavings: `RUSTFLAGS="--cfg loom" cargo test -p ratelimit-lab-reference
/// --lib --release sharded_locks::loom_tests`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use ratelimit_lab_api::sync::{thread, Arc};

    fn p(version: u64, capacity: u64) -> Policy {
        Policy::new(version, capacity, 1).unwrap()
    }

    /// A new key's admission leaves the fast path, and a cutover may shrink the capacity
    /// before it takes the write lock: the slow path must judge the cost again.
    #[test]
    fn a_new_key_is_judged_under_the_policy_it_meets() {
        loom::model(|| {
            let limiter = Arc::new(ShardedLocks::new(p(1, 3), 4).unwrap());
            let other = Arc::clone(&limiter);
            let admit = thread::spawn(move || other.allow("a", 3, 0));
            limiter.replace_policy(p(2, 2), 1, 0).unwrap();
            let snap = limiter.snapshot().unwrap();
            match admit.join().unwrap() {
                // Admitted first: the cutover clamped the empty bucket, still empty.
                Ok(d) => {
                    assert!(d.allowed);
                    assert_eq!(snap.buckets["a"].units, 0);
                }
                Err(e) => {
                    assert_eq!(
                        e,
                        LimitError::InvalidCost {
                            cost: 3,
                            capacity: 2
                        }
                    );
                    assert!(snap.buckets.is_empty());
                }
            }
        });
    }

    /// Two fast-path admissions on different keys with different times: either order is
    /// possible, and nothing else.
    #[test]
    fn different_keys_different_times() {
        loom::model(|| {
            let limiter = Arc::new(ShardedLocks::new(p(1, 3), 4).unwrap());
            limiter.allow("a", 1, 0).unwrap();
            limiter.allow("b", 1, 0).unwrap();
            let other = Arc::clone(&limiter);
            let late = thread::spawn(move || other.allow("a", 1, 5));
            let early = limiter.allow("b", 1, 3);
            assert!(late.join().unwrap().is_ok(), "nothing observed beyond 5");
            match early {
                Ok(_) => {}
                Err(e) => assert_eq!(
                    e,
                    LimitError::TimeWentBackwards {
                        now: 3,
                        observed: 5
                    }
                ),
            }
            assert_eq!(limiter.snapshot().unwrap().observed_nanos, 5);
        });
    }

    /// New keys racing for the last slot: exactly one wins.
    #[test]
    fn the_last_slot_goes_to_one_key() {
        loom::model(|| {
            let limiter = Arc::new(ShardedLocks::new(p(1, 3), 2).unwrap());
            limiter.allow("a", 1, 0).unwrap();
            let other = Arc::clone(&limiter);
            let b = thread::spawn(move || other.allow("b", 1, 0));
            let c = limiter.allow("c", 1, 0);
            let b = b.join().unwrap();
            assert!(b.is_ok() != c.is_ok(), "{b:?} {c:?}");
            assert_eq!(limiter.key_count(), 2);
        });
    }
}
