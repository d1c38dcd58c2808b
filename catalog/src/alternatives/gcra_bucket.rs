//! The generic cell rate algorithm (GCRA): per key, no balance at all, only the *theoretical
//! arrival time*, the instant at which the bucket is full again, kept exactly.
//!
//! # Idea
//!
//! Under a policy with rate `r` (units per nanosecond) and a full bucket of `F = capacity ×
//! 10⁹` units, a bucket is described completely by the instant `T` at which it is full
//! again: its *debt* (what it lacks) at a time `t` is `max(0, (T − t) × r)` units and its
//! balance `F − debt`. An admission of `cost` pushes the arrival time by the request's
//! emission interval, `T' = max(T, t) + cost × 10⁹ / r`, and is allowed exactly when the
//! pushed time stays within the burst tolerance `F / r` of now, that is when `(T' − t) × r =
//! debt + cost × 10⁹ ≤ F`, that is when the balance covers the cost: the seed's comparison.
//! A refused caller can retry once `T' − F / r` has passed: `⌈(debt + cost × 10⁹ − F) / r⌉`
//! nanoseconds, the seed's ceiling estimate.
//!
//! `T` is rarely a whole nanosecond (`cost × 10⁹ / r` need not be), so it is stored as a
//! pair: `full_at`, the first whole nanosecond at which the bucket is full, and `slack`, by
//! how many units `full_at` overshoots the exact instant, `0 ≤ slack < r`. The debt at a whole
//! nanosecond `t` is then `(full_at − t) × r − slack` before `full_at` and `0` from it on
//! (for `t < full_at`, `t ≤ full_at − 1` lies before the exact instant, which is above
//! `full_at − 1`). Writing a debt `D` back at `t` gives `full_at = t + ⌈D / r⌉` and `slack =
//! ⌈D / r⌉ × r − D`. Nothing is rounded anywhere: every outcome equals the seed's.
//!
//! Consequences of storing a time rather than a balance:
//!
//! - nothing earns credit as time passes, and nothing needs a `last_nanos`: the state at any
//!   later time follows from `T`. A *rejection* changes nothing stored (re-encoding the debt
//!   at `t` gives the same exact `T`), which is the seed's "a rejection keeps its credit";
//! - `evict_full(now)` drops exactly the keys with `full_at ≤ now`: full at `now`;
//! - a cutover (rate `r₀`, full `F₀` to rate `r₁`, full `F₁`) reads each bucket's balance at
//!   `now` under the *old* rate, `B = F₀ − debt₀(now)`, clamps it, `min(B, F₁)`, and writes
//!   the new debt `F₁ − min(B, F₁)` back as an arrival time under the *new* rate: the old rate
//!   earns everything before the cutover and the new one everything after;
//! - [`snapshot`](Limiter::snapshot) reports each bucket as the balance it holds *at the
//!   snapshot's observed time*, dated that time (`last_nanos = observed_nanos` for every
//!   key). The reference dates each bucket at its own last call instead; the two describe the
//!   same balances at every time from the observed time on.
//!
//! # Bounds
//!
//! With every quantity at most `M = 2^63 − 1` and times below `2^64`: a debt is at most
//! `F < 2^93`; `⌈D / r⌉ ≤ D`, so `full_at < 2^64 + 2^93`; `⌈D / r⌉ × r < D + r < 2^94`; at a
//! later time `t`, `(full_at − t) × r ≤ ⌈D / r⌉ × r`. Every product fits a `u128`. A stored
//! arrival time was written at a time at most the observed time, and every call that reads
//! one has `now` at least the observed time, so a debt never exceeds `F`.
//!
//! # Why it is linearizable
//!
//! One `Mutex` owns the policy, the observed time and the map of arrival times; every call
//! validates in the contract's order, then mutates, under it, and takes effect at one instant
//! inside it.
//!
//! # Cost
//!
//! The serialization of one lock, as the seed's monitor. A bucket is two `u128`s and no
//! timestamp of its own; an admission is one multiplication and one division, and a refused
//! one writes no bucket; a snapshot computes every balance.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// A token-bucket limiter that stores, per key, the exact instant its bucket is full again.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{Limiter, Policy};
/// use ratelimit_lab_catalog::alternatives::GcraBucket;
///
/// let limiter = GcraBucket::new(Policy::new(1, 10, 2)?, 100)?;
/// assert!(limiter.allow("k", 10, 0)?.allowed);
/// assert_eq!(limiter.allow("k", 1, 0)?.retry_after_nanos, 500_000_000);
/// assert!(limiter.allow("k", 1, 500_000_000)?.allowed);
/// # Ok::<(), ratelimit_lab_api::LimitError>(())
/// ```
#[derive(Debug)]
pub struct GcraBucket {
    state: Mutex<State>,
}

/// The exact instant a bucket is full again: `full_at − slack / rate` nanoseconds, under the
/// rate in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arrival {
    /// The first whole nanosecond at which the bucket is full.
    full_at: u128,
    /// How many units `full_at` lies beyond the exact instant: below the rate.
    slack: u128,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    arrivals: HashMap<String, Arrival>,
}

/// `F = capacity × 10⁹ < 2^93`.
fn full_units(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

impl Arrival {
    /// A bucket that is full at `now`.
    fn full(now: u64) -> Arrival {
        Arrival {
            full_at: u128::from(now),
            slack: 0,
        }
    }

    /// The units the bucket lacks at `now` under `rate`: `(T − now) × rate`, or `0` once full.
    fn debt(self, rate: u64, now: u64) -> u128 {
        let now = u128::from(now);
        if now >= self.full_at {
            0
        } else {
            (self.full_at - now) * u128::from(rate) - self.slack
        }
    }

    /// The arrival time of a bucket lacking `debt` units at `now` under `rate`.
    fn owing(debt: u128, rate: u64, now: u64) -> Arrival {
        let rate = u128::from(rate);
        let wait = debt.div_ceil(rate);
        Arrival {
            full_at: u128::from(now) + wait,
            slack: wait * rate - debt,
        }
    }
}

/// Whole tokens in a balance of at most `F`: at most the capacity.
fn whole_tokens(units: u128, policy: &Policy) -> u64 {
    u64::try_from(units / u128::from(UNITS_PER_TOKEN)).unwrap_or(policy.capacity())
}

impl GcraBucket {
    // No path panics while holding the lock; errors are returned before writes, so a lock
    // poisoned by a caller's panic still guards consistent state: recover it.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Limiter for GcraBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(GcraBucket {
            state: Mutex::new(State {
                policy,
                max_keys,
                observed: 0,
                arrivals: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        let mut s = self.lock();
        let policy = s.policy;
        contract::check_cost(&policy, cost)?;
        contract::check_time(now, s.observed)?;
        let arrival = match s.arrivals.get(key) {
            Some(arrival) => *arrival,
            None if s.arrivals.len() >= s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                });
            }
            None => Arrival::full(now),
        };
        let rate = policy.tokens_per_second();
        let full = full_units(&policy);
        let debt = arrival.debt(rate, now);
        // The debt once the request's emission interval is added: (T' − now) × rate.
        let pushed = debt + u128::from(cost) * u128::from(UNITS_PER_TOKEN);
        let decision = if pushed <= full {
            let pushed_arrival = Arrival::owing(pushed, rate, now);
            match s.arrivals.get_mut(key) {
                Some(stored) => *stored = pushed_arrival,
                None => {
                    s.arrivals.insert(key.to_owned(), pushed_arrival);
                }
            }
            Decision {
                allowed: true,
                whole_tokens: whole_tokens(full - pushed, &policy),
                retry_after_nanos: 0,
            }
        } else {
            // Refused: the arrival time stands, and with it every fraction of credit. (A new
            // key is never refused: it is full and the cost is at most the capacity.)
            let wait = (pushed - full).div_ceil(u128::from(rate));
            Decision {
                allowed: false,
                whole_tokens: whole_tokens(full - debt, &policy),
                retry_after_nanos: u64::try_from(wait)
                    .map_or(MAX_QUANTITY, |w| w.min(MAX_QUANTITY)),
            }
        };
        s.observed = now;
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.lock();
        contract::check_time(now, s.observed)?;
        let before = s.arrivals.len();
        s.arrivals
            .retain(|_, arrival| arrival.full_at > u128::from(now));
        s.observed = now;
        Ok(before - s.arrivals.len())
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
        let (old_full, new_full) = (full_units(&old), full_units(&next));
        for arrival in s.arrivals.values_mut() {
            let balance = old_full - arrival.debt(old.tokens_per_second(), now);
            let kept = balance.min(new_full);
            *arrival = Arrival::owing(new_full - kept, next.tokens_per_second(), now);
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.lock().arrivals.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.lock();
        let (full, rate) = (full_units(&s.policy), s.policy.tokens_per_second());
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets: s
                .arrivals
                .iter()
                .map(|(key, arrival)| {
                    let state = BucketState {
                        units: full - arrival.debt(rate, s.observed),
                        last_nanos: s.observed,
                    };
                    (key.clone(), state)
                })
                .collect(),
        })
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::alternatives::differential;

    const SECOND: u64 = 1_000_000_000;
    const TOKEN: u128 = UNITS_PER_TOKEN as u128;

    fn p(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).unwrap()
    }

    fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Decision {
        Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        }
    }

    #[test]
    fn the_seeds_burst_then_retry() {
        let l = GcraBucket::new(p(1, 10, 2), 4).unwrap();
        assert_eq!(l.allow("k", 10, 0), Ok(decision(true, 0, 0)));
        assert_eq!(l.allow("k", 1, 0), Ok(decision(false, 0, 500_000_000)));
        // The trace table: half a token kept at 250 ms, one at 500 ms.
        assert_eq!(
            l.allow("k", 1, 250_000_000),
            Ok(decision(false, 0, 250_000_000))
        );
        assert_eq!(l.allow("k", 1, 500_000_000), Ok(decision(true, 0, 0)));
        assert_eq!(l.allow("k", 1, 999_999_999), Ok(decision(false, 0, 1)));
        assert_eq!(l.allow("k", 1, SECOND), Ok(decision(true, 0, 0)));
    }

    #[test]
    fn the_seeds_cutover_leaves_one_token_then_two() {
        let l = GcraBucket::new(p(1, 10, 2), 4).unwrap();
        assert!(l.allow("k", 10, 0).unwrap().allowed);
        l.replace_policy(p(2, 20, 4), 1, SECOND / 2).unwrap();
        let snap = l.snapshot().unwrap();
        assert_eq!(
            snap.buckets["k"],
            BucketState {
                units: TOKEN,
                last_nanos: SECOND / 2
            }
        );
        assert_eq!(
            l.allow("k", 2, SECOND / 2),
            Ok(decision(false, 1, 250_000_000))
        );
        assert_eq!(l.allow("k", 2, 3 * SECOND / 4), Ok(decision(true, 0, 0)));
        // A new key after the cutover starts at the new capacity.
        assert_eq!(l.allow("n", 20, 3 * SECOND / 4), Ok(decision(true, 0, 0)));
    }

    #[test]
    fn the_cutover_clamps_and_never_tops_up() {
        let l = GcraBucket::new(p(1, 10, 2), 4).unwrap();
        l.allow("k", 3, 0).unwrap();
        l.replace_policy(p(2, 20, 4), 1, 0).unwrap();
        assert_eq!(l.allow("k", 1, 0), Ok(decision(true, 6, 0)));
        l.replace_policy(p(3, 2, 1), 2, 0).unwrap();
        assert_eq!(l.allow("k", 1, 0), Ok(decision(true, 1, 0)));
    }

    #[test]
    fn the_snapshot_dates_every_bucket_at_the_observed_time() {
        let l = GcraBucket::new(p(1, 10, 2), 4).unwrap();
        l.allow("a", 10, 0).unwrap();
        l.allow("b", 3, 100_000_000).unwrap();
        l.allow("c", 1, 250_000_000).unwrap();
        let snap = l.snapshot().unwrap();
        assert_eq!(snap.observed_nanos, 250_000_000);
        let at = |units| BucketState {
            units,
            last_nanos: 250_000_000,
        };
        assert_eq!(snap.buckets["a"], at(TOKEN / 2));
        assert_eq!(snap.buckets["b"], at(7 * TOKEN + 3 * TOKEN / 10));
        assert_eq!(snap.buckets["c"], at(9 * TOKEN));
        // An error changes nothing, not even the picture.
        assert!(l.allow("a", 1, 1).is_err());
        assert_eq!(l.snapshot().unwrap(), snap);
    }

    #[test]
    fn a_refusal_keeps_the_arrival_time() {
        let l = GcraBucket::new(p(1, 1, 3), 4).unwrap();
        assert!(l.allow("k", 1, 0).unwrap().allowed);
        let before = l.lock().arrivals["k"];
        assert_eq!(
            before,
            Arrival {
                full_at: 333_333_334,
                slack: 2
            }
        );
        assert_eq!(l.allow("k", 1, 0), Ok(decision(false, 0, 333_333_334)));
        assert_eq!(l.allow("k", 1, 333_333_333), Ok(decision(false, 0, 1)));
        assert_eq!(l.lock().arrivals["k"], before);
        assert_eq!(l.allow("k", 1, 333_333_334), Ok(decision(true, 0, 0)));
    }

    #[test]
    fn eviction_drops_only_buckets_full_at_now() {
        let l = GcraBucket::new(p(1, 10, 2), 3).unwrap();
        l.allow("spent", 10, 0).unwrap();
        l.allow("one", 1, 0).unwrap();
        assert_eq!(l.evict_full(499_999_999), Ok(0));
        assert_eq!(l.evict_full(SECOND / 2), Ok(1));
        assert_eq!(l.key_count(), 1);
        assert_eq!(l.evict_full(4_999_999_999), Ok(0));
        assert_eq!(l.evict_full(5 * SECOND), Ok(1));
        assert_eq!(l.key_count(), 0);
        assert_eq!(
            l.evict_full(1),
            Err(LimitError::TimeWentBackwards {
                now: 1,
                observed: 5 * SECOND
            })
        );
    }

    #[test]
    fn errors_in_the_contracts_order_change_nothing() {
        let l = GcraBucket::new(p(1, 10, 2), 1).unwrap();
        assert_eq!(
            GcraBucket::new(p(1, 10, 2), 0).err(),
            Some(LimitError::InvalidMaxKeys)
        );
        l.allow("k", 1, 10).unwrap();
        let snap = l.snapshot().unwrap();
        assert_eq!(l.allow(" ", 0, 5), Err(LimitError::InvalidKey));
        assert_eq!(
            l.allow("k", 11, 5),
            Err(LimitError::InvalidCost {
                cost: 11,
                capacity: 10
            })
        );
        assert_eq!(
            l.allow("new", 1, 5),
            Err(LimitError::TimeWentBackwards {
                now: 5,
                observed: 10
            })
        );
        assert_eq!(
            l.allow("new", 1, 10),
            Err(LimitError::KeyCapacityReached { max_keys: 1 })
        );
        assert_eq!(
            l.replace_policy(p(2, 1, 1), 1, 5),
            Err(LimitError::TimeWentBackwards {
                now: 5,
                observed: 10
            })
        );
        assert_eq!(
            l.replace_policy(p(1, 1, 1), 1, 10),
            Err(LimitError::StalePolicyVersion {
                expected: 1,
                current: 1,
                next: 1
            })
        );
        assert_eq!(l.snapshot().unwrap(), snap);
    }

    #[test]
    fn extremes_fit() {
        const M: u64 = MAX_QUANTITY;
        let l = GcraBucket::new(p(1, M, 1), 2).unwrap();
        assert!(l.allow("k", M, 0).unwrap().allowed);
        let d = l.allow("k", M, u64::MAX).unwrap();
        assert_eq!((d.allowed, d.retry_after_nanos), (false, M));
        assert_eq!(d.whole_tokens, u64::MAX / SECOND);
        let l = GcraBucket::new(p(1, M, M), 2).unwrap();
        assert!(l.allow("k", M, 0).unwrap().allowed);
        assert_eq!(l.allow("k", M, 1_000_000_000), Ok(decision(true, 0, 0)));
        l.replace_policy(p(2, 1, 1), 1, u64::MAX).unwrap();
        assert_eq!(l.evict_full(u64::MAX), Ok(1));
    }

    #[test]
    fn random_histories_match_the_reference() {
        differential::against_reference::<GcraBucket>();
    }
}
