//! A rejection stores a full bucket: the request it refuses restores the whole burst.
//!
//! - **Breaks:** R1 / I1. Every refused request leaves its key holding the capacity, dated
//!   now, so a caller that asks once too often is admitted the whole capacity right after,
//!   though it earned nothing. Admissions store the balance correctly; the rejection's own
//!   answer (tokens left, retry) is right.
//! - **Seed mistake:** "Reset the balance every second and call it token bucket" (the balance
//!   reset by a rejection instead of a second's boundary); trace table "At 250000000 ns
//!   consume 1: Rejected; half a token accumulated".
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 0)` (refused,
//!   retry 500000000), `allow(k, 10, 0)`: the reference refuses, this design allows.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{ceiling, judge, lock, State};

/// Token bucket whose rejections refill the bucket.
#[derive(Debug)]
pub struct RejectionRefillsBucket {
    state: Mutex<State>,
}

impl Limiter for RejectionRefillsBucket {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RejectionRefillsBucket {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        let (decision, after) = judge(balance, cost, &s.policy);
        // FLAW: a rejection stores a full bucket; the reference stores the refilled balance
        // `after` on either branch.
        let stored = if decision.allowed {
            after
        } else {
            ceiling(&s.policy)
        };
        s.store(key, stored, now);
        s.observed = now;
        Ok(decision)
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
    use crate::mistakes::base::test_support::limiter;
    use ratelimit_lab_reference::TokenBucket;

    /// A spent bucket, one refused token, then the whole capacity at the same instant.
    fn asks<L: Limiter>() -> Vec<bool> {
        let l: L = limiter(10, 2, 8);
        [10, 1, 10]
            .map(|cost| l.allow("k", cost, 0).unwrap().allowed)
            .to_vec()
    }

    #[test]
    fn a_refused_request_restores_the_whole_burst() {
        assert_eq!(asks::<TokenBucket>(), vec![true, false, false]);
        assert_eq!(
            asks::<RejectionRefillsBucket>(),
            vec![true, false, true],
            "ten tokens at 0, where none was earned"
        );
    }
}
