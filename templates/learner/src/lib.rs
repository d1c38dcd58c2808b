//! Your rate limiter. Replace every `todo!()` with your design; `cargo test` grades it.
//!
//! The contract is `ratelimit_lab::Limiter`: read its documentation, and the lesson's method
//! contracts, before you start. Build locks and atomics from `ratelimit_lab::sync` (it mirrors
//! `std::sync`) so that loom and shuttle can explore your design later.
use ratelimit_lab::{Decision, LimitError, Limiter, Policy};

/// A token-bucket limiter: exact fixed-point balances, one atomic decision per call, a bound
/// on tracked keys, and versioned policy cutover.
#[derive(Debug)]
pub struct MyLimiter {
    // Your state: the policy, the buckets, the observed time, the key bound...
}

impl Limiter for MyLimiter {
    fn new(_policy: Policy, _max_keys: usize) -> Result<Self, LimitError> {
        todo!("build an empty limiter")
    }

    fn allow(&self, _key: &str, _cost: u64, _now: u64) -> Result<Decision, LimitError> {
        todo!("refill, compare, consume and save: one atomic decision")
    }

    fn evict_full(&self, _now: u64) -> Result<usize, LimitError> {
        todo!("remove only buckets that are full at `now`")
    }

    fn replace_policy(
        &self,
        _next: Policy,
        _expected_version: u64,
        _now: u64,
    ) -> Result<(), LimitError> {
        todo!("refill under the old policy, clamp to the new capacity, then switch")
    }

    fn key_count(&self) -> usize {
        todo!("how many keys are tracked")
    }
}
