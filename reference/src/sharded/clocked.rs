//! [`ClockedShardedBucket`]: the sharded design driven by a clock it reads inside each call's
//! boundary, with no lock, and no memory, written by every call.
use ratelimit_lab_api::{Decision, LimitError, Policy, Snapshot};

use super::table::{Table, Timing};
use crate::Clock;

/// The exact token-bucket limiter with its keys in [`SHARDS`](super::SHARDS) locked shards,
/// reading time from its own [`Clock`] inside each call's boundary. No call is given a time,
/// so none can arrive with one the limiter has passed.
///
/// # How time is read
///
/// A call reads the clock once, *after* taking the locks it decides under: an `allow` its
/// key's shard (a new key's `allow`, `book` and then the shard), `evict_full` `book` and
/// every shard, `replace_policy` every shard. Each shard records the latest time a call
/// deciding in it used; nothing else is shared, so an `allow` on a tracked key writes only
/// its own shard, and two threads on keys of different shards touch no common memory.
///
/// If a reading is below its shard's observed time (a clock that is not monotonic across
/// threads, which the [`Clock`] contract rules out), the call uses the observed time: no
/// bucket's time ever goes back.
///
/// # Why every call is one indivisible decision
///
/// Take a monotonic clock: a reading taken after another (in real time, or after it in
/// happens-before order) is at least as large. Order the calls by the time each used, and
/// calls with equal times by happens-before (which the lock hand-offs and real time give;
/// among equal times it is acyclic). This order
///
/// - respects real time: if call A returns before call B starts, A read the clock before B,
///   so `t(A) ≤ t(B)`, and with equal times A happens before B;
/// - on each shard, is the order in which the calls took the shard's lock: each call's
///   reading is taken under the lock, after the previous holder's, so times never decrease
///   along a shard's lock order, and equal ones follow it. The same holds for `book` (a new
///   key's call reads the clock while holding it), and for `evict_full` and
///   `replace_policy`, which hold every shard;
/// - gives every call the sequential contract's answer: an `allow` reads and writes only its
///   bucket and its shard's policy, all under the shard lock, so what it saw is what the
///   calls before it on that shard left, and those are exactly the calls before it in the
///   order that touch that shard. A new key's `allow` sees the key count that the calls
///   before it under `book` left. Time never goes backwards in this order, so no call
///   fails with `TimeWentBackwards` (and none does). A cutover holds every shard, so every
///   `allow` sees either the whole old policy with its buckets or the whole new one.
///
/// The observed time of a [`snapshot`](Self::snapshot) is the largest over the shards, which
/// `evict_full` and `replace_policy` each set to their own time: the latest time used.
///
/// (Behind [`Clocked`](crate::Clocked), one gate around every call serializes them; that is
/// what this avoids. [`ShardedBucket`](super::ShardedBucket), whose calls are given their
/// times, must keep one observed time for all of them, written by every call that moves
/// time forward.)
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// use ratelimit_lab_api::Policy;
/// use ratelimit_lab_reference::{Clock, ClockedShardedBucket, ManualClock};
///
/// #[derive(Debug)]
/// struct Shared(Arc<ManualClock>);
/// impl Clock for Shared {
///     fn now_nanos(&self) -> u64 {
///         self.0.now_nanos()
///     }
/// }
///
/// let clock = Arc::new(ManualClock::new(0));
/// let limiter = ClockedShardedBucket::new(Policy::new(1, 10, 2)?, 100, Shared(clock.clone()))?;
/// assert!(limiter.allow("k", 10)?.allowed);
/// assert_eq!(limiter.allow("k", 1)?.retry_after_nanos, 500_000_000);
/// clock.advance(500_000_000);
/// assert!(limiter.allow("k", 1)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct ClockedShardedBucket<C> {
    table: Table,
    clock: C,
}

/// A call that reads `clock` when it holds its locks.
struct Read<'c, C>(&'c C);

impl<C: Clock> Timing for Read<'_, C> {
    fn claim(&self, shard_observed: u64) -> Result<u64, LimitError> {
        Ok(self.0.now_nanos().max(shard_observed))
    }

    fn settle(&self, shards_observed: u64) -> Result<u64, LimitError> {
        Ok(self.0.now_nanos().max(shards_observed))
    }
}

impl<C: Clock> ClockedShardedBucket<C> {
    /// An empty limiter under `policy`, tracking at most `max_keys` keys, reading `clock`.
    ///
    /// # Errors
    ///
    /// As [`Limiter::new`](ratelimit_lab_api::Limiter::new).
    pub fn new(policy: Policy, max_keys: usize, clock: C) -> Result<Self, LimitError> {
        Ok(ClockedShardedBucket {
            table: Table::new(policy, max_keys)?,
            clock,
        })
    }

    /// [`Limiter::allow`](ratelimit_lab_api::Limiter::allow) at the clock's reading inside the call.
    ///
    /// # Errors
    ///
    /// As [`Limiter::allow`](ratelimit_lab_api::Limiter::allow), never [`LimitError::TimeWentBackwards`](ratelimit_lab_api::LimitError::TimeWentBackwards).
    pub fn allow(&self, key: &str, cost: u64) -> Result<Decision, LimitError> {
        self.table.admit(key, cost, &Read(&self.clock))
    }

    /// [`Limiter::evict_full`](ratelimit_lab_api::Limiter::evict_full) at the clock's reading under every lock.
    ///
    /// # Errors
    ///
    /// None today: the signature keeps [`Limiter::evict_full`](ratelimit_lab_api::Limiter::evict_full)'s.
    pub fn evict_full(&self) -> Result<usize, LimitError> {
        self.table.evict(&Read(&self.clock))
    }

    /// [`Limiter::replace_policy`](ratelimit_lab_api::Limiter::replace_policy) at the clock's reading under every shard lock.
    ///
    /// # Errors
    ///
    /// As [`Limiter::replace_policy`](ratelimit_lab_api::Limiter::replace_policy), never [`LimitError::TimeWentBackwards`](ratelimit_lab_api::LimitError::TimeWentBackwards).
    pub fn replace_policy(&self, next: Policy, expected_version: u64) -> Result<(), LimitError> {
        self.table
            .cutover(next, expected_version, &Read(&self.clock))
    }

    /// [`Limiter::key_count`](ratelimit_lab_api::Limiter::key_count).
    pub fn key_count(&self) -> usize {
        self.table.key_count()
    }

    /// [`Limiter::snapshot`](ratelimit_lab_api::Limiter::snapshot): its observed time is the latest time a call has used.
    pub fn snapshot(&self) -> Option<Snapshot> {
        self.table.snapshot(|latest| latest)
    }

    /// The index of the shard that holds (or would hold) `key`, below
    /// [`SHARDS`](super::SHARDS), as [`ShardedBucket::shard_index`](super::ShardedBucket::shard_index).
    pub fn shard_index(&self, key: &str) -> usize {
        self.table.shard_index(key)
    }

    /// The clock every call reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}
