//! GCRA-style token bucket: each key stores the instant at which its bucket is full again,
//! scaled by the rate so that it is exact: `tat = full_at_ns × rate`, in units.
//!
//! At time `t` (policy rate `r`, capacity `c`, `C = c × UNITS_PER_TOKEN`):
//!   deficit(t) = max(0, tat − t × r)         (units missing from a full bucket)
//!   balance(t) = C − deficit(t)
//! Spending `cost` tokens raises `tat` by `cost × UNITS_PER_TOKEN` (from `max(tat, t × r)`).
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
    observed: u64,
    /// key → tat (full-at time × rate, in units).
    tat: HashMap<String, u128>,
}

impl State {
    fn cap_units(&self) -> u128 {
        self.policy.capacity() as u128 * UNIT
    }
    fn scaled_now(&self, now: u64) -> u128 {
        now as u128 * self.policy.tokens_per_second() as u128
    }
    fn deficit(&self, tat: u128, now: u64) -> u128 {
        tat.saturating_sub(self.scaled_now(now))
    }
    fn balance(&self, tat: u128, now: u64) -> u128 {
        self.cap_units() - self.deficit(tat, now)
    }
}

/// A limiter storing, per key, when its bucket is full again.
#[derive(Debug)]
pub struct MyLimiter {
    max_keys: usize,
    state: Mutex<State>,
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            max_keys,
            state: Mutex::new(State {
                policy,
                observed: 0,
                tat: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_key(key)?;
        rules::check_cost(&s.policy, cost)?;
        rules::check_time(now, s.observed)?;
        let scaled_now = s.scaled_now(now);
        let tat = match s.tat.get(key) {
            Some(&t) => t,
            None => {
                if s.tat.len() >= self.max_keys {
                    return Err(LimitError::KeyCapacityReached {
                        max_keys: self.max_keys,
                    });
                }
                scaled_now // a new key starts full
            }
        };
        let need = cost as u128 * UNIT;
        let deficit = s.deficit(tat, now);
        let balance = s.cap_units() - deficit;
        let rate = s.policy.tokens_per_second() as u128;
        let (allowed, new_tat, after, retry) = if balance >= need {
            let base = tat.max(scaled_now);
            (true, base + need, balance - need, 0u64)
        } else {
            let wait = (need - balance).div_ceil(rate);
            let retry = wait.min(MAX_QUANTITY as u128) as u64;
            // A rejection keeps the bucket as it is: its full-at time does not move.
            (false, tat.max(scaled_now), balance, retry)
        };
        s.tat.insert(key.to_owned(), new_tat);
        s.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens: (after / UNIT) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        let scaled_now = s.scaled_now(now);
        let before = s.tat.len();
        s.tat.retain(|_, tat| *tat > scaled_now);
        s.observed = now;
        Ok(before - s.tat.len())
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        rules::check_version(&s.policy, &next, expected_version)?;
        let new_cap = next.capacity() as u128 * UNIT;
        let new_scaled_now = now as u128 * next.tokens_per_second() as u128;
        let migrated: HashMap<String, u128> = s
            .tat
            .iter()
            .map(|(k, &tat)| {
                let b = s.balance(tat, now).min(new_cap);
                (k.clone(), new_scaled_now + (new_cap - b))
            })
            .collect();
        s.tat = migrated;
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.state.lock().unwrap().tat.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.state.lock().unwrap();
        let at = s.observed;
        let buckets: BTreeMap<String, BucketState> = s
            .tat
            .iter()
            .map(|(k, &tat)| {
                (
                    k.clone(),
                    BucketState {
                        units: s.balance(tat, at),
                        last_nanos: at,
                    },
                )
            })
            .collect();
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: at,
            buckets,
        })
    }
}
