//! A plain token bucket: one `Mutex` over the policy, the observed time and the buckets.
use std::collections::{BTreeMap, HashMap};

use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    units: u128,
    last: u64,
}

#[derive(Debug)]
struct Inner {
    policy: Policy,
    observed: u64,
    buckets: HashMap<String, Bucket>,
}

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

fn refilled(p: &Policy, b: &Bucket, now: u64) -> u128 {
    let earned = (now - b.last) as u128 * p.tokens_per_second() as u128;
    cap_units(p).min(b.units + earned)
}

fn retry_after(need: u128, balance: u128, rate: u64) -> u64 {
    let wait = (need - balance).div_ceil(rate as u128);
    wait.min(MAX_QUANTITY as u128) as u64
}

/// A limiter with one lock over everything.
#[derive(Debug)]
pub struct MyLimiter {
    max_keys: usize,
    inner: Mutex<Inner>,
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            max_keys,
            inner: Mutex::new(Inner {
                policy,
                observed: 0,
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut g = self.inner.lock().unwrap();
        let policy = g.policy;
        rules::check_cost(&policy, cost)?;
        rules::check_time(now, g.observed)?;
        let balance = match g.buckets.get(key) {
            Some(b) => refilled(&policy, b, now),
            None => {
                if g.buckets.len() >= self.max_keys {
                    return Err(LimitError::KeyCapacityReached {
                        max_keys: self.max_keys,
                    });
                }
                cap_units(&policy)
            }
        };
        let need = cost as u128 * UNIT;
        let allowed = balance >= need;
        let after = if allowed { balance - need } else { balance };
        let retry = if allowed {
            0
        } else {
            retry_after(need, after, policy.tokens_per_second())
        };
        g.buckets.insert(
            key.to_owned(),
            Bucket {
                units: after,
                last: now,
            },
        );
        g.observed = now;
        Ok(Decision {
            allowed,
            whole_tokens: (after / UNIT) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut g = self.inner.lock().unwrap();
        rules::check_time(now, g.observed)?;
        let policy = g.policy;
        let cap = cap_units(&policy);
        let before = g.buckets.len();
        g.buckets.retain(|_, b| refilled(&policy, b, now) < cap);
        g.observed = now;
        Ok(before - g.buckets.len())
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut g = self.inner.lock().unwrap();
        rules::check_time(now, g.observed)?;
        rules::check_version(&g.policy, &next, expected_version)?;
        let old = g.policy;
        let new_cap = cap_units(&next);
        for b in g.buckets.values_mut() {
            *b = Bucket {
                units: refilled(&old, b, now).min(new_cap),
                last: now,
            };
        }
        g.policy = next;
        g.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.inner.lock().unwrap().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let g = self.inner.lock().unwrap();
        let buckets = g
            .buckets
            .iter()
            .map(|(k, b)| {
                let s = BucketState {
                    units: b.units,
                    last_nanos: b.last,
                };
                (k.clone(), s)
            })
            .collect::<BTreeMap<_, _>>();
        Some(Snapshot {
            policy: g.policy,
            observed_nanos: g.observed,
            buckets,
        })
    }
}
