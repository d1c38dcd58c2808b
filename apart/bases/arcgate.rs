//! A token bucket with a lock per key.
//!
//! The table of keys is an `RwLock<HashMap<String, Arc<Mutex<Bucket>>>>` beside the policy.
//! An admission on a tracked key takes the table's read lock and that key's bucket lock, so
//! that calls on different keys run side by side; a separate gate (`Mutex<Gate>`) holds the
//! observed time and the key count, and is where every call checks and raises the time. A new
//! key, a sweep, a cutover and a snapshot take the table's write lock, which excludes every
//! other call.
//!
//! Lock order: table, then a bucket, then the gate. Under the table's write lock no other
//! thread holds a bucket, so a writer may take the gate before the buckets.
//!
//! A bucket keeps whole tokens (`u64`) and the fraction of a token in units (`< 10^9`)
//! separately; arithmetic joins them into `u128` units.
use std::collections::HashMap;

use ratelimit_lab::sync::{Arc, Mutex, RwLock};
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

/// A bucket's balance at `last`: `whole` tokens and `rem` units of a further token.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    whole: u64,
    rem: u64,
    last: u64,
}

impl Bucket {
    fn full(p: &Policy, now: u64) -> Bucket {
        Bucket {
            whole: p.capacity(),
            rem: 0,
            last: now,
        }
    }

    fn from_units(units: u128, last: u64) -> Bucket {
        Bucket {
            whole: (units / UNIT) as u64,
            rem: (units % UNIT) as u64,
            last,
        }
    }

    fn units(&self) -> u128 {
        self.whole as u128 * UNIT + self.rem as u128
    }

    /// The balance refilled to `now` under `p`, clamped to its capacity.
    fn refilled(&self, p: &Policy, now: u64) -> u128 {
        let earned = (now - self.last) as u128 * p.tokens_per_second() as u128;
        cap_units(p).min(self.units() + earned)
    }
}

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

/// The observed time and the number of tracked keys.
#[derive(Debug)]
struct Gate {
    observed: u64,
    keys: usize,
}

#[derive(Debug)]
struct Table {
    policy: Policy,
    buckets: HashMap<String, Arc<Mutex<Bucket>>>,
}

/// A token bucket with a lock per key, a table lock and a gate for time and key count.
#[derive(Debug)]
pub struct MyLimiter {
    table: RwLock<Table>,
    gate: Mutex<Gate>,
    max_keys: usize,
}

/// Refill `b` to `now`, spend `cost` if it is covered, store the result dated `now`.
fn spend(p: &Policy, b: &mut Bucket, cost: u64, now: u64) -> Decision {
    let balance = b.refilled(p, now);
    let need = cost as u128 * UNIT;
    if balance >= need {
        let after = balance - need;
        *b = Bucket::from_units(after, now);
        Decision {
            allowed: true,
            whole_tokens: (after / UNIT) as u64,
            retry_after_nanos: 0,
        }
    } else {
        *b = Bucket::from_units(balance, now);
        let rate = p.tokens_per_second() as u128;
        let wait = (need - balance).div_ceil(rate);
        Decision {
            allowed: false,
            whole_tokens: (balance / UNIT) as u64,
            retry_after_nanos: wait.min(MAX_QUANTITY as u128) as u64,
        }
    }
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            table: RwLock::new(Table {
                policy,
                buckets: HashMap::new(),
            }),
            gate: Mutex::new(Gate {
                observed: 0,
                keys: 0,
            }),
            max_keys,
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        {
            // A tracked key: the table's read lock, then the key's own lock.
            let table = self.table.read().unwrap();
            let policy = table.policy;
            rules::check_cost(&policy, cost)?;
            if let Some(cell) = table.buckets.get(key) {
                let mut bucket = cell.lock().unwrap();
                {
                    let mut gate = self.gate.lock().unwrap();
                    rules::check_time(now, gate.observed)?;
                    gate.observed = now;
                }
                return Ok(spend(&policy, &mut bucket, cost, now));
            }
        }
        // A new key (or one another call added meanwhile): the table's write lock.
        let mut table = self.table.write().unwrap();
        let policy = table.policy;
        rules::check_cost(&policy, cost)?;
        let mut gate = self.gate.lock().unwrap();
        rules::check_time(now, gate.observed)?;
        if let Some(cell) = table.buckets.get(key) {
            let mut bucket = cell.lock().unwrap();
            gate.observed = now;
            return Ok(spend(&policy, &mut bucket, cost, now));
        }
        if gate.keys >= self.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: self.max_keys,
            });
        }
        let mut bucket = Bucket::full(&policy, now);
        let decision = spend(&policy, &mut bucket, cost, now);
        table
            .buckets
            .insert(key.to_owned(), Arc::new(Mutex::new(bucket)));
        gate.keys += 1;
        gate.observed = now;
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut table = self.table.write().unwrap();
        let mut gate = self.gate.lock().unwrap();
        rules::check_time(now, gate.observed)?;
        let policy = table.policy;
        let cap = cap_units(&policy);
        let before = table.buckets.len();
        table
            .buckets
            .retain(|_, cell| cell.lock().unwrap().refilled(&policy, now) != cap);
        let removed = before - table.buckets.len();
        gate.keys -= removed;
        gate.observed = now;
        Ok(removed)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut table = self.table.write().unwrap();
        let mut gate = self.gate.lock().unwrap();
        rules::check_time(now, gate.observed)?;
        rules::check_version(&table.policy, &next, expected_version)?;
        let old = table.policy;
        let new_cap = cap_units(&next);
        for cell in table.buckets.values() {
            let mut bucket = cell.lock().unwrap();
            let balance = bucket.refilled(&old, now).min(new_cap);
            *bucket = Bucket::from_units(balance, now);
        }
        table.policy = next;
        gate.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.gate.lock().unwrap().keys
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let table = self.table.write().unwrap();
        let gate = self.gate.lock().unwrap();
        let buckets = table
            .buckets
            .iter()
            .map(|(k, cell)| {
                let b = cell.lock().unwrap();
                (
                    k.clone(),
                    BucketState {
                        units: b.units(),
                        last_nanos: b.last,
                    },
                )
            })
            .collect();
        Some(Snapshot {
            policy: table.policy,
            observed_nanos: gate.observed,
            buckets,
        })
    }
}
