//! A new key's bucket is filled to the capacity the limiter was built with, not to the
//! capacity of the policy in force: keys first seen after a cutover start at the old size.
//!
//! - **Breaks:** R4 / I4. After a capacity increase a new key starts short and its first
//!   burst is refused; after a decrease it starts above the new ceiling (I1) and spends
//!   tokens the policy no longer grants. Keys that existed before the cutover are exact.
//! - **Seed mistake:** "New keys after cutover start at the new full capacity." (broken);
//!   "The first request for a new key starts full."
//! - **Smallest scenario:** capacity 10, cutover to capacity 20, rate 4 at 0, then
//!   `allow(n, 20, 0)` on a new key: the reference allows it, this design refuses it (10
//!   tokens, retry 2.5 s).
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose new keys start at the construction-time capacity.
#[derive(Debug)]
pub struct NewKeyAtOldCapacity {
    state: Mutex<State>,
    /// The policy the limiter was built with.
    initial: Policy,
}

impl Limiter for NewKeyAtOldCapacity {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(NewKeyAtOldCapacity {
            state: Mutex::new(State::new(policy, max_keys)?),
            initial: policy,
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = match s.buckets.get(key) {
            Some(bucket) => refilled(bucket, &s.policy, now),
            None if s.buckets.len() >= s.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                })
            }
            // FLAW: the construction-time capacity; the reference fills a new bucket to
            // the ceiling of the policy in force.
            None => ceiling(&self.initial),
        };
        Ok(s.decide(key, cost, now, balance))
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
        lock(&self.state).replace_policy(next, expected_version, now)
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

    fn new_key_after_raise<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.replace_policy(policy(2, 20, 4), 1, 0).unwrap();
        l.allow("n", 20, 0)
    }

    #[test]
    fn a_new_key_starts_at_the_old_capacity() {
        assert_eq!(new_key_after_raise::<TokenBucket>(), ok(true, 0, 0));
        assert_eq!(
            new_key_after_raise::<NewKeyAtOldCapacity>(),
            ok(false, 10, 2_500_000_000)
        );
    }
}
