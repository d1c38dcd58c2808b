//! A policy change refills every tracked bucket to the new capacity: the keys stay, their
//! spent budgets do not.
//!
//! - **Breaks:** R4 / I4. Every cutover, even one that changes nothing but the version, hands
//!   every tracked key a full bucket; unlike [`ResetOnCutover`](super::ResetOnCutover) the
//!   keys are kept, so the key count does not show it.
//! - **Seed mistake:** "Resetting all budgets is simpler only if the product explicitly
//!   accepts a fresh burst; it must not be hidden behind a generic config update."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, cutover to version 2 with
//!   the same capacity and rate at 0, then `allow(k, 10, 0)`: the reference refuses it (0
//!   tokens), this design allows it, and still counts one key.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket whose cutover fills every bucket it keeps.
#[derive(Debug)]
pub struct RefillOnCutover {
    state: Mutex<State>,
}

impl Limiter for RefillOnCutover {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RefillOnCutover {
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
        // FLAW: each bucket is "settled" to more than any capacity, so the clamp leaves it
        // full at the new capacity. The reference refills under the old policy up to `now`.
        lock(&self.state).replace_policy_with(|_, _, _| u128::MAX, next, expected_version, now)
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
    use crate::mistakes::base::test_support::{ok, spend_across_a_no_op_cutover};
    use ratelimit_lab_reference::TokenBucket;

    #[test]
    fn a_version_bump_refills_every_key_it_keeps() {
        let refused = ok(false, 0, 5_000_000_000);
        assert_eq!(spend_across_a_no_op_cutover::<TokenBucket>(), (1, refused));
        assert_eq!(
            spend_across_a_no_op_cutover::<RefillOnCutover>(),
            (1, ok(true, 0, 0))
        );
    }
}
