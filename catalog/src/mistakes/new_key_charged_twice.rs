//! A new key's bucket is created with the cost of its first request already taken out, and
//! that request is then judged and charged like any other: the first cost is paid twice.
//!
//! - **Breaks:** R1 / none. A key seen for the first time starts below capacity: its first
//!   request leaves twice its cost spent, and a first request for more than half the
//!   capacity is refused. Later calls are exact.
//! - **Seed mistake:** "The first request for a new key starts full." (broken); trace table
//!   "At 0 ns consume 10: Allowed; 0 tokens remain".
//! - **Smallest scenario:** capacity 10: `allow(k, 1, 0)` on a new key leaves 9 tokens in the
//!   reference and 8 here; `allow(j, 10, 0)` is refused here.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, need, State};

/// Token bucket that charges a new key's first cost twice.
#[derive(Debug)]
pub struct NewKeyChargedTwice {
    state: Mutex<State>,
}

impl Limiter for NewKeyChargedTwice {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(NewKeyChargedTwice {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let fresh = !s.buckets.contains_key(key);
        let mut balance = s.balance(key, now)?;
        if fresh {
            // FLAW: the new bucket is created already charged for this request, which
            // `decide` then charges again; the reference creates it full.
            balance -= need(cost);
        }
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn first_requests<L: Limiter>() -> Vec<Result<Decision, LimitError>> {
        let l: L = limiter(10, 2, 8);
        vec![l.allow("k", 1, 0), l.allow("k", 1, 0), l.allow("j", 10, 0)]
    }

    #[test]
    fn the_first_cost_is_paid_twice() {
        assert_eq!(
            first_requests::<TokenBucket>(),
            vec![ok(true, 9, 0), ok(true, 8, 0), ok(true, 0, 0)]
        );
        assert_eq!(
            first_requests::<NewKeyChargedTwice>(),
            vec![ok(true, 8, 0), ok(true, 7, 0), ok(false, 0, 5_000_000_000)],
            "a new key starts short of its first cost"
        );
    }
}
