use std::sync::Mutex;

use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy, Snapshot};

use crate::Model;

/// The specification behind a lock, as a [`Limiter`]: slow, plainly correct, and useful to
/// check that a check accepts the contract itself.
#[derive(Debug)]
pub struct ModelLimiter(Mutex<Model>);

impl ModelLimiter {
    fn with<T>(&self, f: impl FnOnce(&mut Model) -> T) -> T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut guard)
    }
}

impl Limiter for ModelLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Model::new(policy, max_keys).map(|m| ModelLimiter(Mutex::new(m)))
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.with(|m| m.allow(key, cost, now))
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.with(|m| m.evict_full(now))
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.with(|m| m.replace_policy(next, expected_version, now))
    }

    fn key_count(&self) -> usize {
        self.with(|m| m.buckets().len())
    }

    fn snapshot(&self) -> Option<Snapshot> {
        Some(self.with(|m| m.snapshot()))
    }
}
