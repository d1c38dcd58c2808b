//! Fixed point in `u64` with wrapping arithmetic: `capacity × 10⁹`, `elapsed × rate` and
//! `balance + earning` silently wrap once they pass 2^64.
//!
//! - **Breaks:** R1 / I1. Past 2^64 units the balance equation is wrong: above about
//!   1.8 × 10¹⁰ tokens of capacity the ceiling wraps (a full bucket of 2^63 − 1 tokens holds
//!   about 1.8 × 10¹⁰), and so does a cost that large. Stored units never exceed the true
//!   ceiling, so the bound check alone misses it; comparison with the model does not. The
//!   seed's worked examples are all exact: only extreme policies expose it.
//! - **Seed mistake:** "Multiply long capacity by a billion without checks"; failing case: "A
//!   large valid long capacity overflows negative during fixed-point conversion."
//! - **Smallest scenario:** capacity 2^63 − 1, rate 1: `allow(k, 2^63 − 1, 0)` (both pass),
//!   then `allow(k, 2^63 − 1, 2^64 − 2)`: the reference has earned about 1.8 × 10¹⁰ tokens and
//!   rejects; here the earning reaches the wrapped ceiling, equal to the wrapped cost, and the
//!   request passes.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

use super::base::{lock, State};

/// Token bucket computed in wrapping `u64` units.
#[derive(Debug)]
pub struct OverflowingUnits {
    state: Mutex<State>,
}

// FLAW: wrapping `u64` fixed point; the reference widens to `u128`, where nothing overflows.
fn ceiling(policy: &Policy) -> u64 {
    policy.capacity().wrapping_mul(UNITS_PER_TOKEN)
}

fn need(cost: u64) -> u64 {
    cost.wrapping_mul(UNITS_PER_TOKEN)
}

fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u64 {
    let elapsed = now.saturating_sub(bucket.last_nanos);
    let earned = elapsed.wrapping_mul(policy.tokens_per_second());
    units(bucket).wrapping_add(earned).min(ceiling(policy))
}

/// The stored units (only `u64` values are ever stored).
fn units(bucket: &BucketState) -> u64 {
    u64::try_from(bucket.units).unwrap_or(u64::MAX)
}

impl Limiter for OverflowingUnits {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(OverflowingUnits {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let policy = s.policy;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &policy, now),
            None if s.buckets.len() >= s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                })
            }
            None => ceiling(&policy),
        };
        let need = need(cost);
        let (allowed, after, retry_after_nanos) = if balance >= need {
            (true, balance - need, 0)
        } else {
            let wait = (need - balance).div_ceil(policy.tokens_per_second());
            (false, balance, wait.min(MAX_QUANTITY))
        };
        s.store(key, u128::from(after), now);
        s.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens: after / UNITS_PER_TOKEN,
            retry_after_nanos,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = lock(&self.state);
        s.check_time(now)?;
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
        let mut s = lock(&self.state);
        s.check_time(now)?;
        s.check_version(&next, expected_version)?;
        let old = s.policy;
        let new_ceiling = ceiling(&next);
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: u128::from(refilled(bucket, &old, now).min(new_ceiling)),
                last_nanos: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        lock(&self.state).buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        Some(lock(&self.state).snapshot())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    const M: u64 = MAX_QUANTITY;

    /// Spend the whole burst, wait until the end of time, ask for all of it again.
    fn extreme<L: Limiter>() -> [Result<Decision, LimitError>; 2] {
        let l: L = limiter(M, 1, 8);
        [l.allow("k", M, 0), l.allow("k", M, u64::MAX - 1)]
    }

    #[test]
    fn a_wrapped_ceiling_equals_the_wrapped_cost() {
        let good = [ok(true, 0, 0), ok(false, 18_446_744_073, M)];
        assert_eq!(extreme::<TokenBucket>(), good);
        assert_eq!(
            extreme::<OverflowingUnits>(),
            [ok(true, 0, 0), ok(true, 0, 0)]
        );
    }

    #[test]
    fn a_full_bucket_of_the_largest_capacity_holds_a_few_billion_tokens() {
        let good = limiter::<TokenBucket>(M, 1, 8).allow("k", 1, 0);
        let bad = limiter::<OverflowingUnits>(M, 1, 8).allow("k", 1, 0);
        // (2^64 − 10⁹ − 10⁹) / 10⁹ whole tokens.
        assert_eq!(
            (good, bad),
            (ok(true, M - 1, 0), ok(true, 18_446_744_071, 0))
        );
    }
}
