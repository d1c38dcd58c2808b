//! The seed's single-owner design with no 128-bit arithmetic: a balance is a pair of whole
//! tokens (`u64`) and billionths of a token (`u32`), and every step is checked `u64` math.
//!
//! # Idea
//!
//! A balance is `whole + nanos / 10⁹` tokens with `nanos < 10⁹`. Splitting the elapsed time
//! into seconds and leftover nanoseconds, and the rate into billions and a remainder,
//!
//! ```text
//! elapsed = s × 10⁹ + n          (n < 10⁹)
//! rate    = a × 10⁹ + b          (b < 10⁹, a ≤ M / 10⁹ < 9.3 × 10⁹)
//! earned  = elapsed × rate units
//!         = (s × rate + n × a) tokens  +  n × b units
//! ```
//!
//! so the earning is `s × rate + n × a + ⌊n × b / 10⁹⌋` whole tokens and `(n × b) mod 10⁹`
//! billionths. The retry estimate `⌈(W × 10⁹ + F) / rate⌉` for a shortfall of `W` tokens and
//! `F` billionths is a long division: `W = q × rate + r`, then `r × 10⁹` is divided by the rate
//! by schoolbook doubling over the 30 bits of `10⁹`, keeping the remainder below the rate.
//!
//! # Bounds (why no step overflows or loses a unit)
//!
//! With `M = 2^63 − 1` the bound on every quantity and time below `2^64`:
//!
//! - `n × b < 10⁹ × 10⁹ = 10¹⁸ < 2^60` and `n × a < 10⁹ × 9.23 × 10⁹ < 2^64`;
//! - `s × rate` and the sums of whole tokens may exceed `2^64`: they are *checked*, and an
//!   overflow means the earning is at least `2^64` tokens, more than any capacity (`≤ M`), so
//!   the bucket is full. That is the exact answer, not an approximation;
//! - a sum of two fractions is below `2 × 10⁹ < 2^32`, so it fits the `u32` before the carry;
//! - in the division, the remainder stays below `rate ≤ M`, so doubling it or adding `r < rate`
//!   stays below `2^64`, adding `F < 2^30` too, and the partial quotient stays below `10⁹`;
//!   `q × 10⁹` and the final sum are checked and saturate at [`MAX_QUANTITY`].
//!
//! A balance is clamped to `(capacity, 0)` whenever its whole part reaches the capacity, so I1
//! holds, and admission is exact: `balance ≥ cost` tokens exactly when `whole ≥ cost`, since
//! `cost` is whole and `nanos < 10⁹`.
//!
//! # Why it is still linearizable
//!
//! One `Mutex` owns policy, observed time and map; every call validates, then mutates, under
//! it, and takes effect at one instant inside it.
//!
//! # Cost
//!
//! The same serialization as the seed's monitor. Each refill is a handful of 64-bit divisions
//! and each rejection a 30-step loop instead of a few 128-bit operations; a bucket is 16 bytes
//! of balance instead of 24. Snapshots convert to the `u128` units the API reports.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// A token-bucket limiter whose balances are `(whole tokens, billionths)` pairs in checked
/// 64-bit arithmetic.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::CheckedU64Bucket;
///
/// let limiter = CheckedU64Bucket::new(Policy::new(1, 1, 3)?, 1)?;
/// assert!(limiter.allow("k", 1, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 333_333_334);
/// assert!(!limiter.allow("k", 1, 333_333_333)?.allowed);
/// assert!(limiter.allow("k", 1, 333_333_334)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct CheckedU64Bucket {
    state: Mutex<State>,
}

/// `whole + nanos / 10⁹` tokens; `nanos < 10⁹`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Balance {
    whole: u64,
    nanos: u32,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    balance: Balance,
    last_nanos: u64,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: HashMap<String, Bucket>,
}

const UNIT: u64 = UNITS_PER_TOKEN;
/// [`UNITS_PER_TOKEN`] as the fraction's type.
const UNIT_NANOS: u32 = 1_000_000_000;
const _: () = assert!(UNIT_NANOS as u64 == UNIT && UNIT < 1 << UNIT_BITS);
/// `10⁹ < 2^30`: the bits the long division walks.
const UNIT_BITS: u32 = 30;

/// `x mod 10⁹` as a `u32`: always below `10⁹ < 2^32`.
fn billionths(x: u64) -> u32 {
    u32::try_from(x % UNIT).unwrap_or(0)
}

impl Balance {
    fn full(capacity: u64) -> Balance {
        Balance {
            whole: capacity,
            nanos: 0,
        }
    }

    /// `min(self, capacity)`: whole tokens at or above the capacity mean at least full.
    fn clamp(self, capacity: u64) -> Balance {
        if self.whole >= capacity {
            Balance::full(capacity)
        } else {
            self
        }
    }

    /// `self + other`, or `None` at `2^64` whole tokens or more.
    fn checked_add(self, other: Balance) -> Option<Balance> {
        let nanos = self.nanos + other.nanos; // < 2 × 10⁹ < 2^32
        let (carry, nanos) = if nanos >= UNIT_NANOS {
            (1, nanos - UNIT_NANOS)
        } else {
            (0, nanos)
        };
        Some(Balance {
            whole: self.whole.checked_add(other.whole)?.checked_add(carry)?,
            nanos,
        })
    }

    /// The exact units the API reports: `whole × 10⁹ + nanos < 2^93`.
    fn units(self) -> u128 {
        u128::from(self.whole) * u128::from(UNIT) + u128::from(self.nanos)
    }
}

/// What `elapsed` nanoseconds earn at `rate` tokens per second, or `None` when that is
/// `2^64` whole tokens or more.
fn earned(elapsed: u64, rate: u64) -> Option<Balance> {
    let (s, n) = (elapsed / UNIT, elapsed % UNIT);
    let (a, b) = (rate / UNIT, rate % UNIT);
    let small = n * b; // < 10¹⁸
    let whole = s
        .checked_mul(rate)?
        .checked_add(n.checked_mul(a)?)?
        .checked_add(small / UNIT)?;
    Some(Balance {
        whole,
        nanos: billionths(small),
    })
}

/// `bucket`'s balance at `now` under `policy`, clamped to full.
fn refilled(bucket: &Bucket, policy: &Policy, now: u64) -> Balance {
    let capacity = policy.capacity();
    earned(
        now.saturating_sub(bucket.last_nanos),
        policy.tokens_per_second(),
    )
    .and_then(|e| bucket.balance.checked_add(e))
    .map_or(Balance::full(capacity), |b| b.clamp(capacity))
}

/// `(⌊r × 10⁹ / d⌋, r × 10⁹ mod d)` for `r < d`, by doubling over the bits of `10⁹`: the
/// remainder stays below `d < 2^63`, so `2 × rem` and `rem + r` stay below `2^64`, and the
/// quotient stays below `10⁹`.
fn times_unit_divmod(r: u64, d: u64) -> (u64, u64) {
    let (mut q, mut rem) = (0u64, 0u64);
    for bit in (0..UNIT_BITS).rev() {
        q <<= 1;
        rem <<= 1;
        if rem >= d {
            rem -= d;
            q += 1;
        }
        if (UNIT >> bit) & 1 == 1 {
            rem += r;
            if rem >= d {
                rem -= d;
                q += 1;
            }
        }
    }
    (q, rem)
}

/// Nanoseconds until `balance` covers `cost` tokens at `rate`: `⌈shortfall / rate⌉`,
/// saturating at [`MAX_QUANTITY`]. Requires `balance.whole < cost`.
fn retry_after(balance: Balance, cost: u64, rate: u64) -> u64 {
    // Shortfall `w` tokens and `f` billionths, f < 10⁹.
    let gap = cost.saturating_sub(balance.whole);
    let (w, f) = if balance.nanos == 0 {
        (gap, 0)
    } else {
        (gap.saturating_sub(1), UNIT - u64::from(balance.nanos))
    };
    let (q, r) = (w / rate, w % rate);
    let (qa, ra) = times_unit_divmod(r, rate);
    let tail = ra + f; // < 2^63 + 2^30
    let rounded_up = u64::from(tail % rate != 0);
    q.checked_mul(UNIT)
        .and_then(|x| x.checked_add(qa))
        .and_then(|x| x.checked_add(tail / rate))
        .and_then(|x| x.checked_add(rounded_up))
        .map_or(MAX_QUANTITY, |x| x.min(MAX_QUANTITY))
}

impl State {}

impl CheckedU64Bucket {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No path panics under the lock and errors come before writes: recover from a
        // caller's panic rather than spreading it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Limiter for CheckedU64Bucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(CheckedU64Bucket {
            state: Mutex::new(State {
                policy,
                max_keys,
                observed: 0,
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = self.lock();
        contract::check_key(key)?;
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
            None => Balance::full(policy.capacity()),
        };
        let (allowed, left, retry_after_nanos) = match balance.whole.checked_sub(cost) {
            Some(whole) => (
                true,
                Balance {
                    whole,
                    nanos: balance.nanos,
                },
                0,
            ),
            None => (
                false,
                balance,
                retry_after(balance, cost, policy.tokens_per_second()),
            ),
        };
        let stored = Bucket {
            balance: left,
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
            whole_tokens: left.whole,
            retry_after_nanos,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.lock();
        contract::check_time(now, s.observed)?;
        let policy = s.policy;
        let full = Balance::full(policy.capacity());
        let before = s.buckets.len();
        s.buckets
            .retain(|_, bucket| refilled(bucket, &policy, now) != full);
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
        for bucket in s.buckets.values_mut() {
            *bucket = Bucket {
                balance: refilled(bucket, &old, now).clamp(next.capacity()),
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
            buckets: s
                .buckets
                .iter()
                .map(|(key, b)| {
                    (
                        key.clone(),
                        BucketState {
                            units: b.balance.units(),
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

    const M: u64 = MAX_QUANTITY;

    fn wide_earned(elapsed: u64, rate: u64) -> u128 {
        u128::from(elapsed) * u128::from(rate)
    }

    #[test]
    fn earning_matches_the_wide_product() {
        let samples = [
            0,
            1,
            2,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            12_345_678_901,
        ];
        let rates = [1, 2, 3, 999_999_999, 1_000_000_000, 1_000_000_007, M / 3, M];
        for &e in samples.iter().chain(&[u64::MAX / M, u64::MAX]) {
            for &r in &rates {
                let wide = wide_earned(e, r);
                match earned(e, r) {
                    Some(b) => assert_eq!(b.units(), wide, "{e} × {r}"),
                    None => assert!(wide >= u128::from(u64::MAX) * u128::from(UNIT), "{e} × {r}"),
                }
            }
        }
    }

    #[test]
    fn long_division_matches_the_wide_quotient() {
        let rates = [1, 2, 3, 7, 999_999_999, 1_000_000_000, 1 << 40, M - 1, M];
        for &rate in &rates {
            for &(whole, nanos) in &[(0, 0), (0, 1), (0, 999_999_999), (5, 500_000_000)] {
                for &cost in &[1, 2, 10, 1 << 33, M] {
                    if whole >= cost {
                        continue;
                    }
                    let bal = Balance { whole, nanos };
                    let short = u128::from(cost) * u128::from(UNIT) - bal.units();
                    let wide = short.div_ceil(u128::from(rate)).min(u128::from(M));
                    assert_eq!(
                        u128::from(retry_after(bal, cost, rate)),
                        wide,
                        "{whole}.{nanos} cost {cost} rate {rate}"
                    );
                }
            }
        }
    }

    #[test]
    fn times_unit_divmod_is_exact_at_the_top() {
        let (q, r) = times_unit_divmod(M - 1, M);
        let wide = u128::from(M - 1) * u128::from(UNIT);
        assert_eq!(u128::from(q), wide / u128::from(M));
        assert_eq!(u128::from(r), wide % u128::from(M));
    }
}
