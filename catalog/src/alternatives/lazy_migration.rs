//! Lazy policy migration: `replace_policy` does constant work, and each bucket catches up with
//! the cutovers it missed the next time it is touched.
//!
//! # Idea
//!
//! One `Mutex` owns the state, as in the seed. A cutover validates, then appends
//! `(old policy, cutover time)` to a history and installs the new policy; it visits no bucket.
//! Each bucket remembers the version of the policy it was last settled under. Touching a bucket
//! (an `allow`, an `evict_full`, or a copy for `snapshot`) first *settles* it by replaying the
//! cutovers it missed, oldest first: refill under the policy of that period up to the cutover
//! time, clamp to the next policy's capacity, and move on.
//!
//! # Why it is still linearizable and exact
//!
//! Every call runs entirely under the one lock, so it takes effect at one instant. Settling is
//! the eager cutover rule applied late: the eager design maps a bucket `(u, t)` at a cutover
//! at `c` from policy `p` to `p'` to `(min(refill_p(u, t → c), full(p')), c)`, a function of
//! the bucket alone. Applying the same functions in the same order later yields the same state,
//! and nothing can observe a bucket between its cutovers and its next touch except through a
//! settled copy. A bucket untouched across several cutovers replays each of them; a cutover
//! with no buckets is recorded and pruned at once; a bucket created after a cutover carries the
//! new version and replays nothing; `evict_full` compares the *settled* balance with the new
//! capacity. So every `Decision`, every eviction count and every snapshot equals the eager
//! design's, `last_nanos` included.
//!
//! Arithmetic is `u128`: a full bucket is `capacity × 10⁹ < 2^63 × 2^30 = 2^93`, an earning
//! is `elapsed × rate < 2^64 × 2^63 = 2^127`, a settled balance is at most the smaller of two
//! full buckets, so `balance + earning < 2^93 + 2^127 < 2^128`; a shortfall is at most `2^93`.
//! Versions are compared, never incremented, so the history needs no counter that could wrap.
//!
//! # Cost
//!
//! `replace_policy` is `O(1)` apart from an `O(log K)` lookup of the oldest version still
//! held. Touching a bucket costs `O(log H + m)` for `m` missed cutovers. Memory is `O(K + H)`:
//! the history keeps only cutovers at or after the oldest version any bucket still carries
//! (counted per version; pruned at each cutover and whenever a bucket moves to a newer
//! version), and `evict_full` settles every bucket and empties it. The price is that `H` is
//! unbounded while some bucket sits untouched and cutovers keep coming, and the total work of
//! cutovers is deferred rather than removed.
use std::collections::{BTreeMap, HashMap, VecDeque};

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// A token-bucket limiter whose policy cutovers are recorded in `O(1)` and applied to each
/// bucket on its next touch.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::LazyMigration;
///
/// let limiter = LazyMigration::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// // At 0.5 s the empty bucket holds one token under the old rate; capacity 20 adds nothing.
/// limiter.replace_policy(Policy::new(2, 20, 4)?, 1, 500_000_000)?;
/// // One more token by 0.75 s under the new rate.
/// assert_eq!(limiter.allow("k", 2, 750_000_000)?.whole_tokens, 0);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct LazyMigration {
    state: Mutex<State>,
}

/// A policy that was replaced, and when.
#[derive(Clone, Copy, Debug)]
struct Cutover {
    /// The policy in force until `at`.
    policy: Policy,
    /// The time of the cutover.
    at: u64,
}

/// A bucket as stored: its balance at `last_nanos`, under the policy of version `version`.
#[derive(Clone, Copy, Debug)]
struct LazyBucket {
    units: u128,
    last_nanos: u64,
    version: u64,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: HashMap<String, LazyBucket>,
    /// Cutovers in order; versions strictly ascending. The entry for version `v` ends the
    /// period in which `v` was in force. Holds no entry older than the oldest version in
    /// `per_version`.
    history: VecDeque<Cutover>,
    /// How many buckets carry each version.
    per_version: BTreeMap<u64, usize>,
}

fn full_units(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance `units` (as of `last`) reaches at `now` under `policy`, clamped to full.
fn refill(units: u128, last: u64, policy: &Policy, now: u64) -> u128 {
    let earned = u128::from(now.saturating_sub(last)) * u128::from(policy.tokens_per_second());
    (units + earned).min(full_units(policy))
}

impl State {
    /// `bucket` brought to the current policy version: the eager cutovers it missed, replayed
    /// in order. Pure: the caller decides whether to store it.
    fn settled(&self, bucket: LazyBucket) -> LazyBucket {
        if bucket.version == self.policy.version() {
            return bucket;
        }
        let first = self
            .history
            .partition_point(|c| c.policy.version() < bucket.version);
        let mut missed = self.history.range(first..).peekable();
        let (mut units, mut last) = (bucket.units, bucket.last_nanos);
        while let Some(cut) = missed.next() {
            let next = missed.peek().map_or(self.policy, |later| later.policy);
            units = refill(units, last, &cut.policy, cut.at).min(full_units(&next));
            last = cut.at;
        }
        LazyBucket {
            units,
            last_nanos: last,
            version: self.policy.version(),
        }
    }

    fn count_version(&mut self, version: u64) {
        *self.per_version.entry(version).or_insert(0) += 1;
    }

    fn uncount_version(&mut self, version: u64) {
        if let Some(n) = self.per_version.get_mut(&version) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_version.remove(&version);
            }
        }
    }

    /// Drops cutovers that no bucket still has to replay.
    fn prune(&mut self) {
        let oldest = self
            .per_version
            .keys()
            .next()
            .copied()
            .unwrap_or(self.policy.version());
        while self
            .history
            .front()
            .is_some_and(|c| c.policy.version() < oldest)
        {
            self.history.pop_front();
        }
    }
}

impl LazyMigration {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No path panics while holding the lock, and errors come before writes: a lock
        // poisoned by a caller's panic still guards consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Limiter for LazyMigration {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(LazyMigration {
            state: Mutex::new(State {
                policy,
                max_keys,
                observed: 0,
                buckets: HashMap::new(),
                history: VecDeque::new(),
                per_version: BTreeMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = self.lock();
        contract::check_key(key)?;
        let policy = s.policy;
        contract::check_cost(&policy, cost)?;
        contract::check_time(now, s.observed)?;
        let (balance, old_version) = match s.buckets.get(key) {
            Some(stored) => {
                let b = s.settled(*stored);
                (
                    refill(b.units, b.last_nanos, &policy, now),
                    Some(stored.version),
                )
            }
            None if s.buckets.len() >= s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                });
            }
            None => (full_units(&policy), None),
        };
        let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
        let allowed = balance >= need;
        let left = if allowed { balance - need } else { balance };
        let retry_after_nanos = if allowed {
            0
        } else {
            let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
            u64::try_from(wait).map_or(MAX_QUANTITY, |w| w.min(MAX_QUANTITY))
        };
        let stored = LazyBucket {
            units: left,
            last_nanos: now,
            version: policy.version(),
        };
        match s.buckets.get_mut(key) {
            Some(bucket) => *bucket = stored,
            None => {
                s.buckets.insert(key.to_owned(), stored);
            }
        }
        if old_version != Some(policy.version()) {
            if let Some(v) = old_version {
                s.uncount_version(v);
            }
            s.count_version(policy.version());
            s.prune();
        }
        s.observed = now;
        Ok(Decision {
            allowed,
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
        let mut buckets = std::mem::take(&mut s.buckets);
        let before = buckets.len();
        buckets.retain(|_, bucket| {
            *bucket = s.settled(*bucket);
            refill(bucket.units, bucket.last_nanos, &policy, now) != full
        });
        let removed = before - buckets.len();
        // Every survivor now carries the current version: no cutover is left to replay.
        s.per_version.clear();
        if !buckets.is_empty() {
            s.per_version.insert(policy.version(), buckets.len());
        }
        s.buckets = buckets;
        s.history.clear();
        s.observed = now;
        Ok(removed)
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
        s.history.push_back(Cutover {
            policy: old,
            at: now,
        });
        s.policy = next;
        s.observed = now;
        s.prune();
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.lock().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.lock();
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets: s
                .buckets
                .iter()
                .map(|(key, stored)| {
                    let b = s.settled(*stored);
                    (
                        key.clone(),
                        BucketState {
                            units: b.units,
                            last_nanos: b.last_nanos,
                        },
                    )
                })
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;

    fn history_len(limiter: &LazyMigration) -> usize {
        limiter.lock().history.len()
    }

    fn p(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).unwrap()
    }

    #[test]
    fn a_cutover_with_no_buckets_keeps_no_history() {
        let limiter = LazyMigration::new(p(1, 10, 2), 4).unwrap();
        limiter.replace_policy(p(2, 20, 4), 1, 5).unwrap();
        assert_eq!(history_len(&limiter), 0);
    }

    #[test]
    fn history_is_pruned_once_the_oldest_bucket_settles() {
        let limiter = LazyMigration::new(p(1, 10, 2), 4).unwrap();
        limiter.allow("old", 10, 0).unwrap();
        for v in 2..=6 {
            limiter
                .replace_policy(p(v, 10 + v, v), v - 1, v * 100)
                .unwrap();
        }
        assert_eq!(history_len(&limiter), 5);
        limiter.allow("new", 1, 700).unwrap();
        assert_eq!(
            history_len(&limiter),
            5,
            "the untouched bucket still needs them"
        );
        limiter.allow("old", 1, 800).unwrap();
        assert_eq!(history_len(&limiter), 0);
    }

    #[test]
    fn settling_replays_each_missed_cutover() {
        let limiter = LazyMigration::new(p(1, 10, 2), 4).unwrap();
        limiter.allow("k", 10, 0).unwrap();
        // 0.5 s at 2/s: 1 token; clamp to capacity 4 leaves it.
        limiter.replace_policy(p(2, 4, 10), 1, 500_000_000).unwrap();
        // 0.5 s at 10/s: 1 + 5 = 6, clamped by the old capacity 4, then by the new 3.
        limiter
            .replace_policy(p(3, 3, 1), 2, 1_000_000_000)
            .unwrap();
        let snap = limiter.snapshot().unwrap();
        assert_eq!(
            snap.buckets["k"],
            BucketState {
                units: 3 * u128::from(UNITS_PER_TOKEN),
                last_nanos: 1_000_000_000
            }
        );
        assert_eq!(limiter.evict_full(1_000_000_000), Ok(1));
        assert_eq!(history_len(&limiter), 0);
    }

    #[test]
    fn eviction_compares_the_settled_balance() {
        let limiter = LazyMigration::new(p(1, 10, 2), 4).unwrap();
        limiter.allow("k", 1, 0).unwrap();
        limiter.allow("k", 1, 10_000_000_000).unwrap();
        // Full under the old policy at the cutover, but not under the larger capacity.
        limiter
            .replace_policy(p(2, 20, 1), 1, 20_000_000_000)
            .unwrap();
        assert_eq!(limiter.evict_full(20_000_000_000), Ok(0));
        assert_eq!(limiter.evict_full(29_999_999_999), Ok(0));
        assert_eq!(limiter.evict_full(30_000_000_000), Ok(1));
    }
}
