//! A token bucket that stores what each key owes (capacity minus balance) instead of its
//! balance, in a sorted map. One `Mutex` orders every change; the key count is mirrored in an
//! atomic written inside that lock, so `key_count` reads it without locking.
use std::collections::BTreeMap;

use ratelimit_lab::sync::atomic::{AtomicUsize, Ordering};
use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

#[derive(Clone, Copy, Debug)]
struct Debt {
    owed: u128,
    at: u64,
}

impl Debt {
    /// What is still owed at `now`: refill pays the debt down, never below zero.
    fn at_time(self, p: &Policy, now: u64) -> u128 {
        let paid = (now - self.at) as u128 * p.tokens_per_second() as u128;
        self.owed.saturating_sub(paid)
    }
}

#[derive(Debug)]
struct Table {
    policy: Policy,
    seen: u64,
    debts: BTreeMap<String, Debt>,
}

/// Limiter over per-key debts.
#[derive(Debug)]
pub struct MyLimiter {
    max_keys: usize,
    count: AtomicUsize,
    table: Mutex<Table>,
}

fn full(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

impl Limiter for MyLimiter {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        rules::check_max_keys(max_keys)?;
        Ok(MyLimiter {
            max_keys,
            count: AtomicUsize::new(0),
            table: Mutex::new(Table {
                policy,
                seen: 0,
                debts: BTreeMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut t = self.table.lock().unwrap();
        let p = t.policy;
        rules::check_cost(&p, cost)?;
        rules::check_time(now, t.seen)?;
        let existing = t.debts.get(key).copied();
        if existing.is_none() && t.debts.len() >= self.max_keys {
            return Err(LimitError::KeyCapacityReached {
                max_keys: self.max_keys,
            });
        }
        let owed = existing.map_or(0, |d| d.at_time(&p, now));
        let need = cost as u128 * UNIT;
        let room = full(&p) - owed;
        let (allowed, owed) = if room >= need {
            (true, owed + need)
        } else {
            (false, owed)
        };
        let retry_after_nanos = if allowed {
            0
        } else {
            let r = p.tokens_per_second() as u128;
            ((need - room + r - 1) / r).min(MAX_QUANTITY as u128) as u64
        };
        t.debts.insert(key.to_owned(), Debt { owed, at: now });
        t.seen = now;
        if existing.is_none() {
            self.count.store(t.debts.len(), Ordering::SeqCst);
        }
        Ok(Decision {
            allowed,
            whole_tokens: ((full(&p) - owed) / UNIT) as u64,
            retry_after_nanos,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut t = self.table.lock().unwrap();
        rules::check_time(now, t.seen)?;
        let p = t.policy;
        let doomed: Vec<String> = t
            .debts
            .iter()
            .filter(|(_, d)| d.at_time(&p, now) == 0)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &doomed {
            t.debts.remove(k);
        }
        t.seen = now;
        self.count.store(t.debts.len(), Ordering::SeqCst);
        Ok(doomed.len())
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut t = self.table.lock().unwrap();
        rules::check_time(now, t.seen)?;
        rules::check_version(&t.policy, &next, expected_version)?;
        let old = t.policy;
        let migrated: BTreeMap<String, Debt> = t
            .debts
            .iter()
            .map(|(k, d)| {
                let balance = (full(&old) - d.at_time(&old, now)).min(full(&next));
                (
                    k.clone(),
                    Debt {
                        owed: full(&next) - balance,
                        at: now,
                    },
                )
            })
            .collect();
        t.debts = migrated;
        t.policy = next;
        t.seen = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let t = self.table.lock().unwrap();
        let cap = full(&t.policy);
        Some(Snapshot {
            policy: t.policy,
            observed_nanos: t.seen,
            buckets: t
                .debts
                .iter()
                .map(|(k, d)| {
                    (
                        k.clone(),
                        BucketState {
                            units: cap - d.owed,
                            last_nanos: d.at,
                        },
                    )
                })
                .collect(),
        })
    }
}
