//! The correct pieces every mistake is built from, each the same as in
//! the reference `TokenBucket`: the state behind the one lock, validation in the
//! contract's error order, exact `u128` refill, the ceiling retry estimate and the floored
//! whole tokens.
//!
//! A design uses these where it is right and writes its own code only where it plants its flaw,
//! so that the flaw is the one visible difference from the reference. The owner-thread
//! alternative keeps the same [`State`] on its one thread, with no lock at all.
use std::collections::HashMap;

use ratelimit_lab_api::rules as contract;
use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    BucketState, Decision, LimitError, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};

/// Everything one monitor owns, as in the reference.
#[derive(Debug)]
pub(crate) struct State {
    pub(super) policy: Policy,
    pub(super) max_keys: usize,
    pub(super) observed: u64,
    pub(crate) buckets: HashMap<String, BucketState>,
}

/// A refill rule: the balance of a bucket at a time, under a policy.
pub(super) type Refill = fn(&BucketState, &Policy, u64) -> u128;

/// `capacity × 10⁹`: below 2^93.
pub(super) fn ceiling(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance of `bucket` at `now` under `policy`, exact and clamped to the ceiling.
pub(super) fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let elapsed = now.saturating_sub(bucket.last_nanos);
    let earned = u128::from(elapsed) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(ceiling(policy))
}

/// `cost × 10⁹`.
pub(super) fn need(cost: u64) -> u128 {
    u128::from(cost) * u128::from(UNITS_PER_TOKEN)
}

/// `⌈(need − balance) / rate⌉`, saturating at [`MAX_QUANTITY`]. Requires `balance < need`.
pub(super) fn retry_after(need: u128, balance: u128, policy: &Policy) -> u64 {
    let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
    u64::try_from(wait.min(u128::from(MAX_QUANTITY))).unwrap_or(MAX_QUANTITY)
}

/// The balance floored to whole tokens.
pub(super) fn whole_tokens(units: u128) -> u64 {
    u64::try_from(units / u128::from(UNITS_PER_TOKEN)).unwrap_or(u64::MAX)
}

/// The decision on `balance` for `cost`, and the balance to save: deducted when allowed, kept
/// whole (fraction included) when not.
pub(super) fn judge(balance: u128, cost: u64, policy: &Policy) -> (Decision, u128) {
    let need = need(cost);
    let (allowed, after, retry_after_nanos) = if balance >= need {
        (true, balance - need, 0)
    } else {
        (false, balance, retry_after(need, balance, policy))
    };
    let decision = Decision {
        allowed,
        whole_tokens: whole_tokens(after),
        retry_after_nanos,
    };
    (decision, after)
}

/// Takes the lock, recovering the state if a panic ever poisoned it.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    /// The state of a new limiter.
    pub(crate) fn new(policy: Policy, max_keys: usize) -> Result<State, LimitError> {
        contract::check_max_keys(max_keys)?;
        Ok(State {
            policy,
            max_keys,
            observed: 0,
            buckets: HashMap::new(),
        })
    }

    pub(super) fn check_cost(&self, cost: u64) -> Result<(), LimitError> {
        contract::check_cost(&self.policy, cost)
    }

    pub(super) fn check_time(&self, now: u64) -> Result<(), LimitError> {
        contract::check_time(now, self.observed)
    }

    pub(super) fn check_version(&self, next: &Policy, expected: u64) -> Result<(), LimitError> {
        contract::check_version(&self.policy, next, expected)
    }

    /// The balance `key` has at `now`: refilled if tracked, full if new, or the capacity error.
    pub(super) fn balance(&self, key: &str, now: u64) -> Result<u128, LimitError> {
        match self.buckets.get(key) {
            Some(bucket) => Ok(refilled(bucket, &self.policy, now)),
            None if self.buckets.len() >= self.max_keys => Err(LimitError::KeyCapacityReached {
                max_keys: self.max_keys,
            }),
            None => Ok(ceiling(&self.policy)),
        }
    }

    /// Compares `balance` with the cost, deducts on success, saves the balance on either
    /// branch and raises the observed time: the tail of a correct `allow`.
    pub(super) fn decide(&mut self, key: &str, cost: u64, now: u64, balance: u128) -> Decision {
        let (decision, after) = judge(balance, cost, &self.policy);
        self.store(key, after, now);
        self.observed = now;
        decision
    }

    /// Saves `units` as of `now` for `key`, allocating only for a new key.
    pub(super) fn store(&mut self, key: &str, units: u128, now: u64) {
        let stored = BucketState {
            units,
            last_nanos: now,
        };
        match self.buckets.get_mut(key) {
            Some(bucket) => *bucket = stored,
            None => {
                self.buckets.insert(key.to_owned(), stored);
            }
        }
    }

    /// A correct `allow`, for designs whose flaw lies elsewhere.
    pub(crate) fn allow(&mut self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.allow_with(refilled, key, cost, now)
    }

    /// `allow` with `refill` in place of the exact refill: for designs whose flaw is the
    /// refill itself. A new key still starts full.
    pub(super) fn allow_with(
        &mut self,
        refill: Refill,
        key: &str,
        cost: u64,
        now: u64,
    ) -> Result<Decision, LimitError> {
        contract::check_key(key)?;
        self.check_cost(cost)?;
        self.check_time(now)?;
        let balance = match self.buckets.get(key) {
            Some(bucket) => refill(bucket, &self.policy, now),
            None => self.balance(key, now)?,
        };
        Ok(self.decide(key, cost, now, balance))
    }

    /// A correct `evict_full`: removes exactly the buckets that are full at `now`.
    pub(crate) fn evict_full(&mut self, now: u64) -> Result<usize, LimitError> {
        self.evict_full_with(refilled, now)
    }

    /// `evict_full` judging fullness with `refill`.
    pub(super) fn evict_full_with(
        &mut self,
        refill: Refill,
        now: u64,
    ) -> Result<usize, LimitError> {
        self.check_time(now)?;
        let policy = self.policy;
        let full = ceiling(&policy);
        let before = self.buckets.len();
        self.buckets.retain(|_, b| refill(b, &policy, now) != full);
        self.observed = now;
        Ok(before - self.buckets.len())
    }

    /// A correct `replace_policy`: refill under the old policy, clamp to the new ceiling.
    pub(crate) fn replace_policy(
        &mut self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.replace_policy_with(refilled, next, expected_version, now)
    }

    /// `replace_policy` settling each bucket with `refill` before the clamp.
    pub(super) fn replace_policy_with(
        &mut self,
        refill: Refill,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.check_time(now)?;
        self.check_version(&next, expected_version)?;
        let old = self.policy;
        let new_ceiling = ceiling(&next);
        for bucket in self.buckets.values_mut() {
            *bucket = BucketState {
                units: refill(bucket, &old, now).min(new_ceiling),
                last_nanos: now,
            };
        }
        self.policy = next;
        self.observed = now;
        Ok(())
    }

    /// What is stored, as stored.
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            policy: self.policy,
            observed_nanos: self.observed,
            buckets: self.buckets.iter().map(|(k, b)| (k.clone(), *b)).collect(),
        }
    }
}

/// Helpers for the tests that run one scenario on a mistake and on the reference.
#[cfg(all(test, not(loom)))]
pub(super) mod test_support {
    use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy};

    /// A limiter of type `L` under `Policy::new(1, capacity, rate)`.
    pub(crate) fn limiter<L: Limiter>(capacity: u64, rate: u64, max_keys: usize) -> L {
        L::new(policy(1, capacity, rate), max_keys).expect("valid max_keys")
    }

    /// A valid policy.
    pub(crate) fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).expect("valid policy")
    }

    /// Spend the whole bucket, cut over to version 2 of the same policy at the same instant,
    /// and spend it again: the key count after the cutover and the second spend's outcome.
    pub(crate) fn spend_across_a_no_op_cutover<L: Limiter>() -> (usize, Result<Decision, LimitError>)
    {
        let l: L = limiter(10, 2, 8);
        l.allow("k", 10, 0).unwrap();
        l.replace_policy(policy(2, 10, 2), 1, 0).unwrap();
        (l.key_count(), l.allow("k", 10, 0))
    }

    /// The successful outcome of an `allow`.
    pub(crate) fn ok(
        allowed: bool,
        whole_tokens: u64,
        retry_after_nanos: u64,
    ) -> Result<Decision, LimitError> {
        Ok(Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        })
    }
}
