//! Sharded token bucket: keys spread over `SHARDS` maps, each behind its own `Mutex`.
//!
//! Locks, always taken in this order:
//!  1. `admin` (`RwLock<Policy>`): `allow` reads it; `evict_full`, `replace_policy` and
//!     `snapshot` write it, so they see every shard at rest.
//!  2. one shard (`allow`), or every shard in index order (the writers above).
//!  3. `gate` (`Mutex<Gate>`): the observed time and the key count, checked and raised in one
//!     short critical section, which is where a call takes effect.
use std::collections::{BTreeMap, HashMap};

use ratelimit_lab::sync::{Mutex, RwLock};
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;
const SHARDS: usize = 8;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    units: u128,
    last: u64,
}

#[derive(Debug)]
struct Gate {
    observed: u64,
    keys: usize,
}

/// A limiter whose keys live in independently locked shards.
#[derive(Debug)]
pub struct MyLimiter {
    max_keys: usize,
    admin: RwLock<Policy>,
    shards: Vec<Mutex<HashMap<String, Bucket>>>,
    gate: Mutex<Gate>,
}

/// FNV-1a: the same shard for a key on every run (no random hasher keys).
fn shard_of(key: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % SHARDS as u64) as usize
}

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

fn refilled(p: &Policy, b: &Bucket, now: u64) -> u128 {
    let earned = (now - b.last) as u128 * p.tokens_per_second() as u128;
    cap_units(p).min(b.units + earned)
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            max_keys,
            admin: RwLock::new(policy),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            gate: Mutex::new(Gate {
                observed: 0,
                keys: 0,
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let policy = self.admin.read().unwrap();
        rules::check_cost(&policy, cost)?;
        let mut shard = self.shards[shard_of(key)].lock().unwrap();
        let existing = shard.get(key).copied();
        {
            let mut gate = self.gate.lock().unwrap();
            rules::check_time(now, gate.observed)?;
            if existing.is_none() {
                if gate.keys >= self.max_keys {
                    return Err(LimitError::KeyCapacityReached {
                        max_keys: self.max_keys,
                    });
                }
                gate.keys += 1;
            }
            gate.observed = gate.observed.max(now);
        }
        // From here on nothing can fail; the shard lock hides the bucket until it is saved.
        let balance = match existing {
            Some(b) => refilled(&policy, &b, now),
            None => cap_units(&policy),
        };
        let need = cost as u128 * UNIT;
        let allowed = balance >= need;
        let after = if allowed { balance - need } else { balance };
        let retry = if allowed {
            0
        } else {
            let wait = (need - after).div_ceil(policy.tokens_per_second() as u128);
            wait.min(MAX_QUANTITY as u128) as u64
        };
        shard.insert(
            key.to_owned(),
            Bucket {
                units: after,
                last: now,
            },
        );
        Ok(Decision {
            allowed,
            whole_tokens: (after / UNIT) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let policy = self.admin.write().unwrap();
        {
            let gate = self.gate.lock().unwrap();
            rules::check_time(now, gate.observed)?;
        }
        let cap = cap_units(&policy);
        let mut removed = 0;
        for shard in &self.shards {
            let mut m = shard.lock().unwrap();
            let before = m.len();
            m.retain(|_, b| refilled(&policy, b, now) < cap);
            removed += before - m.len();
        }
        let mut gate = self.gate.lock().unwrap();
        gate.keys -= removed;
        gate.observed = now;
        Ok(removed)
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut policy = self.admin.write().unwrap();
        {
            let gate = self.gate.lock().unwrap();
            rules::check_time(now, gate.observed)?;
        }
        rules::check_version(&policy, &next, expected_version)?;
        let new_cap = cap_units(&next);
        for shard in &self.shards {
            let mut m = shard.lock().unwrap();
            for b in m.values_mut() {
                *b = Bucket {
                    units: refilled(&policy, b, now).min(new_cap),
                    last: now,
                };
            }
        }
        *policy = next;
        self.gate.lock().unwrap().observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.gate.lock().unwrap().keys
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let policy = self.admin.write().unwrap();
        let mut buckets = BTreeMap::new();
        for shard in &self.shards {
            for (k, b) in shard.lock().unwrap().iter() {
                buckets.insert(
                    k.clone(),
                    BucketState {
                        units: b.units,
                        last_nanos: b.last,
                    },
                );
            }
        }
        let observed = self.gate.lock().unwrap().observed;
        Some(Snapshot {
            policy: *policy,
            observed_nanos: observed,
            buckets,
        })
    }
}
