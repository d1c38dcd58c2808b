//! Admission in two critical sections: the first reads, refills and decides, the lock is
//! released, and the second writes the decided balance back.
//!
//! - **Breaks:** R2 / I2. Two callers can both read the same last token before either
//!   writes, both are allowed, and both write zero: one token admitted two requests. Every
//!   sequential run matches the reference exactly; only an interleaving shows it (real threads
//!   on the seed's "20 unit requests at capacity 10", loom, shuttle, or a linearizability
//!   check). New keys can also slip past `max_keys` the same way.
//! - **Seed mistake:** counterexample "Read one token in two threads, then both write zero:
//!   two requests passed using one token."
//! - **Smallest scenario:** capacity 10: `allow(k, 9, 0)`, then two threads each call
//!   `allow(k, 1, 0)`; interleaving read, read, write, write allows both and leaves 0 tokens.
//!   The reference allows exactly one.
//!
//! The gap between the sections yields the thread: it stands for any work done between them,
//! and makes the window wide enough for real threads to meet in it, not only loom or shuttle.
use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{thread, Mutex},
    Decision, LimitError, Limiter, Policy, Snapshot,
};

use super::base::{judge, lock, State};

/// Token bucket whose admission reads under one lock and writes under another.
#[derive(Debug)]
pub struct SplitReadWrite {
    state: Mutex<State>,
}

impl SplitReadWrite {
    /// First critical section: validate, refill and decide; nothing is written.
    fn read(&self, key: &str, cost: u64, now: u64) -> Result<(Decision, u128), LimitError> {
        let s = lock(&self.state);
        contract::check_key(key)?;
        s.check_cost(cost)?;
        s.check_time(now)?;
        let balance = s.balance(key, now)?;
        Ok(judge(balance, cost, &s.policy))
    }

    /// Second critical section: save what the first one decided, whatever happened since.
    fn write(&self, key: &str, after: u128, now: u64) {
        let mut s = lock(&self.state);
        s.store(key, after, now);
        s.observed = now;
    }
}

impl Limiter for SplitReadWrite {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        Ok(SplitReadWrite {
            state: Mutex::new(State::new(policy, max_keys)?),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        // FLAW: the lock is released between the read and the write, so the decision is made
        // on a balance that may be stale when it is saved. The reference holds one lock over
        // refill, compare, deduct and save.
        let (decision, after) = self.read(key, cost, now)?;
        thread::yield_now();
        self.write(key, after, now);
        Ok(decision)
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
    fn read_read_write_write_spends_the_last_token_twice() {
        let bad: SplitReadWrite = limiter(10, 2, 8);
        assert_eq!(bad.allow("k", 9, 0), ok(true, 1, 0));
        // The interleaving two threads can produce, spelled out step by step.
        let (first, after_first) = bad.read("k", 1, 0).unwrap();
        let (second, after_second) = bad.read("k", 1, 0).unwrap();
        bad.write("k", after_first, 0);
        bad.write("k", after_second, 0);
        assert!(first.allowed && second.allowed, "two requests on one token");
        assert_eq!(bad.snapshot().unwrap().buckets["k"].units, 0);

        // The reference decides atomically: whatever the order, one of the two is refused.
        let good: TokenBucket = limiter(10, 2, 8);
        assert_eq!(good.allow("k", 9, 0), ok(true, 1, 0));
        assert_eq!(good.allow("k", 1, 0), ok(true, 0, 0));
        assert_eq!(good.allow("k", 1, 0), ok(false, 0, 500_000_000));
    }

    #[test]
    fn sequential_calls_match_the_reference() {
        let good: TokenBucket = limiter(10, 2, 8);
        let bad: SplitReadWrite = limiter(10, 2, 8);
        for (cost, now) in [(10, 0), (1, 0), (1, 250_000_000), (1, 500_000_000)] {
            assert_eq!(bad.allow("k", cost, now), good.allow("k", cost, now));
        }
        assert_eq!(bad.snapshot(), good.snapshot());
    }

    #[test]
    fn two_new_keys_can_pass_the_key_bound() {
        let bad: SplitReadWrite = limiter(10, 2, 1);
        let (a, after_a) = bad.read("a", 1, 0).unwrap();
        let (b, after_b) = bad.read("b", 1, 0).unwrap();
        bad.write("a", after_a, 0);
        bad.write("b", after_b, 0);
        assert!(a.allowed && b.allowed);
        assert_eq!(bad.key_count(), 2, "max_keys is 1");
    }
}
