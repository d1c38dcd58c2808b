//! A capacity increase fills every existing bucket to the new capacity, as if raising the
//! limit were a grant.
//!
//! - **Breaks:** R4 / I4. Each raise of the capacity hands every tracked key a full new
//!   burst, whatever it had spent; an operator raising the limit under load admits a flood.
//!   Cutovers that keep or lower the capacity are exact.
//! - **Seed mistake:** "Increasing policy capacity never tops up existing buckets." (the rule
//!   broken); "Existing key has one token at cutover, not two or twenty."
//! - **Smallest scenario:** the seed's worked example: capacity 10, rate 2,
//!   `allow(k, 10, 0)`, cutover to capacity 20, rate 4 at 0.5 s, then `allow(k, 20, 0.5 s)`:
//!   the reference has one token and refuses; this design has twenty and allows.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose capacity increases refill every bucket.
#[derive(Debug)]
pub struct TopUpOnCutover {
    state: Mutex<State>,
}

impl Limiter for TopUpOnCutover {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(TopUpOnCutover {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        lock(&self.state).allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        lock(&self.state).evict_full(now)
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
        let grows = next.capacity() > old.capacity();
        for bucket in s.buckets.values_mut() {
            // FLAW: a larger capacity tops the bucket up to it. The reference always keeps the
            // old-policy refill, clamped to the new ceiling.
            let units = if grows {
                new_ceiling
            } else {
                refilled(bucket, &old, now).min(new_ceiling)
            };
            *bucket = BucketState {
                units,
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
    use crate::mistakes::base::test_support::{limiter, ok, policy};
    use ratelimit_lab_reference::TokenBucket;

    const HALF: u64 = 500_000_000;

    fn spend_twenty_after_raise<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.replace_policy(policy(2, 20, 4), 1, HALF).unwrap();
        l.allow("k", 20, HALF)
    }

    #[test]
    fn raising_the_capacity_grants_a_full_bucket() {
        // The reference has the one token earned under the old rate: 19 short at 4 per second.
        let short = 19 * 1_000_000_000 / 4;
        assert_eq!(
            spend_twenty_after_raise::<TokenBucket>(),
            ok(false, 1, short)
        );
        assert_eq!(spend_twenty_after_raise::<TopUpOnCutover>(), ok(true, 0, 0));
    }
}
