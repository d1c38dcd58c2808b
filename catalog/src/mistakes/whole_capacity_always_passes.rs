//! A request for the whole capacity is treated as a fresh burst: it is always admitted and
//! leaves the bucket empty, whatever the balance.
//!
//! - **Breaks:** R1 / I2. "A request is admitted only if the refilled budget covers its entire
//!   cost": here a depleted bucket admits a full-capacity request, spending tokens it does
//!   not have (the balance is set to zero rather than reduced by the cost).
//! - **Seed mistake:** "Reset the balance every second and call it token bucket" (a reset
//!   by request size rather than by window): a burst is granted that the refill never earned.
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)` twice: both pass.
//! - **Why it is catalogued:** a property that probes with a full-capacity request and skips
//!   the cases where the probe passes (a full bucket) has nothing left to check on this
//!   design; it must fail for running too few cases, not pass on none.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that admits every request for the whole capacity.
#[derive(Debug)]
pub struct WholeCapacityAlwaysPasses {
    state: Mutex<State>,
}

impl Limiter for WholeCapacityAlwaysPasses {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(WholeCapacityAlwaysPasses {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        if cost != s.policy.capacity() {
            return s.allow(key, cost, now);
        }
        ratelimit_lab_api::rules::check_key(key)?;
        s.check_time(now)?;
        s.balance(key, now)?;
        // FLAW: a whole-capacity request is admitted whatever the balance, and empties it.
        s.store(key, 0, now);
        s.observed = now;
        Ok(Decision {
            allowed: true,
            whole_tokens: 0,
            retry_after_nanos: 0,
        })
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

    fn two_bursts<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 4);
        l.allow("k", 10, 0).unwrap();
        l.allow("k", 10, 0)
    }

    #[test]
    fn a_second_burst_passes_on_an_empty_bucket() {
        assert_eq!(two_bursts::<TokenBucket>(), ok(false, 0, 5_000_000_000));
        assert_eq!(two_bursts::<WholeCapacityAlwaysPasses>(), ok(true, 0, 0));
    }
}
