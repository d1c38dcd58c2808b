//! The sharded design of `ShardedLocks`, with a
//! `snapshot` that copies its shards one at a time, each under its own lock, and reads the
//! observed time after them: the copy is not one cut of the state.
//!
//! - **Breaks:** the contract of `snapshot()` ("a consistent copy of the whole state"), and
//!   with it what every white-box check reads: the copy can show a state no order of the
//!   calls produces. No call's outcome is wrong; every admission, eviction and cutover is
//!   atomic, exactly as in `ShardedLocks`.
//! - **Seed mistake:** none of the seed's: its one monitor makes every observation
//!   consistent ("`keyCount()`: Synchronized observation of retained buckets").
//!   [`Mistake::TornSnapshot`](ratelimit_lab_api::Mistake::TornSnapshot) names it.
//! - **Smallest scenario:** keys `a` and `b` each spent once at 0 (capacity 2, 1 token/s);
//!   `allow(a, 1, 1 s)`, `allow(b, 1, 2 s)` and `snapshot()` at once. The snapshot copies
//!   `a`'s shard before `a`'s call, `b`'s shard after `b`'s call, and reads the observed time
//!   2 s: `a` still holds its balance of time 0 although the call at 2 s, which returned before
//!   the copy ended, can only follow the call at 1 s. No point of any legal order holds that.
//!
//! A repair is the one `ShardedLocks` has: take the read lock and then every shard lock, in
//! index order, and read the observed time while holding them all.
#[cfg(all(test, not(loom), not(feature = "shuttle")))]
use ratelimit_lab_api::BucketState;
use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy, Snapshot};

use crate::alternatives::ShardedLocks;

/// `ShardedLocks` whose snapshot is copied shard by shard while calls go on.
#[derive(Debug)]
pub struct TornSnapshot(ShardedLocks);

impl Limiter for TornSnapshot {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        ShardedLocks::new(policy, max_keys).map(TornSnapshot)
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.0.allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.0.evict_full(now)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected_version, now)
    }

    fn key_count(&self) -> usize {
        self.0.key_count()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        // FLAW: each piece under its own lock, released before the next is read, so calls
        // run between the pieces; the copy mixes states from before and after them.
        let policy = self.0.policy_alone();
        let buckets = (0..ShardedLocks::SHARDS)
            .flat_map(|i| self.0.shard_alone(i))
            .collect();
        Some(Snapshot {
            policy,
            observed_nanos: self.0.observed_alone(),
            buckets,
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::alternatives::differential;
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_copy_with_a_call_between_its_pieces_is_a_state_no_order_produces() {
        let bad: TornSnapshot = limiter(2, 1, 4);
        let good: TokenBucket = limiter(2, 1, 4);
        for l in [&good as &dyn Limiter, &bad] {
            assert_eq!(l.allow("a", 1, 0), ok(true, 1, 0));
            assert_eq!(l.allow("b", 1, 0), ok(true, 1, 0));
        }
        // The interleaving, spelled out: the snapshot copies every shard before the two
        // calls, and reads the observed time after them.
        let policy = bad.0.policy_alone();
        let before: Vec<_> = (0..ShardedLocks::SHARDS)
            .flat_map(|i| bad.0.shard_alone(i))
            .collect();
        for l in [&good as &dyn Limiter, &bad] {
            assert_eq!(l.allow("a", 1, SECOND), ok(true, 1, 0));
            assert_eq!(l.allow("b", 1, 2 * SECOND), ok(true, 1, 0));
        }
        let torn = Snapshot {
            policy,
            observed_nanos: bad.0.observed_alone(),
            buckets: before.into_iter().collect(),
        };
        // Every point of the only legal order (a's call, then b's): before b's call the
        // observed time is below 2 s; after it, b holds 1 token as of 2 s. The copy has the
        // observed time 2 s and b's balance of time 0 (1 token then, 2 tokens by 2 s).
        assert_eq!(torn.observed_nanos, 2 * SECOND);
        let unit = u128::from(ratelimit_lab_api::UNITS_PER_TOKEN);
        let stored = |s: &Snapshot| s.buckets.get("b").copied();
        assert_eq!(
            stored(&torn),
            Some(BucketState {
                units: unit,
                last_nanos: 0
            })
        );
        let reference = good.snapshot().expect("the reference offers snapshots");
        assert_eq!(
            stored(&reference),
            Some(BucketState {
                units: unit,
                last_nanos: 2 * SECOND
            })
        );
        // Taken at rest, the snapshot is the reference's.
        assert_eq!(bad.snapshot(), good.snapshot());
    }

    #[test]
    fn random_sequential_histories_match_the_reference() {
        differential::against_reference::<TornSnapshot>();
    }
}
