//! The seed's design: one monitor owns the bucket map, the policy and the observed time.
//!
//! Every method takes the one lock, validates before it mutates, and does all its work
//! inside; so each call is one indivisible decision (R2), cleanup cannot race a spend (R3)
//! and a cutover publishes map, policy and time together (R4).
//!
//! # Arithmetic
//!
//! Exact, in `u128` units (the crate's `arithmetic` module, with its bounds).
//!
//! No intermediate can overflow anywhere in the domain, and no call allocates beyond the one
//! `Box<str>` that stores a new key (plus, when that key does not fit the key table's current
//! allocation, the table's amortized growth, as with any `HashMap`; eviction keeps the
//! allocation, so a table that has held `n` keys takes `n` again without growing).
//! `tests/no_alloc.rs` counts them.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;

use crate::arithmetic::{ceiling, refilled, spend};
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

/// The exact, single-owner token-bucket limiter of the seed.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_reference::TokenBucket;
///
/// let limiter = TokenBucket::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// let d = limiter.allow("k", 1, 0)?;
/// assert!(!d.allowed);
/// assert_eq!(d.retry_after_nanos, 500_000_000);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct TokenBucket {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: HashMap<Box<str>, Entry>,
}

/// A bucket as the map stores it: a [`BucketState`] in 24 bytes aligned to 8 (the `u128`
/// balance as its low and high 64 bits), where `BucketState` takes 32 aligned to 16. With
/// its key (a `Box<str>`, 16 bytes) an entry of the map takes 40 bytes instead of 64, so
/// more of a large table stays in the caches. The arithmetic works on the `BucketState`
/// it unpacks to; packing and unpacking are moves, with nothing lost.
#[derive(Clone, Copy, Debug)]
struct Entry {
    units: [u64; 2],
    last_nanos: u64,
}

impl From<BucketState> for Entry {
    #[inline]
    fn from(b: BucketState) -> Self {
        // Truncations that split the balance into its low and high halves.
        #[allow(clippy::cast_possible_truncation)]
        Entry {
            units: [b.units as u64, (b.units >> 64) as u64],
            last_nanos: b.last_nanos,
        }
    }
}

impl From<Entry> for BucketState {
    #[inline]
    fn from(e: Entry) -> Self {
        BucketState {
            units: u128::from(e.units[0]) | u128::from(e.units[1]) << 64,
            last_nanos: e.last_nanos,
        }
    }
}

impl TokenBucket {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code path panics while holding the lock; recover the state if a caller's panic
        // ever poisoned it rather than spreading the panic.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Limiter for TokenBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(TokenBucket {
            state: Mutex::new(State {
                policy,
                max_keys,
                observed: 0,
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut guard = self.lock();
        let s = &mut *guard;
        contract::check_key(key)?;
        contract::check_cost(&s.policy, cost)?;
        contract::check_time(now, s.observed)?;
        let policy = s.policy;
        // One lookup for a key already tracked; a new key pays a second one to insert.
        let decision = if let Some(entry) = s.buckets.get_mut(key) {
            let mut bucket = BucketState::from(*entry);
            let decision = spend(&mut bucket, &policy, cost, now);
            *entry = Entry::from(bucket);
            decision
        } else if s.buckets.len() >= s.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: s.max_keys,
            });
        } else {
            let mut bucket = BucketState {
                units: ceiling(&policy),
                last_nanos: now,
            };
            let decision = spend(&mut bucket, &policy, cost, now);
            s.buckets.insert(key.into(), Entry::from(bucket));
            decision
        };
        s.observed = now;
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.lock();
        contract::check_time(now, s.observed)?;
        let policy = s.policy;
        let full = ceiling(&policy);
        let before = s.buckets.len();
        s.buckets
            .retain(|_, e| refilled(&BucketState::from(*e), &policy, now) != full);
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
        // Nothing below can fail, so updating in place publishes all of it at once under the
        // lock, with no temporary map: refill under the old policy, clamp to the new ceiling.
        let old = s.policy;
        let new_ceiling = ceiling(&next);
        for entry in s.buckets.values_mut() {
            *entry = Entry::from(BucketState {
                units: refilled(&BucketState::from(*entry), &old, now).min(new_ceiling),
                last_nanos: now,
            });
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
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets: s
                .buckets
                .iter()
                .map(|(k, e)| (k.to_string(), BucketState::from(*e)))
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const M: u64 = ratelimit_lab_api::MAX_QUANTITY;

    #[test]
    fn an_entry_holds_every_balance_exactly() {
        for units in [
            0,
            1,
            u128::from(u64::MAX),
            1 << 64,
            (1 << 93) - 1,
            u128::MAX,
        ] {
            let b = BucketState {
                units,
                last_nanos: u64::MAX,
            };
            assert_eq!(BucketState::from(Entry::from(b)), b);
        }
        assert_eq!(std::mem::size_of::<(Box<str>, Entry)>(), 40);
    }

    #[test]
    fn extremes_do_not_overflow() {
        let limiter = TokenBucket::new(Policy::new(1, M, 1).unwrap(), 1).unwrap();
        let d = limiter.allow("k", M, 0).unwrap();
        assert_eq!((d.allowed, d.whole_tokens), (true, 0));
        let d = limiter.allow("k", M, u64::MAX - 1).unwrap();
        assert!(!d.allowed);
        assert_eq!(d.retry_after_nanos, M, "saturates");
        let d = limiter.allow("k", 1, u64::MAX).unwrap();
        assert_eq!(
            d.whole_tokens, 18_446_744_072,
            "u64::MAX ns at 1 token/s, minus 1"
        );
    }
}
