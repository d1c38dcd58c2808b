use std::collections::BTreeMap;

use num_bigint::BigInt;
use ratelimit_lab_api::{
    is_blank_key, BucketState, Decision, LimitError, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

use crate::{Op, Outcome};

/// One key's bucket in the specification: `units` of balance as of `last` nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelBucket {
    /// Balance in fixed-point units, unbounded integer.
    pub units: BigInt,
    /// When `units` was the balance.
    pub last: u64,
}

/// The specification's whole state. Every method is a plain transcription of the seed's
/// method contracts; a failed call returns the error and leaves the state untouched.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Model {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: BTreeMap<String, ModelBucket>,
}

fn big(v: u64) -> BigInt {
    BigInt::from(v)
}

fn unit() -> BigInt {
    big(UNITS_PER_TOKEN)
}

impl Model {
    /// The starting state: no keys, observed time `0`.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidMaxKeys`] when `max_keys` is `0`.
    pub fn new(policy: Policy, max_keys: usize) -> Result<Model, LimitError> {
        if max_keys == 0 {
            return Err(LimitError::InvalidMaxKeys);
        }
        Ok(Model {
            policy,
            max_keys,
            observed: 0,
            buckets: BTreeMap::new(),
        })
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The bound on tracked keys.
    pub fn max_keys(&self) -> usize {
        self.max_keys
    }

    /// The largest time a successful call has seen.
    pub fn observed(&self) -> u64 {
        self.observed
    }

    /// Every tracked key and its bucket.
    pub fn buckets(&self) -> &BTreeMap<String, ModelBucket> {
        &self.buckets
    }

    /// The pure transition: the state after `op`, and what `op` returned.
    pub fn step(&self, op: &Op) -> (Model, Outcome) {
        let mut next = self.clone();
        let outcome = next.apply(op);
        (next, outcome)
    }

    /// Applies `op` in place and returns what it returned.
    pub fn apply(&mut self, op: &Op) -> Outcome {
        match op {
            Op::Allow { key, cost, now } => self.allow(key, *cost, *now).into(),
            Op::EvictFull { now } => self.evict_full(*now).into(),
            Op::ReplacePolicy {
                next,
                expected_version,
                now,
            } => self.replace_policy(*next, *expected_version, *now).into(),
            Op::KeyCount => Outcome::KeyCount {
                keys: self.buckets.len(),
            },
            Op::Snapshot => Outcome::Snapshot {
                state: Some(self.snapshot()),
            },
        }
    }

    /// The capacity of the policy in force, in units.
    fn ceiling(&self) -> BigInt {
        unit() * big(self.policy.capacity())
    }

    /// `min(ceiling, units + (now − last) × rate)` under the policy in force.
    fn refill(&self, b: &ModelBucket, now: u64) -> BigInt {
        let elapsed = big(now) - big(b.last);
        let earned = elapsed * big(self.policy.tokens_per_second());
        (&b.units + earned).min(self.ceiling())
    }

    fn check_time(&self, now: u64) -> Result<(), LimitError> {
        if now < self.observed {
            Err(LimitError::TimeWentBackwards {
                now,
                observed: self.observed,
            })
        } else {
            Ok(())
        }
    }

    /// The seed's `allow`.
    ///
    /// # Errors
    ///
    /// As [`Limiter::allow`](ratelimit_lab_api::Limiter::allow).
    pub fn allow(&mut self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        if is_blank_key(key) {
            return Err(LimitError::InvalidKey);
        }
        if cost == 0 || cost > self.policy.capacity() {
            return Err(LimitError::InvalidCost {
                cost,
                capacity: self.policy.capacity(),
            });
        }
        self.check_time(now)?;
        let balance = match self.buckets.get(key) {
            Some(b) => self.refill(b, now),
            None if self.buckets.len() >= self.max_keys => {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: self.max_keys,
                })
            }
            None => self.ceiling(),
        };
        let need = unit() * big(cost);
        let allowed = balance >= need;
        let after = if allowed { &balance - &need } else { balance };
        let retry_after_nanos = if allowed {
            0
        } else {
            let short = &need - &after;
            let rate = big(self.policy.tokens_per_second());
            let (whole, rest) = (&short / &rate, &short % &rate);
            let wait = if rest > BigInt::from(0) {
                whole + 1
            } else {
                whole
            };
            to_u64(&wait.min(big(MAX_QUANTITY)))
        };
        let whole_tokens = to_u64(&(&after / unit()));
        self.buckets.insert(
            key.to_owned(),
            ModelBucket {
                units: after,
                last: now,
            },
        );
        self.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        })
    }

    /// The seed's `evictFull`.
    ///
    /// # Errors
    ///
    /// As [`Limiter::evict_full`](ratelimit_lab_api::Limiter::evict_full).
    pub fn evict_full(&mut self, now: u64) -> Result<usize, LimitError> {
        self.check_time(now)?;
        let full: Vec<String> = self
            .buckets
            .iter()
            .filter(|(_, b)| self.refill(b, now) == self.ceiling())
            .map(|(k, _)| k.clone())
            .collect();
        for k in &full {
            self.buckets.remove(k);
        }
        self.observed = now;
        Ok(full.len())
    }

    /// The seed's `replacePolicy`.
    ///
    /// # Errors
    ///
    /// As [`Limiter::replace_policy`](ratelimit_lab_api::Limiter::replace_policy).
    pub fn replace_policy(
        &mut self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        self.check_time(now)?;
        let current = self.policy.version();
        if expected_version != current || next.version() <= current {
            return Err(LimitError::StalePolicyVersion {
                expected: expected_version,
                current,
                next: next.version(),
            });
        }
        let new_ceiling = unit() * big(next.capacity());
        let updated: BTreeMap<String, ModelBucket> = self
            .buckets
            .iter()
            .map(|(k, b)| {
                let units = self.refill(b, now).min(new_ceiling.clone());
                (k.clone(), ModelBucket { units, last: now })
            })
            .collect();
        self.buckets = updated;
        self.policy = next;
        self.observed = now;
        Ok(())
    }

    /// The balance `key` would have at `now` under the policy in force, without changing
    /// anything; `None` for an untracked key (which would start full).
    pub fn balance_at(&self, key: &str, now: u64) -> Option<BigInt> {
        self.buckets.get(key).map(|b| self.refill(b, now))
    }

    /// The state in the [`Snapshot`] shape designs report.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            policy: self.policy,
            observed_nanos: self.observed,
            buckets: self
                .buckets
                .iter()
                .map(|(k, b)| {
                    let units = u128::try_from(&b.units).unwrap_or(u128::MAX);
                    (
                        k.clone(),
                        BucketState {
                            units,
                            last_nanos: b.last,
                        },
                    )
                })
                .collect(),
        }
    }
}

/// Converts a value the caller has already bounded to `0..=MAX_QUANTITY`.
fn to_u64(v: &BigInt) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}
