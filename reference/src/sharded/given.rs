//! [`ShardedBucket`]: the seed's contract with the key space split into independently locked
//! shards, for admissions that scale with threads; every call is given its time.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::atomic::{AtomicU64, Ordering},
    Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::table::{Table, Timing};

/// The exact token-bucket limiter with its keys in [`SHARDS`](super::SHARDS) locked shards,
/// every call given its time (see below why every call is still one indivisible decision).
/// For time read inside the boundary, see
/// [`ClockedShardedBucket`](super::ClockedShardedBucket).
///
/// # State beyond the shards
///
/// `observed`: one `AtomicU64`, the largest time a successful call has used. Every call that
/// raises it does so with one `fetch_max` while holding the lock of the shard it decides in
/// (or all of them).
///
/// # Why every call has a linearization point
///
/// - An `allow` on a tracked key holds its shard's lock from the lookup to the update, so no
///   other call reads or writes that bucket or the shard's policy meanwhile (a cutover needs
///   every shard lock). Its `fetch_max(now)` on `observed` is its linearization point: it
///   succeeds (the previous value is at most `now`) and the decision is the state's at that
///   instant, or it returns a larger previous value, and `TimeWentBackwards` with that value
///   is the answer at that instant (the maximum changed nothing). When `observed` already
///   holds `now`, a load that finds it is the point, and nothing is written. `InvalidKey`
///   and `InvalidCost` hold at any instant under the shard lock.
/// - A new key's `allow` releases its shard, takes `book` and then the shard again, and looks
///   the key up again (another call may have added it; then it goes on as above). With both
///   held, the key count cannot change. It loads `observed`: above `now`, the answer is
///   `TimeWentBackwards` at that load; otherwise, at a full key table, `KeyCapacityReached`
///   at that load, changing nothing. Otherwise its `fetch_max(now)` is its linearization
///   point as above, and the bucket and the count are updated before either lock is
///   released, so whoever reads them (under the same locks) sees both or neither.
/// - `evict_full` and `replace_policy` hold every shard lock (evict `book` too), so nothing
///   else reads or writes any bucket or `observed` while they run: any instant inside is
///   their linearization point. `key_count` reads the count under `book`; `snapshot` copies
///   under `book` and every shard.
///
/// The observed time is thus always the maximum over the calls linearized so far, and each
/// call's answer is the sequential contract's answer in that order.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_reference::ShardedBucket;
///
/// let limiter = ShardedBucket::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 500_000_000);
/// // 0.5 s later one token has come back.
/// assert!(limiter.allow("k", 1, 500_000_000)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct ShardedBucket {
    table: Table,
    observed: AtomicU64,
}

/// A call given its time `now`, checked against `observed`.
struct Given<'a> {
    now: u64,
    observed: &'a AtomicU64,
}

impl Timing for Given<'_> {
    fn claim(&self, _shard_observed: u64) -> Result<u64, LimitError> {
        let now = self.now;
        // A load first: when the observed time is already `now` (or above), nothing is
        // written, so calls at one time on different shards share the line read-only.
        let seen = self.observed.load(Ordering::SeqCst);
        let before = if seen < now {
            self.observed.fetch_max(now, Ordering::SeqCst)
        } else {
            seen
        };
        // Every shard's observed time is some call's time, so at most `observed`: `now` is
        // at least the shard's when `Ok`.
        contract::check_time(now, before)?;
        Ok(now)
    }

    fn check_before_bound(&self) -> Result<(), LimitError> {
        contract::check_time(self.now, self.observed.load(Ordering::SeqCst))
    }

    fn settle(&self, _shards_observed: u64) -> Result<u64, LimitError> {
        contract::check_time(self.now, self.observed.load(Ordering::SeqCst))?;
        Ok(self.now)
    }

    fn publish(&self, now: u64) {
        self.observed.store(now, Ordering::SeqCst);
    }
}

impl ShardedBucket {
    fn at(&self, now: u64) -> Given<'_> {
        Given {
            now,
            observed: &self.observed,
        }
    }
}

impl ShardedBucket {
    /// The index of the shard that holds (or would hold) `key`, below
    /// [`SHARDS`](super::SHARDS): which calls can run side by side. Fixed for the limiter's
    /// life; it differs between limiters (the hash is keyed at random), except under loom and
    /// shuttle.
    pub fn shard_index(&self, key: &str) -> usize {
        self.table.shard_index(key)
    }
}

impl Limiter for ShardedBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(ShardedBucket {
            table: Table::new(policy, max_keys)?,
            observed: AtomicU64::new(0),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.table.admit(key, cost, &self.at(now))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.table.evict(&self.at(now))
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.table.cutover(next, expected_version, &self.at(now))
    }

    fn key_count(&self) -> usize {
        self.table.key_count()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        self.table
            .snapshot(|_| self.observed.load(Ordering::SeqCst))
    }
}
