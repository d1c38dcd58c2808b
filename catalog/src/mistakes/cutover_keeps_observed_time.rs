//! `replace_policy` settles the buckets at the cutover time but does not record it as
//! observed: a later call with an earlier time is served.
//!
//! - **Breaks:** R4 / I1. The cutover publishes the map and the policy without the time it
//!   settled them at, so a snapshot right after it shows an observed time behind its buckets.
//!   After a cutover at t, an `allow` at an earlier time is accepted; the
//!   bucket, dated t, earns nothing for the negative interval, so the caller spends credit
//!   stamped with a time it has not reached. Calls in time order are exact.
//! - **Seed mistake:** "Publish map, policy and observedTime together under the monitor."
//!   (`observedTime = now` left out of the cutover); "The older 100 call is rejected instead
//!   of silently earning negative credit."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 1, 0)`, cutover at 10 s, then
//!   `allow(k, 1, 5 s)`: the reference returns `TimeWentBackwards { now: 5 s, observed: 10 s }`,
//!   this design allows it.
use ratelimit_lab_api::{
    sync::Mutex, BucketState, Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, lock, refilled, State};

/// Token bucket whose cutover does not raise the observed time.
#[derive(Debug)]
pub struct CutoverKeepsObservedTime {
    state: Mutex<State>,
}

impl Limiter for CutoverKeepsObservedTime {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(CutoverKeepsObservedTime {
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
        for bucket in s.buckets.values_mut() {
            *bucket = BucketState {
                units: refilled(bucket, &old, now).min(new_ceiling),
                last_nanos: now,
            };
        }
        s.policy = next;
        // FLAW: no `observed = now`; the reference publishes the observed time with the map
        // and the policy.
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

    const SECOND: u64 = 1_000_000_000;

    fn back_after_cutover<L: Limiter>() -> Result<Decision, LimitError> {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 1, 0).unwrap();
        l.replace_policy(policy(2, 10, 2), 1, 10 * SECOND).unwrap();
        l.allow("k", 1, 5 * SECOND)
    }

    #[test]
    fn an_earlier_time_is_served_after_a_cutover() {
        assert_eq!(
            back_after_cutover::<TokenBucket>(),
            Err(LimitError::TimeWentBackwards {
                now: 5 * SECOND,
                observed: 10 * SECOND
            })
        );
        assert_eq!(
            back_after_cutover::<CutoverKeepsObservedTime>(),
            ok(true, 9, 0)
        );
    }
}
