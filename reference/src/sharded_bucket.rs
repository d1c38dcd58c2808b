//! The seed's contract with the key space split into independently locked shards, for
//! admissions that scale with threads; and a clock sampled inside the admission boundary
//! without one global gate.
//!
//! # State
//!
//! - `shards`: [`SHARDS`] maps of buckets, each behind its own `Mutex`, each with its own copy
//!   of the policy in force. A key's shard is chosen by a cheap hash of its bytes:
//!   keys an attacker picks to share a shard cost parallelism, never the per-call cost,
//!   since each shard's map keeps the standard library's keyed SipHash.
//! - `book`: a `Mutex` around the number of tracked keys, taken only by the calls that can
//!   change it or must see it exactly (a new key's `allow`, `evict_full`, `key_count`,
//!   `snapshot`), never by an admission on a key already tracked.
//! - `observed`: one `AtomicU64`, the largest time a successful call has used. Every call
//!   that raises it does so with one `fetch_max` while holding the lock of the shard it
//!   decides in (or all of them).
//!
//! Locks are taken in one order, `book` before any shard and shards in ascending index, and
//! no call waits for a lock while holding a later one, so no call can deadlock.
//!
//! # Why every call has a linearization point
//!
//! - An `allow` on a tracked key holds its shard's lock from the lookup to the update, so no
//!   other call reads or writes that bucket or the shard's policy meanwhile (a cutover needs
//!   every shard lock). Its `fetch_max(now)` on `observed` is its linearization point: it
//!   succeeds (the previous value is at most `now`) and the decision is the state's at that
//!   instant, or it returns a larger previous value, and `TimeWentBackwards` with that value
//!   is the answer at that instant (the maximum changed nothing). `InvalidKey` and
//!   `InvalidCost` hold at any instant under the shard lock.
//! - A new key's `allow` releases its shard, takes `book` and then the shard again, and looks
//!   the key up again (another call may have added it; then it goes on as above). With both
//!   held, the key count cannot change. It loads `observed`: above `now`, the answer is
//!   `TimeWentBackwards` at that load; otherwise, at a full key table, `KeyCapacityReached`
//!   at that load, changing nothing. Otherwise its `fetch_max(now)` is its linearization
//!   point as above, and the bucket and the count are updated before either lock is
//!   released, so whoever reads them (under the same locks) sees both or neither.
//! - `evict_full` and `replace_policy` hold `book` (evict) and every shard lock, so nothing
//!   else reads or writes any bucket or `observed` while they run: any instant inside is
//!   their linearization point. `key_count` reads the count under `book`; `snapshot` copies
//!   under `book` and every shard.
//!
//! The observed time is thus always the maximum over the calls linearized so far, and each
//! call's answer is the sequential contract's answer in that order.
//!
//! # Time read inside the boundary, without a global gate
//!
//! [`ShardedBucket::allow_now`] (and its siblings) read a [`Clock`] *after* taking the locks
//! the call decides under, then `fetch_max` the reading. If another call has already
//! published a later reading `t`, this call read the clock before seeing `t`; it reads the
//! clock again, after seeing it. That call read `t` before publishing it, so with a
//! monotonic clock the new reading is at least `t`: the retry succeeds unless yet another
//! call published a later time in between, and each retry means some call succeeded (the
//! system as a whole always progresses). A call therefore never fails with
//! `TimeWentBackwards` while the clock is monotonic, and readings reach the limiter in an
//! order consistent with the clock, with no lock shared by all calls. (Behind
//! [`Clocked`](crate::Clocked), the gate serializes every call; that is what this avoids.)
//!
//! # Arithmetic
//!
//! The reference's (the crate's `arithmetic` module, with its bounds).
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, MutexGuard,
    },
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use crate::arithmetic::{ceiling, refilled, spend};
use crate::Clock;

/// How many independently locked maps hold the buckets (a power of two).
pub const SHARDS: usize = 16;
const _: () = assert!(SHARDS.is_power_of_two());

/// The exact token-bucket limiter with its keys in [`SHARDS`] locked shards (see the module
/// docs for why every call is still one indivisible decision).
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_reference::{ManualClock, ShardedBucket};
///
/// let limiter = ShardedBucket::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 500_000_000);
/// // Time read inside the boundary: 0.5 s later one token has come back.
/// let clock = ManualClock::new(500_000_000);
/// assert!(limiter.allow_now("k", 1, &clock)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct ShardedBucket {
    shards: Box<[Padded]>,
    book: Mutex<Book>,
    observed: AtomicU64,
}

#[derive(Debug)]
struct Shard {
    policy: Policy,
    buckets: HashMap<String, BucketState>,
}

#[derive(Debug)]
struct Book {
    max_keys: usize,
    /// The number of buckets across all shards; changed only with `book` held.
    keys: usize,
}

/// Where a call's time comes from.
#[derive(Clone, Copy)]
enum Time<'c> {
    /// Given by the caller: a later observed time is an error.
    Given(u64),
    /// Read from a clock once the call holds its locks, again if another call has already
    /// used a later reading.
    Read(&'c dyn Clock),
}

impl Time<'_> {
    fn read(self) -> u64 {
        match self {
            Time::Given(now) => now,
            Time::Read(clock) => clock.now_nanos(),
        }
    }

    /// Raises `observed` to this call's time and returns the time, at the call's
    /// linearization point (the load that finds the observed time at `now` or above, or the
    /// `fetch_max` that raises it); `TimeWentBackwards` when a given time is below it.
    fn claim(self, observed: &AtomicU64) -> Result<u64, LimitError> {
        let mut now = self.read();
        loop {
            // A load first: when the observed time is already `now` (or above), nothing is
            // written, so calls at one time on different shards share the line read-only.
            let seen = observed.load(Ordering::SeqCst);
            let before = if seen < now {
                observed.fetch_max(now, Ordering::SeqCst)
            } else {
                seen
            };
            if before <= now {
                return Ok(now);
            }
            match self {
                Time::Given(_) => {
                    return Err(LimitError::TimeWentBackwards {
                        now,
                        observed: before,
                    })
                }
                // `before` was read from the clock before it was published, and published
                // before this call saw it: a reading taken now is at least `before`.
                Time::Read(_) => now = self.read(),
            }
        }
    }

    /// This call's time, for a call that holds every lock (no one else can raise
    /// `observed`): checked, not yet stored.
    fn settled(self, observed: &AtomicU64) -> Result<u64, LimitError> {
        let now = self.read();
        let seen = observed.load(Ordering::SeqCst);
        contract::check_time(now, seen)?;
        Ok(now)
    }
}

/// Which shard holds `key`: its bytes folded 8 at a time with a multiply-rotate mix (a
/// cheap, unkeyed hash: a skewed shard costs parallelism only, see the module docs), the
/// top bits of the result.
fn shard_of(key: &str) -> usize {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes = key.as_bytes();
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    let rest = chunks.remainder();
    let mut word = [0u8; 8];
    word[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(word)).wrapping_mul(K);
    // SHARDS is a power of two: its bits of the hash are the top ones, the best mixed.
    (h >> (64 - SHARDS.trailing_zeros())) as usize
}

/// A shard on cache lines of its own, so that two threads locking neighbouring shards do not
/// contend for one line (128 bytes: the line and the one the processor prefetches with it).
#[repr(align(128))]
#[derive(Debug)]
struct Padded(Mutex<Shard>);

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code path panics while holding a lock; recover the state if a caller's panic ever
    // poisoned one rather than spreading the panic.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ShardedBucket {
    /// Every shard, locked in ascending order (the caller holds `book` or needs no count).
    fn all_shards(&self) -> Vec<MutexGuard<'_, Shard>> {
        self.shards.iter().map(|s| locked(&s.0)).collect()
    }

    fn admit(&self, key: &str, cost: u64, time: Time<'_>) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let shard = &self.shards[shard_of(key)].0;
        {
            let mut s = locked(shard);
            contract::check_cost(&s.policy, cost)?;
            let policy = s.policy;
            if let Some(bucket) = s.buckets.get_mut(key) {
                let now = time.claim(&self.observed)?;
                return Ok(spend(bucket, &policy, cost, now));
            }
        }
        // A new key: the count must not move while this call decides.
        let mut book = locked(&self.book);
        let mut s = locked(shard);
        contract::check_cost(&s.policy, cost)?;
        let policy = s.policy;
        if let Some(bucket) = s.buckets.get_mut(key) {
            let now = time.claim(&self.observed)?;
            return Ok(spend(bucket, &policy, cost, now));
        }
        if let Time::Given(now) = time {
            contract::check_time(now, self.observed.load(Ordering::SeqCst))?;
        }
        if book.keys >= book.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: book.max_keys,
            });
        }
        let now = time.claim(&self.observed)?;
        let mut bucket = BucketState {
            units: ceiling(&policy),
            last_nanos: now,
        };
        let decision = spend(&mut bucket, &policy, cost, now);
        s.buckets.insert(key.to_owned(), bucket);
        book.keys += 1;
        Ok(decision)
    }

    fn evict(&self, time: Time<'_>) -> Result<usize, LimitError> {
        let mut book = locked(&self.book);
        let mut shards = self.all_shards();
        let now = time.settled(&self.observed)?;
        let mut removed = 0;
        for s in &mut shards {
            let policy = s.policy;
            let full = ceiling(&policy);
            let before = s.buckets.len();
            s.buckets.retain(|_, b| refilled(b, &policy, now) != full);
            removed += before - s.buckets.len();
        }
        book.keys -= removed;
        self.observed.store(now, Ordering::SeqCst);
        Ok(removed)
    }

    fn cutover(&self, next: Policy, expected: u64, time: Time<'_>) -> Result<(), LimitError> {
        let mut shards = self.all_shards();
        let now = time.settled(&self.observed)?;
        // Every shard holds the same policy: the one in force.
        if let Some(first) = shards.first() {
            contract::check_version(&first.policy, &next, expected)?;
        }
        let new_ceiling = ceiling(&next);
        for s in &mut shards {
            let old = s.policy;
            for bucket in s.buckets.values_mut() {
                *bucket = BucketState {
                    units: refilled(bucket, &old, now).min(new_ceiling),
                    last_nanos: now,
                };
            }
            s.policy = next;
        }
        self.observed.store(now, Ordering::SeqCst);
        Ok(())
    }

    /// [`Limiter::allow`] at a time read from `clock` inside the admission boundary (see the
    /// module docs): never `TimeWentBackwards` while `clock` is monotonic and every call on
    /// this limiter reads it.
    ///
    /// # Errors
    ///
    /// As [`Limiter::allow`].
    pub fn allow_now<C: Clock>(
        &self,
        key: &str,
        cost: u64,
        clock: &C,
    ) -> Result<Decision, LimitError> {
        self.admit(key, cost, Time::Read(clock))
    }

    /// [`Limiter::evict_full`] at a time read from `clock` under every lock.
    ///
    /// # Errors
    ///
    /// As [`Limiter::evict_full`].
    pub fn evict_full_now<C: Clock>(&self, clock: &C) -> Result<usize, LimitError> {
        self.evict(Time::Read(clock))
    }

    /// [`Limiter::replace_policy`] at a time read from `clock` under every lock.
    ///
    /// # Errors
    ///
    /// As [`Limiter::replace_policy`].
    pub fn replace_policy_now<C: Clock>(
        &self,
        next: Policy,
        expected_version: u64,
        clock: &C,
    ) -> Result<(), LimitError> {
        self.cutover(next, expected_version, Time::Read(clock))
    }
}

impl Limiter for ShardedBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(ShardedBucket {
            shards: (0..SHARDS)
                .map(|_| {
                    Padded(Mutex::new(Shard {
                        policy,
                        buckets: HashMap::new(),
                    }))
                })
                .collect(),
            book: Mutex::new(Book { max_keys, keys: 0 }),
            observed: AtomicU64::new(0),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.admit(key, cost, Time::Given(now))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.evict(Time::Given(now))
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.cutover(next, expected_version, Time::Given(now))
    }

    fn key_count(&self) -> usize {
        locked(&self.book).keys
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let _book = locked(&self.book);
        let shards = self.all_shards();
        let policy = shards.first()?.policy;
        Some(Snapshot {
            policy,
            observed_nanos: self.observed.load(Ordering::SeqCst),
            buckets: shards
                .iter()
                .flat_map(|s| s.buckets.iter().map(|(k, b)| (k.clone(), *b)))
                .collect(),
        })
    }
}
