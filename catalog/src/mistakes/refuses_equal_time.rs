//! `allow` demands that time move forward for a key: a second request at the instant of the
//! key's last update is refused as `TimeWentBackwards`.
//!
//! - **Breaks:** R1 / none. Equal times are valid ("monotonic", not strictly increasing), so
//!   a burst of requests at one instant, the seed's very first example, gets an error after
//!   its first call. The error changes nothing; every request at a later time is exact.
//! - **Seed mistake:** "Two threads sample 100 and 101; the 101 call arrives first. The older
//!   100 call is rejected" (only an *older* time), with `if (now < observedTime) throw`
//!   written as `<=`; trace table "At 0 ns consume 10 ... At 0 ns consume 1: Rejected; retry
//!   after 500000000 ns".
//! - **Smallest scenario:** `allow(k, 10, 0)`, then `allow(k, 1, 0)`: the reference refuses it
//!   with retry 500 000 000 ns, this design returns `TimeWentBackwards { now: 0, observed: 0 }`.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that refuses a repeat at a key's last instant.
#[derive(Debug)]
pub struct RefusesEqualTime {
    state: Mutex<State>,
}

impl Limiter for RefusesEqualTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RefusesEqualTime {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        // FLAW: `<=` against the key's last update; the reference refuses only times below
        // the observed time.
        if s.buckets.get(key).is_some_and(|b| now <= b.last_nanos) {
            return Err(LimitError::TimeWentBackwards {
                now,
                observed: s.observed,
            });
        }
        let balance = s.balance(key, now)?;
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

    /// Worked example 1: cost 10 then 1, both at 0.
    fn burst<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.allow("k", 1, 0)
    }

    #[test]
    fn a_second_request_at_the_same_instant_is_an_error() {
        assert_eq!(burst::<TokenBucket>(), ok(false, 0, 500_000_000));
        assert_eq!(
            burst::<RefusesEqualTime>(),
            Err(LimitError::TimeWentBackwards {
                now: 0,
                observed: 0
            })
        );
    }
}
