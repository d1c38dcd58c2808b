//! The shard table both sharded designs share: buckets in [`SHARDS`] independently locked
//! maps, a key count behind its own lock, and the lock order every call follows. How a call
//! gets its time is the one thing the designs differ in ([`Timing`]).
use std::hash::BuildHasher;

use hashbrown::HashTable;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Policy, Snapshot,
};

use crate::arithmetic::{ceiling, refilled, spend};

/// How many independently locked maps hold the buckets (a power of two).
///
/// 64: on 2 threads over 1,000 keys, 16 shards left the threads waiting for each other's
/// locks often enough to cost about 10% per call against governor (measured, see
/// `BENCHMARKS.md`); 256 gained nothing more and cost on 1 thread. Under loom and shuttle,
/// whose executions take every lock as a scheduling point, 16 (the count is not part of any
/// proof).
#[cfg(not(any(loom, feature = "shuttle")))]
pub const SHARDS: usize = 64;
/// How many independently locked maps hold the buckets (a power of two): 16 under loom and
/// shuttle, whose executions take every lock as a scheduling point (64 otherwise).
#[cfg(any(loom, feature = "shuttle"))]
pub const SHARDS: usize = 16;
const _: () = assert!(SHARDS.is_power_of_two());

/// One shard: its buckets, its copy of the policy in force (every shard holds the same one:
/// a cutover changes them all under every lock), and the latest time a call deciding in it
/// has used.
#[derive(Debug)]
pub(super) struct Shard {
    pub(super) policy: Policy,
    buckets: HashTable<Entry>,
    /// The latest time used by a call that decided in this shard (or a call holding every
    /// shard); never decreases.
    pub(super) observed: u64,
}

/// A tracked key and its bucket, on a cache line of its own: two threads deciding on
/// different keys never write one line.
#[repr(align(64))]
#[derive(Debug)]
struct Entry {
    key: String,
    bucket: BucketState,
}

#[derive(Debug)]
struct Book {
    max_keys: usize,
    /// The number of buckets across all shards; changed only with `book` held.
    keys: usize,
}

/// How a call gets its time, at the instant the design's proof names.
pub(super) trait Timing {
    /// For a call that holds its key's shard (and, for a new key, `book`) and is about to
    /// decide in it, given the shard's observed time: the call's time, at least that
    /// observed time, or the error the contract answers at that instant. The table records
    /// the time as the shard's observed time.
    fn claim(&self, shard_observed: u64) -> Result<u64, LimitError>;

    /// For a new key's call, holding `book` and its shard, before the key bound is checked:
    /// the time error that takes precedence over `KeyCapacityReached`, if any.
    fn check_before_bound(&self) -> Result<(), LimitError> {
        Ok(())
    }

    /// For a call that holds every shard, given the largest of their observed times: its
    /// time, checked against every earlier call, not yet recorded.
    fn settle(&self, shards_observed: u64) -> Result<u64, LimitError>;

    /// For a call that holds every shard and has settled on `now`: anything the design keeps
    /// outside the shards (the table sets every shard's observed time itself).
    fn publish(&self, now: u64) {
        let _ = now;
    }
}

/// The keys' hash: the standard library's SipHash-1-3, keyed at random per table, so that
/// keys an attacker picks cannot be aimed at one shard or one probe sequence.
#[cfg(not(any(loom, feature = "shuttle")))]
type KeyHash = std::collections::hash_map::RandomState;
/// The keys' hash under loom and shuttle: SipHash-1-3 with a fixed key, since an execution
/// must take the same locks each time it is replayed.
#[cfg(any(loom, feature = "shuttle"))]
type KeyHash = std::hash::BuildHasherDefault<std::hash::DefaultHasher>;

/// A shard on cache lines of its own, so that two threads locking neighbouring shards do not
/// contend for one line (128 bytes: the line and the one the processor prefetches with it).
#[repr(align(128))]
#[derive(Debug)]
struct Padded(Mutex<Shard>);

/// The shards and the key count.
///
/// Locks are taken in one order, `book` before any shard and shards in ascending index, and
/// no call waits for a lock while holding a later one, so no call can deadlock.
#[derive(Debug)]
pub(super) struct Table {
    shards: Box<[Padded]>,
    book: Mutex<Book>,
    /// The keyed SipHash-1-3 of every key, computed once per call: its middle bits pick the
    /// shard, the whole of it finds the bucket in the shard's table.
    hasher: KeyHash,
}

/// Which shard a key of hash `hash` lives in: bits 40 and up. The shard's table takes the
/// bucket's position from the low bits and its tag from the top seven, so these bits stay
/// independent of both. The hash is keyed per process: keys an attacker picks cannot be
/// aimed at one shard, nor at one bucket chain.
fn shard_of(hash: u64) -> usize {
    (hash >> 40) as usize & (SHARDS - 1)
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code path panics while holding a lock; recover the state if a caller's panic ever
    // poisoned one rather than spreading the panic.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Table {
    /// An empty table under `policy` for at most `max_keys` keys.
    pub(super) fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(Table {
            shards: (0..SHARDS)
                .map(|_| {
                    Padded(Mutex::new(Shard {
                        policy,
                        buckets: HashTable::new(),
                        observed: 0,
                    }))
                })
                .collect(),
            book: Mutex::new(Book { max_keys, keys: 0 }),
            hasher: KeyHash::default(),
        })
    }

    /// The index of the shard that holds (or would hold) `key`, below [`SHARDS`].
    pub(super) fn shard_index(&self, key: &str) -> usize {
        shard_of(self.hasher.hash_one(key))
    }

    /// Every shard, locked in ascending order (the caller holds `book` or needs no count).
    fn all_shards(&self) -> Vec<MutexGuard<'_, Shard>> {
        self.shards.iter().map(|s| locked(&s.0)).collect()
    }

    /// `allow(key, cost)` at the time `timing` claims, under the key's shard lock (and, for a
    /// key not yet tracked, `book` first).
    pub(super) fn admit(
        &self,
        key: &str,
        cost: u64,
        timing: &impl Timing,
    ) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let hash = self.hasher.hash_one(key);
        let shard = &self.shards[shard_of(hash)].0;
        {
            let mut guard = locked(shard);
            let s = &mut *guard;
            contract::check_cost(&s.policy, cost)?;
            if let Some(decided) = spend_tracked(s, hash, key, cost, timing) {
                return decided;
            }
        }
        // A new key: the count must not move while this call decides.
        let mut book = locked(&self.book);
        let mut guard = locked(shard);
        let s = &mut *guard;
        contract::check_cost(&s.policy, cost)?;
        if let Some(decided) = spend_tracked(s, hash, key, cost, timing) {
            return decided;
        }
        timing.check_before_bound()?;
        if book.keys >= book.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: book.max_keys,
            });
        }
        let now = timing.claim(s.observed)?;
        s.observed = now;
        let mut bucket = BucketState {
            units: ceiling(&s.policy),
            last_nanos: now,
        };
        let decision = spend(&mut bucket, &s.policy, cost, now);
        let entry = Entry {
            key: key.to_owned(),
            bucket,
        };
        s.buckets
            .insert_unique(hash, entry, |e| self.hasher.hash_one(e.key.as_str()));
        book.keys += 1;
        Ok(decision)
    }

    /// `evict_full` at the time `timing` settles on, under `book` and every shard.
    pub(super) fn evict(&self, timing: &impl Timing) -> Result<usize, LimitError> {
        let mut book = locked(&self.book);
        let mut shards = self.all_shards();
        let now = timing.settle(latest(&shards))?;
        let mut removed = 0;
        for s in &mut shards {
            let policy = s.policy;
            let full = ceiling(&policy);
            let before = s.buckets.len();
            s.buckets
                .retain(|e| refilled(&e.bucket, &policy, now) != full);
            removed += before - s.buckets.len();
            s.observed = now;
        }
        book.keys -= removed;
        timing.publish(now);
        Ok(removed)
    }

    /// `replace_policy` at the time `timing` settles on, under every shard.
    pub(super) fn cutover(
        &self,
        next: Policy,
        expected: u64,
        timing: &impl Timing,
    ) -> Result<(), LimitError> {
        let mut shards = self.all_shards();
        let now = timing.settle(latest(&shards))?;
        // Every shard holds the same policy: the one in force.
        if let Some(first) = shards.first() {
            contract::check_version(&first.policy, &next, expected)?;
        }
        let new_ceiling = ceiling(&next);
        for s in &mut shards {
            let old = s.policy;
            for Entry { bucket, .. } in s.buckets.iter_mut() {
                *bucket = BucketState {
                    units: refilled(bucket, &old, now).min(new_ceiling),
                    last_nanos: now,
                };
            }
            s.policy = next;
            s.observed = now;
        }
        timing.publish(now);
        Ok(())
    }

    /// The number of tracked keys, read under `book`.
    pub(super) fn key_count(&self) -> usize {
        locked(&self.book).keys
    }

    /// A copy of everything, under `book` and every shard, with the observed time `observed`
    /// gives for the largest observed time of the shards.
    pub(super) fn snapshot(&self, observed: impl FnOnce(u64) -> u64) -> Option<Snapshot> {
        let _book = locked(&self.book);
        let shards = self.all_shards();
        let policy = shards.first()?.policy;
        Some(Snapshot {
            policy,
            observed_nanos: observed(latest(&shards)),
            buckets: shards
                .iter()
                .flat_map(|s| s.buckets.iter().map(|e| (e.key.clone(), e.bucket)))
                .collect(),
        })
    }
}

/// The decision on `key` (of hash `hash`) if the held shard `s` tracks it, at the time
/// `timing` claims, recorded as the shard's observed time; `None` for a key not tracked.
fn spend_tracked(
    s: &mut Shard,
    hash: u64,
    key: &str,
    cost: u64,
    timing: &impl Timing,
) -> Option<Result<Decision, LimitError>> {
    let Entry { bucket, .. } = s.buckets.find_mut(hash, |e| e.key == key)?;
    Some(timing.claim(s.observed).map(|now| {
        s.observed = now;
        spend(bucket, &s.policy, cost, now)
    }))
}

/// The largest observed time of the locked shards.
fn latest(shards: &[MutexGuard<'_, Shard>]) -> u64 {
    shards.iter().map(|s| s.observed).max().unwrap_or(0)
}
