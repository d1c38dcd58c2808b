//! Admission in two critical sections that never undo a spend: the first checks that the
//! balance covers the cost, the lock is released, and the second deducts the cost from
//! whatever the balance is by then, stopping at zero.
//!
//! - **Breaks:** R2 / I2. Unlike a stale write-back, no spend is ever lost: each admitted
//!   request is deducted, and reports the balance its deduction left. But two callers can both
//!   pass the check on the same last token, and the second deduction finds nothing left to
//!   take: one token admitted two requests. Every sequential run matches the reference
//!   exactly, and with as many tokens as callers every interleaving is legal too; only more
//!   callers than tokens show it.
//! - **Seed mistake:** counterexample "Read one token in two threads, then both write zero:
//!   two requests passed using one token."
//! - **Smallest scenario:** capacity 1: two threads each call `allow(k, 1, 0)`; interleaving
//!   check, check, deduct, deduct allows both. The reference allows exactly one. (At
//!   capacity 2 it takes three callers.)
//!
//! The gap between the sections yields the thread: it stands for any work done between them,
//! and makes the window wide enough for real threads to meet in it, not only loom or shuttle.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{thread, Mutex},
    Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{ceiling, judge, lock, need, whole_tokens, State};

/// Token bucket whose admission checks under one lock and deducts under another.
#[derive(Debug)]
pub struct CheckThenDeduct {
    state: Mutex<State>,
}

impl CheckThenDeduct {
    /// First critical section: validate, refill and decide, saving the refilled balance (a new
    /// key is tracked from here on, so the key bound holds). A refusal is complete here; an
    /// admission is decided but not yet deducted.
    fn check(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        s.observed = now;
        let (decision, after) = judge(balance, cost, &s.policy);
        s.store(key, if decision.allowed { balance } else { after }, now);
        Ok(decision)
    }

    /// Second critical section: deduct `cost` from the balance found now, down to zero, and
    /// report what is left.
    fn deduct(&self, key: &str, cost: u64, now: u64) -> Decision {
        let mut s = lock(&self.state);
        let balance = s.balance(key, now).unwrap_or_else(|_| ceiling(&s.policy));
        let after = balance.saturating_sub(need(cost));
        s.store(key, after, now);
        Decision {
            allowed: true,
            whole_tokens: whole_tokens(after),
            retry_after_nanos: 0,
        }
    }
}

impl Limiter for CheckThenDeduct {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(CheckThenDeduct {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        // FLAW: the check and the deduction take the lock separately, so the balance that
        // passed the check may be spent by another caller before this one deducts. The
        // reference compares and deducts under one lock.
        let decision = self.check(key, cost, now)?;
        if !decision.allowed {
            return Ok(decision);
        }
        thread::yield_now();
        Ok(self.deduct(key, cost, now))
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

    #[test]
    fn check_check_deduct_deduct_spends_the_last_token_twice() {
        let bad: CheckThenDeduct = limiter(1, 1, 8);
        // The interleaving two threads can produce, spelled out step by step.
        let first = bad.check("k", 1, 0).unwrap();
        let second = bad.check("k", 1, 0).unwrap();
        assert!(first.allowed && second.allowed, "two requests on one token");
        assert_eq!(bad.deduct("k", 1, 0), ok(true, 0, 0).unwrap());
        assert_eq!(bad.deduct("k", 1, 0), ok(true, 0, 0).unwrap());
        assert_eq!(bad.snapshot().unwrap().buckets["k"].units, 0);

        // The reference decides atomically: whatever the order, one of the two is refused.
        let good: TokenBucket = limiter(1, 1, 8);
        assert_eq!(good.allow("k", 1, 0), ok(true, 0, 0));
        assert_eq!(good.allow("k", 1, 0), ok(false, 0, 1_000_000_000));
    }

    #[test]
    fn with_a_token_per_caller_the_interleaving_is_legal() {
        let bad: CheckThenDeduct = limiter(2, 1, 8);
        let first = bad.check("k", 1, 0).unwrap();
        let second = bad.check("k", 1, 0).unwrap();
        assert!(first.allowed && second.allowed);
        // What a sequential run would report: one token left after the first, none after.
        assert_eq!(bad.deduct("k", 1, 0), ok(true, 1, 0).unwrap());
        assert_eq!(bad.deduct("k", 1, 0), ok(true, 0, 0).unwrap());
        assert_eq!(
            bad.snapshot().unwrap().buckets["k"].units,
            0,
            "both spends kept"
        );
    }

    #[test]
    fn sequential_calls_match_the_reference() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: CheckThenDeduct = limiter(10, 2, 8);
        for (key, cost, now) in [
            ("k", 10, 0),
            ("k", 1, 0),
            ("j", 3, 0),
            ("k", 1, 250_000_000),
            ("k", 1, 500_000_000),
            ("k", 0, 600_000_000),
            ("k", 1, 400_000_000),
        ] {
            assert_eq!(bad.allow(key, cost, now), good.allow(key, cost, now));
        }
        assert_eq!(bad.snapshot(), good.snapshot());
    }
}
