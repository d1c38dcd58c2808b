//! Every interleaving of two racing calls on `TokenBucket`, explored exhaustively by loom,
//! checked against the specification: the two outcomes, what a later call observes, and the
//! final state must be those of one of the two sequential orders.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target-loom cargo test -p ratelimit-lab-reference --test loom --release`.
#![cfg(loom)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use ratelimit_lab_api::sync::{thread, Arc, Mutex, MutexGuard};
use ratelimit_lab_api::{
    is_blank_key, BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY,
    UNITS_PER_TOKEN,
};
use ratelimit_lab_model::{Model, Op, Outcome};
use ratelimit_lab_reference::{Clock, Clocked, ManualClock, TokenBucket};

const SECOND: u64 = 1_000_000_000;

// ---------------------------------------------------------------------------------------------
// Scenarios: a sequential init part, one call on each of two threads, a sequential post part
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Scenario {
    policy: Policy,
    max_keys: usize,
    init: Vec<Op>,
    a: Op,
    b: Op,
    post: Vec<Op>,
}

/// What one execution showed: both racing outcomes, the post part's outcomes, the final state.
#[derive(Clone, Debug, PartialEq)]
struct Observed {
    a: Outcome,
    b: Outcome,
    post: Vec<Outcome>,
    state: Snapshot,
}

fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_owned(),
        cost,
        now,
    }
}

fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
    Policy::new(version, capacity, rate).unwrap()
}

impl Scenario {
    /// The specification's result with `a` first (`true`) or `b` first.
    fn sequential(&self, a_first: bool) -> Observed {
        let mut m = Model::new(self.policy, self.max_keys).unwrap();
        for op in &self.init {
            m.apply(op);
        }
        let (a, b) = if a_first {
            let a = m.apply(&self.a);
            (a, m.apply(&self.b))
        } else {
            let b = m.apply(&self.b);
            (m.apply(&self.a), b)
        };
        let post = self.post.iter().map(|op| m.apply(op)).collect();
        Observed {
            a,
            b,
            post,
            state: m.snapshot(),
        }
    }

    /// Both sequential orders' results: the only legal observations.
    fn legal(&self) -> Vec<Observed> {
        vec![self.sequential(true), self.sequential(false)]
    }

    /// Runs the scenario once on `L`, the two racing calls on two threads.
    fn run<L: Limiter>(&self) -> Observed {
        let limiter = Arc::new(L::new(self.policy, self.max_keys).unwrap());
        for op in &self.init {
            op.run_on(&*limiter);
        }
        let spawn = |op: &Op| {
            let (limiter, op) = (Arc::clone(&limiter), op.clone());
            thread::spawn(move || op.run_on(&*limiter))
        };
        let (ta, tb) = (spawn(&self.a), spawn(&self.b));
        let (a, b) = (ta.join().unwrap(), tb.join().unwrap());
        let post = self.post.iter().map(|op| op.run_on(&*limiter)).collect();
        Observed {
            a,
            b,
            post,
            state: limiter.snapshot().expect("the design implements snapshot"),
        }
    }
}

/// Explores every interleaving of `scenario` on `L`, asserting each is one of the sequential
/// orders and passing it to `also`; returns the number of executions explored.
fn explore<L: Limiter>(scenario: Scenario, also: fn(&Observed)) -> usize {
    let legal = scenario.legal();
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    loom::model(move || {
        let execution = counter.fetch_add(1, SeqCst) + 1;
        let got = scenario.run::<L>();
        assert!(
            legal.contains(&got),
            "not linearizable at execution {execution}: {got:#?}\nlegal results of {scenario:#?}:\n{legal:#?}"
        );
        also(&got);
    });
    let n = executions.load(SeqCst);
    println!("{n} executions explored");
    assert!(n > 1, "loom explored only {n} interleaving(s)");
    n
}

fn allowed(o: &Outcome) -> bool {
    matches!(o, Outcome::Decision(Decision { allowed: true, .. }))
}

/// The last token of one key: two spends of one token at the same instant.
fn last_token() -> Scenario {
    Scenario {
        policy: policy(1, 2, 1),
        max_keys: 4,
        init: vec![allow("k", 1, 0)],
        a: allow("k", 1, 0),
        b: allow("k", 1, 0),
        post: vec![],
    }
}

fn exactly_one_spends_the_last_token(o: &Observed) {
    assert_eq!(
        usize::from(allowed(&o.a)) + usize::from(allowed(&o.b)),
        1,
        "double spend or lost token: {o:?}"
    );
    assert_eq!(o.state.buckets["k"].units, 0, "{o:?}");
}

/// A spent bucket refills to full at one second while `evict_full` races a spend; the post
/// part shows whether the spend survived (a spent bucket must not come back full).
fn evict_vs_allow() -> Scenario {
    Scenario {
        policy: policy(1, 1, 1),
        max_keys: 4,
        init: vec![allow("k", 1, 0)],
        a: Op::EvictFull { now: SECOND },
        b: allow("k", 1, SECOND),
        post: vec![allow("k", 1, SECOND), Op::KeyCount],
    }
}

fn the_spend_survives_eviction(o: &Observed) {
    assert!(allowed(&o.b), "{o:?}");
    assert!(!allowed(&o.post[0]), "a spent bucket came back full: {o:?}");
}

/// A cutover (capacity 10 → 20, rate 2 → 4) at half a second races a spend of the one token
/// earned by then; the post part spends the token earned at the new rate.
fn replace_vs_allow() -> Scenario {
    Scenario {
        policy: policy(1, 10, 2),
        max_keys: 4,
        init: vec![allow("k", 10, 0), allow("j", 1, 0)],
        a: Op::ReplacePolicy {
            next: policy(2, 20, 4),
            expected_version: 1,
            now: SECOND / 2,
        },
        b: allow("k", 1, SECOND / 2),
        post: vec![allow("k", 1, 3 * SECOND / 4), allow("k", 1, 3 * SECOND / 4)],
    }
}

fn the_cutover_keeps_the_spend(o: &Observed) {
    assert_eq!(o.a, Outcome::Replaced);
    assert!(allowed(&o.b), "{o:?}");
    assert!(allowed(&o.post[0]) && !allowed(&o.post[1]), "{o:?}");
    assert_eq!(
        o.state.buckets["j"].units,
        10 * u128::from(UNITS_PER_TOKEN),
        "{o:?}"
    );
}

/// Two cutovers from the same expected version, at different times: exactly one wins.
fn replace_vs_replace() -> Scenario {
    Scenario {
        policy: policy(1, 10, 2),
        max_keys: 4,
        init: vec![allow("k", 10, 0)],
        a: Op::ReplacePolicy {
            next: policy(2, 5, 1),
            expected_version: 1,
            now: SECOND,
        },
        b: Op::ReplacePolicy {
            next: policy(3, 20, 4),
            expected_version: 1,
            now: 2 * SECOND,
        },
        post: vec![allow("k", 1, 2 * SECOND)],
    }
}

fn one_cutover_wins(o: &Observed) {
    let wins = [&o.a, &o.b]
        .iter()
        .filter(|x| ***x == Outcome::Replaced)
        .count();
    assert_eq!(wins, 1, "{o:?}");
}

fn nothing_more(_: &Observed) {}

#[test]
fn two_threads_spend_the_last_token_once() {
    explore::<TokenBucket>(last_token(), exactly_one_spends_the_last_token);
}

#[test]
fn evict_full_racing_allow_is_linearizable() {
    explore::<TokenBucket>(evict_vs_allow(), the_spend_survives_eviction);
}

#[test]
fn replace_policy_racing_allow_is_linearizable() {
    explore::<TokenBucket>(replace_vs_allow(), the_cutover_keeps_the_spend);
}

#[test]
fn replace_policy_racing_replace_policy_is_linearizable() {
    explore::<TokenBucket>(replace_vs_replace(), one_cutover_wins);
}

// ---------------------------------------------------------------------------------------------
// A known-bad design: read under the lock, compute, write under a second acquisition
// ---------------------------------------------------------------------------------------------

/// Sequentially identical to `TokenBucket`, but `allow` and `evict_full` each read the state
/// under the lock, release it, decide, and take the lock again to write.
#[derive(Debug)]
struct ReadComputeWrite {
    state: Mutex<BadState>,
}

#[derive(Debug)]
struct BadState {
    policy: Policy,
    max_keys: usize,
    observed: u64,
    buckets: BTreeMap<String, BucketState>,
}

fn ceiling(p: &Policy) -> u128 {
    u128::from(p.capacity()) * u128::from(UNITS_PER_TOKEN)
}

fn refilled(b: &BucketState, p: &Policy, now: u64) -> u128 {
    (b.units + u128::from(now.saturating_sub(b.last_nanos)) * u128::from(p.tokens_per_second()))
        .min(ceiling(p))
}

impl ReadComputeWrite {
    fn lock(&self) -> MutexGuard<'_, BadState> {
        self.state.lock().unwrap()
    }
}

impl BadState {
    fn check_time(&self, now: u64) -> Result<(), LimitError> {
        if now < self.observed {
            return Err(LimitError::TimeWentBackwards {
                now,
                observed: self.observed,
            });
        }
        Ok(())
    }
}

impl Limiter for ReadComputeWrite {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        if max_keys == 0 {
            return Err(LimitError::InvalidMaxKeys);
        }
        Ok(ReadComputeWrite {
            state: Mutex::new(BadState {
                policy,
                max_keys,
                observed: 0,
                buckets: BTreeMap::new(),
            }),
        })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        // Read.
        let (policy, bucket) = {
            let s = self.lock();
            if is_blank_key(key) {
                return Err(LimitError::InvalidKey);
            }
            let capacity = s.policy.capacity();
            if cost == 0 || cost > capacity {
                return Err(LimitError::InvalidCost { cost, capacity });
            }
            s.check_time(now)?;
            let bucket = s.buckets.get(key).copied();
            if bucket.is_none() && s.buckets.len() >= s.max_keys {
                return Err(LimitError::KeyCapacityReached {
                    max_keys: s.max_keys,
                });
            }
            (s.policy, bucket)
        };
        // Compute, outside the lock.
        let balance = bucket.map_or(ceiling(&policy), |b| refilled(&b, &policy, now));
        let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
        let (allowed, after, retry) = if balance >= need {
            (true, balance - need, 0)
        } else {
            let wait = (need - balance).div_ceil(u128::from(policy.tokens_per_second()));
            (false, balance, wait.min(u128::from(MAX_QUANTITY)) as u64)
        };
        // Write, under a second acquisition.
        let mut s = self.lock();
        s.buckets.insert(
            key.to_owned(),
            BucketState {
                units: after,
                last_nanos: now,
            },
        );
        s.observed = s.observed.max(now);
        Ok(Decision {
            allowed,
            whole_tokens: (after / u128::from(UNITS_PER_TOKEN)) as u64,
            retry_after_nanos: retry,
        })
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let full: Vec<String> = {
            let s = self.lock();
            s.check_time(now)?;
            let p = s.policy;
            s.buckets
                .iter()
                .filter(|(_, b)| refilled(b, &p, now) == ceiling(&p))
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut s = self.lock();
        for k in &full {
            s.buckets.remove(k);
        }
        s.observed = s.observed.max(now);
        Ok(full.len())
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let mut s = self.lock();
        s.check_time(now)?;
        let current = s.policy.version();
        if expected_version != current || next.version() <= current {
            return Err(LimitError::StalePolicyVersion {
                expected: expected_version,
                current,
                next: next.version(),
            });
        }
        let old = s.policy;
        for b in s.buckets.values_mut() {
            *b = BucketState {
                units: refilled(b, &old, now).min(ceiling(&next)),
                last_nanos: now,
            };
        }
        s.policy = next;
        s.observed = now;
        Ok(())
    }

    fn key_count(&self) -> usize {
        self.lock().buckets.len()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let s = self.lock();
        Some(Snapshot {
            policy: s.policy,
            observed_nanos: s.observed,
            buckets: s.buckets.clone(),
        })
    }
}

#[test]
fn the_known_bad_design_is_sequentially_correct() {
    // So that the failures below come from the race and nothing else: run each scenario's
    // two sequential orders on the bad design and compare with the specification.
    for scenario in [
        last_token(),
        evict_vs_allow(),
        replace_vs_allow(),
        replace_vs_replace(),
    ] {
        let legal = scenario.legal();
        loom::model(move || {
            for (a_first, want) in [(true, &legal[0]), (false, &legal[1])] {
                let l = ReadComputeWrite::new(scenario.policy, scenario.max_keys).unwrap();
                for op in &scenario.init {
                    op.run_on(&l);
                }
                let (a, b) = if a_first {
                    let a = scenario.a.run_on(&l);
                    (a, scenario.b.run_on(&l))
                } else {
                    let b = scenario.b.run_on(&l);
                    (scenario.a.run_on(&l), b)
                };
                let post = scenario.post.iter().map(|op| op.run_on(&l)).collect();
                let got = Observed {
                    a,
                    b,
                    post,
                    state: l.snapshot().unwrap(),
                };
                assert_eq!(&got, want);
            }
        });
    }
}

#[test]
#[should_panic(expected = "not linearizable")]
fn loom_catches_the_double_spend_of_read_compute_write() {
    explore::<ReadComputeWrite>(last_token(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn loom_catches_the_eviction_of_a_spent_bucket_by_read_compute_write() {
    explore::<ReadComputeWrite>(evict_vs_allow(), nothing_more);
}

// ---------------------------------------------------------------------------------------------
// Clocked under loom: its samples never arrive out of order; caller-sampled ones can
// ---------------------------------------------------------------------------------------------

/// A loom-shared manual clock.
struct Shared(Arc<ManualClock>);

impl Clock for Shared {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }
}

fn bucket() -> TokenBucket {
    TokenBucket::new(policy(1, 10, 2), 4).unwrap()
}

#[test]
fn clocked_samples_never_arrive_out_of_order() {
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    loom::model(move || {
        counter.fetch_add(1, SeqCst);
        let clock = Arc::new(ManualClock::new(100));
        let clocked = Arc::new(Clocked::new(bucket(), Shared(Arc::clone(&clock))));
        let c = Arc::clone(&clocked);
        let a = thread::spawn(move || c.allow("k", 1));
        let c = Arc::clone(&clocked);
        let b = thread::spawn(move || {
            clock.advance(1);
            (c.allow("k", 1), c.evict_full())
        });
        let a = a.join().unwrap();
        let (b, evicted) = b.join().unwrap();
        assert!(
            a.is_ok() && b.is_ok() && evicted.is_ok(),
            "{a:?} {b:?} {evicted:?}"
        );
    });
    let n = executions.load(SeqCst);
    println!("{n} executions explored");
    assert!(n > 1);
}

#[test]
fn caller_sampled_time_arrives_out_of_order_in_some_interleaving() {
    let backwards = std::sync::Arc::new(AtomicUsize::new(0));
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let (seen, counter) = (
        std::sync::Arc::clone(&backwards),
        std::sync::Arc::clone(&executions),
    );
    loom::model(move || {
        counter.fetch_add(1, SeqCst);
        let clock = Arc::new(ManualClock::new(100));
        let limiter = Arc::new(bucket());
        let (c, l) = (Arc::clone(&clock), Arc::clone(&limiter));
        let a = thread::spawn(move || {
            let now = c.now_nanos();
            l.allow("k", 1, now)
        });
        let b = thread::spawn(move || {
            clock.advance(1);
            let now = clock.now_nanos();
            limiter.allow("k", 1, now)
        });
        for r in [a.join().unwrap(), b.join().unwrap()] {
            match r {
                Ok(_) => {}
                Err(LimitError::TimeWentBackwards {
                    now: 100,
                    observed: 101,
                }) => {
                    seen.fetch_add(1, SeqCst);
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    });
    let (n, late) = (executions.load(SeqCst), backwards.load(SeqCst));
    println!("{n} executions explored, {late} delivered the older sample last");
    assert!(late > 0, "no interleaving delivered the older sample last");
}
