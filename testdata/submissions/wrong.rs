//! A wrong submission: `allow` charges one token for any cost above one (the design in
//! `design.rs` otherwise).
mod design;
use design::Design as TokenBucket;
use ratelimit_lab::{Decision, LimitError, Limiter, Policy, Snapshot};

#[derive(Debug)]
pub struct MyLimiter(TokenBucket);

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(MyLimiter)
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.0.allow(key, cost.min(1), now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.0.evict_full(now)
    }

    fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected, now)
    }

    fn key_count(&self) -> usize {
        self.0.key_count()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        self.0.snapshot()
    }
}
