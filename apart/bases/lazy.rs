//! Lazy token bucket: one `Mutex` over a map of `(units, last, epoch)`.
//!
//! A policy change is O(1): it appends the new policy and its cutover time to a history.
//! A bucket is brought up to date only when it is touched (or inspected): it replays each
//! cutover it missed (refill under the old policy to the cutover time, clamp to the next
//! capacity), then refills under the current policy to `now`. History entries no bucket
//! refers to any more are dropped.
use std::collections::{BTreeMap, HashMap, VecDeque};

use ratelimit_lab::sync::Mutex;
use ratelimit_lab::{
    rules, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};

const UNIT: u128 = UNITS_PER_TOKEN as u128;

fn cap_units(p: &Policy) -> u128 {
    p.capacity() as u128 * UNIT
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    units: u128,
    last: u64,
    /// Absolute index of the policy this bucket was last brought up to date under.
    epoch: usize,
}

#[derive(Debug)]
struct Inner {
    /// (policy, time it took effect); `history[i]` has absolute epoch `base + i`.
    history: VecDeque<(Policy, u64)>,
    /// How many buckets sit at each epoch of `history`.
    refs: VecDeque<usize>,
    base: usize,
    observed: u64,
    buckets: HashMap<String, Bucket>,
}

impl Inner {
    fn current(&self) -> &Policy {
        &self.history.back().unwrap().0
    }
    fn current_epoch(&self) -> usize {
        self.base + self.history.len() - 1
    }
    /// The bucket's balance under the current policy, at time `at` (`at` ≥ every cutover).
    fn bring_up(&self, b: &Bucket, at: u64) -> u128 {
        let mut units = b.units;
        let mut last = b.last;
        let mut i = b.epoch - self.base;
        while i + 1 < self.history.len() {
            let (p, _) = &self.history[i];
            let (next, cut) = &self.history[i + 1];
            units = refill(p, units, last, *cut).min(cap_units(next));
            last = *cut;
            i += 1;
        }
        refill(self.current(), units, last, at)
    }
    fn forget(&mut self, epoch: usize) {
        self.refs[epoch - self.base] -= 1;
    }
    fn hold(&mut self, epoch: usize) {
        self.refs[epoch - self.base] += 1;
    }
    fn prune(&mut self) {
        while self.history.len() > 1 && self.refs[0] == 0 {
            self.history.pop_front();
            self.refs.pop_front();
            self.base += 1;
        }
    }
}

/// Refill `units` from `from` to `to` under `p`, only when there is something to add.
fn refill(p: &Policy, units: u128, from: u64, to: u64) -> u128 {
    let cap = cap_units(p);
    if units >= cap || to == from {
        return units.min(cap);
    }
    let earned = (to - from) as u128 * p.tokens_per_second() as u128;
    cap.min(units + earned)
}

/// A limiter that migrates buckets to a new policy one at a time, when they are next used.
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
                history: VecDeque::from([(policy, 0)]),
                refs: VecDeque::from([0]),
                base: 0,
                observed: 0,
                buckets: HashMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        rules::check_key(key)?;
        let mut g = self.inner.lock().unwrap();
        let policy = *g.current();
        rules::check_cost(&policy, cost)?;
        rules::check_time(now, g.observed)?;
        let epoch = g.current_epoch();
        let balance = match g.buckets.get(key) {
            Some(b) => {
                let b = *b;
                let units = g.bring_up(&b, now);
                g.forget(b.epoch);
                units
            }
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
            let wait = (need - after).div_ceil(policy.tokens_per_second() as u128);
            wait.min(MAX_QUANTITY as u128) as u64
        };
        g.buckets.insert(
            key.to_owned(),
            Bucket {
                units: after,
                last: now,
                epoch,
            },
        );
        g.hold(epoch);
        g.observed = now;
        g.prune();
        Ok(Decision {
            allowed,
            whole_tokens: (after / UNIT) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let mut g = self.inner.lock().unwrap();
        rules::check_time(now, g.observed)?;
        let cap = cap_units(g.current());
        let full: Vec<(String, usize)> = g
            .buckets
            .iter()
            .filter(|(_, b)| g.bring_up(b, now) == cap)
            .map(|(k, b)| (k.clone(), b.epoch))
            .collect();
        for (k, epoch) in &full {
            g.buckets.remove(k);
            g.forget(*epoch);
        }
        g.observed = now;
        g.prune();
        Ok(full.len())
    }

    fn replace_policy(&self, next: Policy, expected_version: u64, now: u64) -> Result<(), LimitError> {
        let mut g = self.inner.lock().unwrap();
        rules::check_time(now, g.observed)?;
        rules::check_version(g.current(), &next, expected_version)?;
        g.history.push_back((next, now));
        g.refs.push_back(0);
        g.observed = now;
        g.prune();
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.inner.lock().unwrap().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let g = self.inner.lock().unwrap();
        let cur = g.current_epoch();
        let last_cut = g.history.back().unwrap().1;
        let buckets = g
            .buckets
            .iter()
            .map(|(k, b)| {
                let state = if b.epoch == cur {
                    BucketState {
                        units: b.units,
                        last_nanos: b.last,
                    }
                } else {
                    // Migrated only as far as the latest cutover: its balance then, under the
                    // policy in force.
                    BucketState {
                        units: g.bring_up(b, last_cut),
                        last_nanos: last_cut,
                    }
                };
                (k.clone(), state)
            })
            .collect::<BTreeMap<_, _>>();
        Some(Snapshot {
            policy: *g.current(),
            observed_nanos: g.observed,
            buckets,
        })
    }
}
