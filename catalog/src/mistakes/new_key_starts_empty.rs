//! A key seen for the first time starts with an empty bucket instead of a full one.
//!
//! - **Breaks:** R1 / none. The first request of every new key, and of every key that
//!   `evict_full` removed, is refused although the contract grants it a full burst. Eviction
//!   stops being equivalent to keeping the bucket. Outcomes and snapshots both show it.
//! - **Seed mistake:** "The first request for a new key starts full." (the rule broken); worked
//!   example "capacity=10, rate=2/sec. At t=0 request cost 10 ... First allowed with zero
//!   tokens."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)` on a new key. The reference
//!   allows it with 9 tokens left; here it is rejected with a retry of 500 ms.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, refilled, State};

/// Token bucket whose new keys start at zero tokens.
#[derive(Debug)]
pub struct NewKeyStartsEmpty {
    state: Mutex<State>,
}

impl Limiter for NewKeyStartsEmpty {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(NewKeyStartsEmpty {
            state: Mutex::new(State::new(policy, max_keys)?),
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
            // FLAW: a new key starts empty; the reference starts it at `ceiling(&policy)`.
            None => 0,
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
    use crate::mistakes::base::test_support::{limiter, ok};
    use ratelimit_lab_reference::TokenBucket;

    fn first_request<L: Limiter>() -> Result<Decision, LimitError> {
        limiter::<L>(10, 2, 8).allow("k", 1, 0)
    }

    #[test]
    fn the_first_request_of_a_new_key_is_refused() {
        assert_eq!(first_request::<TokenBucket>(), ok(true, 9, 0));
        assert_eq!(
            first_request::<NewKeyStartsEmpty>(),
            ok(false, 0, 500_000_000)
        );
    }

    #[test]
    fn an_evicted_full_key_comes_back_empty() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: NewKeyStartsEmpty = limiter(10, 2, 8);
        // The empty start refills to full after 5 s, is evicted, and returns empty again.
        bad.allow("k", 1, 0).unwrap();
        good.allow("k", 1, 0).unwrap();
        assert_eq!(
            (
                good.evict_full(5_000_000_000),
                bad.evict_full(5_000_000_000)
            ),
            (Ok(1), Ok(1))
        );
        assert_eq!(good.allow("k", 10, 5_000_000_000), ok(true, 0, 0));
        assert_eq!(
            bad.allow("k", 10, 5_000_000_000),
            ok(false, 0, 5_000_000_000)
        );
    }
}
