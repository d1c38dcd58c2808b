//! A token bucket that stores, per key, the moment it will be full again rather than its balance.
//!
//! Time is measured in "earned units": `t × tokens_per_second` is how many fixed-point units a
//! bucket earns from the origin to `t`. A bucket keeps `full_at`, the earned-units reading at
//! which it is full again; its deficit at `t` is `full_at − t × rate` (zero once passed), and its
//! balance is `capacity × UNIT − deficit`. One `Mutex` covers the policy, the time and the map.
use std::collections::{BTreeMap, HashMap};

use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// Earned-units reading at which the bucket is full again.
    full_at: u128,
    /// Last time the bucket was touched (for the snapshot).
    last: u64,
}

#[derive(Debug)]
struct State {
    policy: Policy,
    observed: u64,
    buckets: HashMap<String, Bucket>,
}

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

fn clock(p: &Policy, t: u64) -> u128 {
    t as u128 * p.tokens_per_second() as u128
}

fn deficit(p: &Policy, b: &Bucket, now: u64) -> u128 {
    b.full_at.saturating_sub(clock(p, now))
}

/// Limiter keyed by string, one lock.
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
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut s = self.state.lock().unwrap();
        let p = s.policy;
        rules::check_cost(&p, cost)?;
        rules::check_time(now, s.observed)?;
        let owed = match s.buckets.get(key) {
            Some(b) => deficit(&p, b, now),
            None => {
                if s.buckets.len() >= self.max_keys {
                    return Err(LimitError::KeyCapacityReached {
                        max_keys: self.max_keys,
                    });
                }
                0
            }
        };
        let cap = cap_units(&p);
        let balance = cap - owed;
        let need = cost as u128 * UNIT;
        let allowed = balance >= need;
        let owed_after = if allowed { owed + need } else { owed };
        let retry = if allowed {
            0
        } else {
            let wait = (need - balance).div_ceil(p.tokens_per_second() as u128);
            wait.min(MAX_QUANTITY as u128) as u64
        };
        s.buckets.insert(
            key.to_owned(),
            Bucket {
                full_at: clock(&p, now) + owed_after,
                last: now,
            },
        );
        s.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens: ((cap - owed_after) / UNIT) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        let p = s.policy;
        let before = s.buckets.len();
        s.buckets.retain(|_, b| deficit(&p, b, now) > 0);
        s.observed = now;
        Ok(before - s.buckets.len())
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        rules::check_version(&s.policy, &next, expected_version)?;
        let old = s.policy;
        let old_cap = cap_units(&old);
        let new_cap = cap_units(&next);
        for b in s.buckets.values_mut() {
            let balance = (old_cap - deficit(&old, b, now)).min(new_cap);
            *b = Bucket {
                full_at: clock(&next, now) + (new_cap - balance),
                last: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.state.lock().unwrap().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.state.lock().unwrap();
        let p = s.policy;
        let cap = cap_units(&p);
        let buckets = s
            .buckets
            .iter()
            .map(|(k, b)| {
                let st = BucketState {
                    units: cap - deficit(&p, b, b.last),
                    last_nanos: b.last,
                };
                (k.clone(), st)
            })
            .collect::<BTreeMap<_, _>>();
        Some(Snapshot {
            policy: p,
            observed_nanos: s.observed,
            buckets,
        })
    }
}
