//! At `max_keys`, a new key is admitted as if it had a fresh full bucket but is not tracked:
//! the request is silently granted instead of refused with `KeyCapacityReached`.
//!
//! - **Breaks:** R3 / I3. The map bound holds, but every key beyond it is unlimited: each
//!   call behaves like a bucket dropped and recreated full, the extra grant I3 forbids, so a
//!   client that sends fresh keys once the table is full is never rate limited. The key count
//!   and a snapshot look right; only outcomes show it.
//! - **Seed mistake:** "Production should map it to a deliberate overload response and measure
//!   saturation; do not silently grant untracked requests."
//! - **Smallest scenario:** capacity 10, `max_keys` 1: `allow(a, 1, 0)`, then
//!   `allow(b, 10, 0)` twice: the reference reports `KeyCapacityReached` both times; this
//!   design allows both (20 tokens in one instant from a capacity of 10).
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, judge, lock, State};

/// Token bucket that grants untracked requests once its key table is full.
#[derive(Debug)]
pub struct SilentGrantAtCapacity {
    state: Mutex<State>,
}

impl Limiter for SilentGrantAtCapacity {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(SilentGrantAtCapacity {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        match s.balance(key, now) {
            Ok(balance) => Ok(s.decide(key, cost, now, balance)),
            // FLAW: the capacity error becomes a grant on a full bucket that is never saved.
            // The reference returns the error and changes nothing.
            Err(LimitError::KeyCapacityReached { .. }) => {
                let full = ceiling(&s.policy);
                s.observed = now;
                Ok(judge(full, cost, &s.policy).0)
            }
            Err(other) => Err(other),
        }
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn untracked_burst<L: Limiter>() -> (Vec<Result<Decision, LimitError>>, usize) {
        let l: L = limiter(10, 2, 1);
        l.allow("a", 1, 0).unwrap();
        let outcomes = vec![l.allow("b", 10, 0), l.allow("b", 10, 0)];
        (outcomes, l.key_count())
    }

    #[test]
    fn a_key_beyond_the_bound_is_never_limited() {
        let full = Err(LimitError::KeyCapacityReached { max_keys: 1 });
        assert_eq!(
            untracked_burst::<TokenBucket>(),
            (vec![full.clone(), full], 1)
        );
        assert_eq!(
            untracked_burst::<SilentGrantAtCapacity>(),
            (vec![ok(true, 0, 0), ok(true, 0, 0)], 1),
            "twenty tokens in one instant from a capacity of ten"
        );
    }
}
