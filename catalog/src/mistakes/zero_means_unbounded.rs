//! `max_keys = 0` read as "no limit": the constructor accepts it and tracks any number of
//! keys instead of refusing the configuration.
//!
//! - **Breaks:** R3 / I3. The bound on tracked keys is the design's protection against a
//!   client that sends ever new keys; a zero that silently means "unbounded" removes it, and
//!   nothing reports the misconfiguration.
//! - **Seed mistake:** "`if (maxKeys < 1) throw new IllegalArgumentException("maxKeys")`" (the
//!   rule broken); "Unbounded maps exhaust memory".
//! - **Smallest scenario:** `new(policy, 0)`: the reference returns `InvalidMaxKeys`, this
//!   design builds a limiter that then admits every new key.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket whose constructor takes `max_keys = 0` to mean "no limit".
#[derive(Debug)]
pub struct ZeroMeansUnbounded {
    state: Mutex<State>,
}

impl Limiter for ZeroMeansUnbounded {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        // FLAW: 0 becomes "unbounded"; the reference refuses it with `InvalidMaxKeys`.
        let bound = if max_keys == 0 { usize::MAX } else { max_keys };
        Ok(ZeroMeansUnbounded {
            state: Mutex::new(State::new(policy, bound)?),
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
    use crate::mistakes::base::test_support::policy;
    use ratelimit_lab_reference::TokenBucket;

    #[test]
    fn zero_keys_is_accepted_and_unbounded() {
        let p = policy(1, 10, 2);
        assert_eq!(
            TokenBucket::new(p, 0).err(),
            Some(LimitError::InvalidMaxKeys)
        );
        let l = ZeroMeansUnbounded::new(p, 0).unwrap();
        for key in ["a", "b", "c"] {
            assert!(l.allow(key, 1, 0).unwrap().allowed);
        }
        assert_eq!(l.key_count(), 3);
    }
}
