//! A token bucket that keeps full buckets as bare keys.
//!
//! A full bucket stays full however long it waits (refill is clamped), so it needs no state:
//! its key sits in `full`, a `BTreeSet`. A bucket that is short of full sits in `partial`, a
//! `BTreeMap`, as the units it was short of full (`short`, above 0) at the time it was last
//! settled (`since`); it is short of `short − (now − since) × rate` units at `now`, or of none.
//! Every call that settles a bucket files it again: in `full` when it is short of nothing, in
//! `partial` otherwise. The policy is held with its capacity in units and its rate precomputed.
//! One `Mutex` guards the whole state.
use std::collections::{BTreeMap, BTreeSet};

use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

/// The policy in force with its capacity in units and its rate in units per nanosecond.
#[derive(Clone, Copy, Debug)]
struct Limits {
    policy: Policy,
    cap_units: u128,
    rate: u128,
}

impl Limits {
    fn of(policy: Policy) -> Limits {
        Limits {
            policy,
            cap_units: policy.capacity() as u128 * UNIT,
            rate: policy.tokens_per_second() as u128,
        }
    }
}

/// A bucket short of full: `short` units missing at `since`.
#[derive(Clone, Copy, Debug)]
struct Partial {
    short: u128,
    since: u64,
}

impl Partial {
    /// The units still missing at `now` under `l`.
    fn short_at(&self, l: &Limits, now: u64) -> u128 {
        let earned = (now - self.since) as u128 * l.rate;
        self.short.saturating_sub(earned)
    }
}

#[derive(Debug)]
struct State {
    limits: Limits,
    observed: u64,
    full: BTreeSet<String>,
    partial: BTreeMap<String, Partial>,
}

impl State {
    fn keys(&self) -> usize {
        self.full.len() + self.partial.len()
    }

    /// File `key` as short of `short` units at `now`.
    fn settle(&mut self, key: &str, short: u128, now: u64) {
        if short == 0 {
            self.partial.remove(key);
            if !self.full.contains(key) {
                self.full.insert(key.to_owned());
            }
        } else {
            self.full.remove(key);
            match self.partial.get_mut(key) {
                Some(p) => *p = Partial { short, since: now },
                None => {
                    self.partial
                        .insert(key.to_owned(), Partial { short, since: now });
                }
            }
        }
    }
}

/// A token bucket: full buckets as bare keys, the others as units short of full.
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
                limits: Limits::of(policy),
                observed: 0,
                full: BTreeSet::new(),
                partial: BTreeMap::new(),
            }),
            max_keys,
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut s = self.state.lock().unwrap();
        let l = s.limits;
        rules::check_cost(&l.policy, cost)?;
        rules::check_time(now, s.observed)?;
        let short = if s.full.contains(key) {
            0
        } else if let Some(p) = s.partial.get(key) {
            p.short_at(&l, now)
        } else {
            if s.keys() >= self.max_keys {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: self.max_keys,
                });
            }
            0
        };
        let balance = l.cap_units - short;
        let need = cost as u128 * UNIT;
        let decision = if balance >= need {
            let after = balance - need;
            s.settle(key, l.cap_units - after, now);
            Decision {
                allowed: true,
                whole_tokens: (after / UNIT) as u64,
                retry_after_nanos: 0,
            }
        } else {
            s.settle(key, short, now);
            let wait = (need - balance).div_ceil(l.rate);
            Decision {
                allowed: false,
                whole_tokens: (balance / UNIT) as u64,
                retry_after_nanos: wait.min(MAX_QUANTITY as u128) as u64,
            }
        };
        s.observed = now;
        Ok(decision)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut s = self.state.lock().unwrap();
        rules::check_time(now, s.observed)?;
        let l = s.limits;
        let before = s.keys();
        s.full.clear();
        s.partial.retain(|_, p| p.short_at(&l, now) > 0);
        let removed = before - s.keys();
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
        rules::check_version(&s.limits.policy, &next, expected_version)?;
        let old = s.limits;
        let new = Limits::of(next);
        let mut full = BTreeSet::new();
        let mut partial = BTreeMap::new();
        let mut file = |key: String, balance: u128| {
            let short = new.cap_units - balance.min(new.cap_units);
            if short == 0 {
                full.insert(key);
            } else {
                partial.insert(key, Partial { short, since: now });
            }
        };
        for key in std::mem::take(&mut s.full) {
            file(key, old.cap_units);
        }
        for (key, p) in std::mem::take(&mut s.partial) {
            file(key, old.cap_units - p.short_at(&old, now));
        }
        s.full = full;
        s.partial = partial;
        s.limits = new;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.state.lock().unwrap().keys()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.state.lock().unwrap();
        let cap = s.limits.cap_units;
        let mut buckets = BTreeMap::new();
        for key in &s.full {
            buckets.insert(
                key.clone(),
                BucketState {
                    units: cap,
                    last_nanos: s.observed,
                },
            );
        }
        for (key, p) in &s.partial {
            buckets.insert(
                key.clone(),
                BucketState {
                    units: cap - p.short,
                    last_nanos: p.since,
                },
            );
        }
        Some(Snapshot {
            policy: s.limits.policy,
            observed_nanos: s.observed,
            buckets,
        })
    }
}
