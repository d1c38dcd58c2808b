//! A policy change forgets every bucket, so each key comes back with a full new burst.
//!
//! - **Breaks:** R4 / I4. Every cutover, even one that changes nothing but the version, hands
//!   every key a fresh full bucket: spent budgets are replenished by a configuration push.
//!   The key count drops to zero at the cutover, which is also visible.
//! - **Seed mistake:** "Resetting all budgets is simpler only if the product explicitly
//!   accepts a fresh burst; it must not be hidden behind a generic config update."
//! - **Smallest scenario:** capacity 10, rate 2: `allow(k, 10, 0)`, cutover to version 2 with
//!   the same capacity and rate at 0, then `allow(k, 10, 0)`: the reference refuses it (0
//!   tokens), this design allows it.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket whose cutover clears the bucket map.
#[derive(Debug)]
pub struct ResetOnCutover {
    state: Mutex<State>,
}

impl Limiter for ResetOnCutover {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(ResetOnCutover {
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
        // FLAW: the buckets are dropped instead of refilled under the old policy and clamped,
        // so every key starts full again. The reference keeps and settles them.
        s.buckets.clear();
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
    use crate::mistakes::base::test_support::{ok, spend_across_a_no_op_cutover};
    use ratelimit_lab_reference::TokenBucket;

    #[test]
    fn a_version_bump_refills_every_key() {
        let refused = ok(false, 0, 5_000_000_000);
        assert_eq!(spend_across_a_no_op_cutover::<TokenBucket>(), (1, refused));
        assert_eq!(
            spend_across_a_no_op_cutover::<ResetOnCutover>(),
            (0, ok(true, 0, 0))
        );
    }
}
