//! The seed's design: one monitor owns the bucket map, the policy and the observed time.
//!
//! Every method takes the one lock, validates before it mutates, and does all its work
//! inside; so each call is one indivisible decision (R2), cleanup cannot race a spend (R3)
//! and a cutover publishes map, policy and time together (R4).
//!
//! # Arithmetic
//!
//! Balances are `u128` units. With every quantity at most `M = 2^63 − 1` and time below
//! `2^64`:
//!
//! - a ceiling is `capacity × 10⁹ ≤ M × 10⁹ < 2^63 × 2^30 = 2^93`;
//! - an earning is `elapsed × rate < 2^64 × 2^63 = 2^127`;
//! - a stored balance never exceeds its ceiling (I1), so `balance + earning < 2^93 + 2^127 <
//!   2^128` before the clamp;
//! - a shortfall is at most a ceiling, so `shortfall + rate − 1 < 2^93 + 2^63` in the retry
//!   estimate.
//!
//! No intermediate can overflow anywhere in the domain, and no call allocates beyond the one
//! `String` that stores a new key (plus, when that key does not fit the key table's current
//! allocation, the table's amortized growth, as with any `HashMap`; eviction keeps the
//! allocation, so a table that has held `n` keys takes `n` again without growing).
//! `tests/no_alloc.rs` counts them.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
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
    buckets: HashMap<String, BucketState>,
}

/// `capacity × 10⁹`: below 2^93.
fn ceiling(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance of `bucket` at `now` under `policy`. Requires `bucket.last_nanos <= now` and
/// `bucket.units <= ceiling(policy)`, both kept by every method.
fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let elapsed = now.saturating_sub(bucket.last_nanos);
    let earned = u128::from(elapsed) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(ceiling(policy))
}

/// Refills `bucket` to `now`, deducts `cost` tokens if the balance covers them, and stores
/// the balance at `now` either way. Requires what [`refilled`] requires and `cost` in
/// `1..=capacity`.
fn spend(bucket: &mut BucketState, policy: &Policy, cost: u64, now: u64) -> Decision {
    let balance = refilled(bucket, policy, now);
    let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
    let (allowed, after, retry_after_nanos) = if balance >= need {
        (true, balance - need, 0)
    } else {
        let retry = retry_after(need - balance, policy.tokens_per_second());
        (false, balance, retry)
    };
    *bucket = BucketState {
        units: after,
        last_nanos: now,
    };
    Decision {
        allowed,
        whole_tokens: whole_tokens(after),
        retry_after_nanos,
    }
}

/// `floor(units / 10⁹)`, for a balance `units ≤ capacity × 10⁹`, so the quotient is at most
/// the capacity and fits a `u64`.
///
/// A balance below 2^64 units (every balance of a bucket of up to 18,446,744,073 tokens) is
/// divided as a `u64`, which compiles to a multiplication by a constant; a larger one as a
/// `u128`, which is a call into the runtime's 128-bit division. Both give the same quotient.
fn whole_tokens(units: u128) -> u64 {
    match u64::try_from(units) {
        Ok(small) => small / UNITS_PER_TOKEN,
        Err(_) => u64::try_from(units / u128::from(UNITS_PER_TOKEN)).unwrap_or(MAX_QUANTITY),
    }
}

/// `ceil(shortfall / rate)` nanoseconds, saturated at [`MAX_QUANTITY`]: when a rejected
/// request would pass with no competitor. `shortfall ≤ capacity × 10⁹ < 2^93` and
/// `rate ≥ 1`; below 2^64 the division is a `u64` one, above it a `u128` one, with the same
/// quotient.
fn retry_after(shortfall: u128, rate: u64) -> u64 {
    let wait = match u64::try_from(shortfall) {
        Ok(small) => small.div_ceil(rate),
        Err(_) => {
            let wide = shortfall.div_ceil(u128::from(rate));
            u64::try_from(wide).unwrap_or(u64::MAX)
        }
    };
    wait.min(MAX_QUANTITY)
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
        let decision = if let Some(bucket) = s.buckets.get_mut(key) {
            spend(bucket, &policy, cost, now)
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
            s.buckets.insert(key.to_owned(), bucket);
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
        s.buckets.retain(|_, b| refilled(b, &policy, now) != full);
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
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: refilled(bucket, &old, now).min(new_ceiling),
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
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets: s.buckets.iter().map(|(k, b)| (k.clone(), *b)).collect(),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const M: u64 = MAX_QUANTITY;

    #[test]
    fn the_largest_earning_and_balance_fit() {
        let p = Policy::new(M, M, M).unwrap();
        let b = BucketState {
            units: ceiling(&p) - 1,
            last_nanos: 0,
        };
        assert_eq!(refilled(&b, &p, u64::MAX), ceiling(&p));
        assert!(ceiling(&p) < 1u128 << 93);
        assert!(u128::from(u64::MAX) * u128::from(M) < 1u128 << 127);
    }

    #[test]
    fn the_narrow_divisions_agree_with_the_wide_ones_around_2_pow_64() {
        let unit = u128::from(UNITS_PER_TOKEN);
        let edge = 1u128 << 64;
        for units in [
            0,
            1,
            unit - 1,
            unit,
            edge - unit,
            edge - 1,
            edge,
            edge + 1,
            ceiling(&Policy::new(1, M, 1).unwrap()),
        ] {
            assert_eq!(u128::from(whole_tokens(units)), units / unit, "{units}");
            for rate in [1, 2, 3, 999_999_999, UNITS_PER_TOKEN, M] {
                let wide = units.div_ceil(u128::from(rate)).min(u128::from(M));
                assert_eq!(
                    u128::from(retry_after(units, rate)),
                    wide,
                    "{units} / {rate}"
                );
            }
        }
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
