//! Blank keys judged by Rust's `str::trim` instead of the contract's white space (Java's
//! `String::isBlank`, which `is_blank_key` implements).
//!
//! - **Breaks:** R1. Validation must refuse exactly the keys the contract refuses: this design
//!   refuses the valid key `"\u{a0}"` (a no-break space is not white space in the contract)
//!   and admits the blank key `"\u{1f}"` (a unit separator is). Both are easy to miss, since
//!   ASCII spaces, tabs and newlines agree.
//! - **Seed mistake:** "Validate identity, cost and elapsed time" (the rule broken):
//!   `key == null || key.isBlank()`.
//! - **Smallest scenario:** `allow("\u{1f}", 1, 0)`: the reference returns `InvalidKey`, this
//!   design admits it and tracks the key.
use ratelimit_lab_api::{sync::Mutex, Decision, LimitError, Limiter, Policy, Snapshot};

use super::base::{lock, State};

/// Token bucket that validates keys with `str::trim`.
#[derive(Debug)]
pub struct RustWhitespaceKeys {
    state: Mutex<State>,
}

impl Limiter for RustWhitespaceKeys {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(RustWhitespaceKeys {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        // FLAW: Rust's notion of white space; the reference uses `is_blank_key`.
        if key.trim().is_empty() {
            return Err(LimitError::InvalidKey);
        }
        s.check_cost(cost)?;
        s.check_time(now)?;
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
    use crate::mistakes::base::test_support::limiter;
    use ratelimit_lab_reference::TokenBucket;

    fn verdicts<L: Limiter>() -> (bool, bool) {
        let l: L = limiter(10, 2, 4);
        (
            l.allow("\u{1f}", 1, 0) == Err(LimitError::InvalidKey),
            l.allow("\u{a0}", 1, 0) == Err(LimitError::InvalidKey),
        )
    }

    #[test]
    fn unit_separator_and_no_break_space_are_judged_the_other_way() {
        assert_eq!(verdicts::<TokenBucket>(), (true, false));
        assert_eq!(verdicts::<RustWhitespaceKeys>(), (false, true));
    }
}
