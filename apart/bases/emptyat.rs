//! A token bucket that keeps, for each key, when its balance was zero.
//!
//! Time is measured on a scaled clock: the clock of a policy reads `(now − origin) × rate`
//! units at `now`, where `origin` is the time of the last cutover (0 before any). A bucket
//! stores the clock reading `empty_at` at which it held (or would have held) nothing; its
//! balance at `now` is `min(capacity, clock(now) − empty_at)`. A full bucket's `empty_at`
//! lies a capacity or more in the clock's past; a bucket created at a cutover's instant
//! reads below 0. A cutover re-bases every bucket on the new clock, which starts at 0.
//!
//! The state keeps no time per bucket, so the snapshot dates every bucket at the observed
//! time. One `Mutex` guards the whole state.
use std::collections::{BTreeMap, HashMap};

use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

#[derive(Debug)]
struct State {
    policy: Policy,
    /// The time from which the scaled clock counts.
    origin: u64,
    observed: u64,
    /// Per key: the scaled clock reading at which its balance was zero.
    empty_at: HashMap<String, i128>,
}

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

impl State {
    /// The scaled clock at `now`: below 2^127, since `now − origin < 2^64` and `rate < 2^63`.
    fn clock(&self, now: u64) -> i128 {
        ((now - self.origin) as u128 * self.policy.tokens_per_second() as u128) as i128
    }

    /// The balance at `now` of a bucket empty at `empty_at`, under the policy in force.
    fn balance(&self, empty_at: i128, now: u64) -> u128 {
        let cap = cap_units(&self.policy);
        match self.clock(now).checked_sub(empty_at) {
            Some(v) => (v as u128).min(cap),
            // Only a reading far beyond a full bucket overflows.
            None => cap,
        }
    }
}

/// A token bucket storing each key's empty time on a scaled clock.
#[derive(Debug)]
pub struct MyLimiter {
    state: Mutex<State>,
    max_keys: usize,
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            state: Mutex::new(State {
                policy,
                origin: 0,
                observed: 0,
                empty_at: HashMap::new(),
            }),
            max_keys,
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut s = self.state.lock().unwrap();
        let policy = s.policy;
        rules::check_cost(&policy, cost)?;
        rules::check_time(now, s.observed)?;
        let balance = match s.empty_at.get(key) {
            Some(&e) => s.balance(e, now),
            None => {
                if s.empty_at.len() >= self.max_keys {
                    return Err(LimitError::KeyCapacityReached {
                        max_keys: self.max_keys,
                    });
                }
                cap_units(&policy)
            }
        };
        let need = cost as u128 * UNIT;
        let (decision, after) = if balance >= need {
            let after = balance - need;
            let d = Decision {
                allowed: true,
                whole_tokens: (after / UNIT) as u64,
                retry_after_nanos: 0,
            };
            (d, after)
        } else {
            let rate = policy.tokens_per_second() as u128;
            let wait = (need - balance).div_ceil(rate);
            let d = Decision {
                allowed: false,
                whole_tokens: (balance / UNIT) as u64,
                retry_after_nanos: wait.min(MAX_QUANTITY as u128) as u64,
            };
            (d, balance)
        };
        let empty = s.clock(now) - after as i128;
        match s.empty_at.get_mut(key) {
            Some(e) => *e = empty,
            None => {
                s.empty_at.insert(key.to_owned(), empty);
            }
        }
        s.observed = now;
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        let cap = cap_units(&s.policy);
        let before = s.empty_at.len();
        let mut map = std::mem::take(&mut s.empty_at);
        map.retain(|_, e| s.balance(*e, now) != cap);
        s.empty_at = map;
        let removed = before - s.empty_at.len();
        s.observed = now;
        Ok(removed)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        rules::check_version(&s.policy, &next, expected_version)?;
        let new_cap = cap_units(&next);
        let mut map = std::mem::take(&mut s.empty_at);
        // The new clock starts at 0 at `now`: a bucket holding b units was empty at −b.
        for e in map.values_mut() {
            *e = -(s.balance(*e, now).min(new_cap) as i128);
        }
        s.empty_at = map;
        s.policy = next;
        s.origin = now;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.state.lock().unwrap().empty_at.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.state.lock().unwrap();
        let buckets: BTreeMap<String, BucketState> = s
            .empty_at
            .iter()
            .map(|(k, &e)| {
                (
                    k.clone(),
                    BucketState {
                        units: s.balance(e, s.observed),
                        last_nanos: s.observed,
                    },
                )
            })
            .collect();
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets,
        })
    }
}
