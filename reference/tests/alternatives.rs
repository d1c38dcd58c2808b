//! The correct alternative designs, each checked against the executable specification.
//!
//! For every design in [`ratelimit_lab_reference::alternatives`] this file runs, in a module
//! named after the design:
//!
//! - `differential_against_the_model`: random operation sequences (weighted toward blank keys,
//!   invalid costs, `MAX_QUANTITY` policies, times near `u64::MAX`, time going backwards, stale
//!   and non-increasing versions, chains of cutovers over untouched buckets), each outcome,
//!   `key_count` and the whole snapshot compared with [`Model`] after every step. It prints
//!   how many operations it checked (`cargo test -- --nocapture` shows it);
//! - `seed_*` and named scenarios: the seed's worked examples and the cutover cases a lazy or
//!   sharded design could get wrong, again step by step against the model;
//! - `twenty_unit_requests_at_capacity_ten`: real threads, exactly ten pass;
//! - `new_keys_race_for_the_last_slots`: real threads, the key bound holds;
//! - `concurrent_histories_are_linearizable`: small random histories on real threads, each
//!   checked by searching for an order, consistent with real time, that the model reproduces.
//!
//! Run with `cargo test -p ratelimit-lab-reference --test alternatives`.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use ratelimit_lab_api::{
    Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};
use ratelimit_lab_model::{Model, Op, Outcome};
use ratelimit_lab_reference::alternatives::{
    CheckedU64Bucket, LazyMigration, RwLockBucket, ShardedLocks,
};

const M: u64 = MAX_QUANTITY;
const SECOND: u64 = 1_000_000_000;

/// Random sequences per design; each holds 1 to 80 steps.
const CASES: u32 = 2500;

fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
    Policy::new(version, capacity, rate).expect("test policies are valid")
}

// ---------------------------------------------------------------------------------------
// Operations drawn relative to the model's state, so that "now", "current version" and
// "capacity" mean what they say whatever came before.

#[derive(Clone, Debug)]
enum When {
    Same,
    After(u64),
    Before(u64),
    NearEnd(u64),
}

#[derive(Clone, Debug)]
enum Cost {
    Exact(u64),
    Capacity,
    AboveCapacity,
}

#[derive(Clone, Debug)]
enum Version {
    Shift(i8),
    Exact(u64),
}

#[derive(Clone, Debug)]
enum Step {
    Allow {
        key: &'static str,
        cost: Cost,
        when: When,
    },
    Evict {
        when: When,
    },
    Replace {
        expected: Version,
        next: Version,
        capacity: u64,
        rate: u64,
        when: When,
    },
    KeyCount,
}

fn resolve_time(when: &When, observed: u64) -> u64 {
    match *when {
        When::Same => observed,
        When::After(d) => observed.saturating_add(d),
        When::Before(d) => observed.saturating_sub(d),
        When::NearEnd(d) => u64::MAX - d,
    }
}

fn resolve_version(v: &Version, current: u64) -> u64 {
    match *v {
        Version::Shift(d) => {
            let shifted = i128::from(current) + i128::from(d);
            u64::try_from(shifted.clamp(1, i128::from(M))).unwrap_or(M)
        }
        Version::Exact(v) => v,
    }
}

fn resolve(step: &Step, model: &Model) -> Op {
    let observed = model.observed();
    let current = model.policy();
    match step {
        Step::Allow { key, cost, when } => Op::Allow {
            key: (*key).to_owned(),
            cost: match *cost {
                Cost::Exact(c) => c,
                Cost::Capacity => current.capacity(),
                Cost::AboveCapacity => current.capacity().saturating_add(1),
            },
            now: resolve_time(when, observed),
        },
        Step::Evict { when } => Op::EvictFull {
            now: resolve_time(when, observed),
        },
        Step::Replace {
            expected,
            next,
            capacity,
            rate,
            when,
        } => Op::ReplacePolicy {
            next: policy(
                resolve_version(next, current.version()).clamp(1, M),
                *capacity,
                *rate,
            ),
            expected_version: resolve_version(expected, current.version()),
            now: resolve_time(when, observed),
        },
        Step::KeyCount => Op::KeyCount,
    }
}

fn quantity() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 1u64..=12,
        2 => Just(M),
        1 => Just(M - 1),
        1 => SECOND - 1..=SECOND + 1,
        1 => 1u64..=M,
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        2 => Just(When::Same),
        4 => (1u64..2 * SECOND).prop_map(When::After),
        2 => prop::sample::select(vec![
            1,
            333_333_333,
            333_333_334,
            499_999_999,
            500_000_000,
            SECOND,
            5 * SECOND + SECOND / 2,
        ])
        .prop_map(When::After),
        1 => any::<u64>().prop_map(When::After),
        1 => (1u64..SECOND).prop_map(When::Before),
        1 => (0u64..3).prop_map(When::NearEnd),
    ]
}

fn cost() -> impl Strategy<Value = Cost> {
    prop_oneof![
        6 => (1u64..=3).prop_map(Cost::Exact),
        2 => Just(Cost::Capacity),
        1 => Just(Cost::AboveCapacity),
        1 => prop::sample::select(vec![0, M, u64::MAX]).prop_map(Cost::Exact),
    ]
}

fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        8 => prop::sample::select(vec!["a", "b", "c", "\u{A0}"]),
        1 => prop::sample::select(vec!["", " ", "\t\u{2003}"]),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let expected = prop_oneof![
        8 => Just(Version::Shift(0)),
        1 => (-1i8..=1).prop_map(Version::Shift),
        1 => any::<u64>().prop_map(Version::Exact),
    ];
    let next = prop_oneof![
        8 => (1i8..=3).prop_map(Version::Shift),
        1 => (-1i8..=0).prop_map(Version::Shift),
        1 => Just(Version::Exact(M)),
    ];
    prop_oneof![
        10 => (key(), cost(), when()).prop_map(|(key, cost, when)| Step::Allow { key, cost, when }),
        2 => when().prop_map(|when| Step::Evict { when }),
        4 => (expected, next, quantity(), quantity(), when()).prop_map(
            |(expected, next, capacity, rate, when)| Step::Replace {
                expected,
                next,
                capacity,
                rate,
                when,
            }
        ),
        1 => Just(Step::KeyCount),
    ]
}

fn case() -> impl Strategy<Value = (Policy, usize, Vec<Step>)> {
    let version = prop_oneof![1u64..=3, M - 3..=M];
    let max_keys = prop_oneof![3 => 1usize..=4, 1 => Just(100usize)];
    (
        (version, quantity(), quantity()).prop_map(|(v, c, r)| policy(v, c, r)),
        max_keys,
        prop::collection::vec(step(), 1..=80),
    )
}

/// Runs `steps` on a fresh `L` and on the model, comparing every outcome, the key count and
/// the snapshot after each step. Returns how many operations it checked.
fn run_against_model<L: Limiter>(
    initial: Policy,
    max_keys: usize,
    steps: &[Step],
) -> Result<usize, TestCaseError> {
    let mut model = Model::new(initial, max_keys).expect("max_keys ≥ 1");
    let design = L::new(initial, max_keys).map_err(|e| TestCaseError::fail(format!("new: {e}")))?;
    prop_assert_eq!(design.snapshot(), Some(model.snapshot()), "fresh state");
    for (i, step) in steps.iter().enumerate() {
        let op = resolve(step, &model);
        let want = model.apply(&op);
        let got = op.run_on(&design);
        prop_assert_eq!(&got, &want, "step {}: {}", i, op);
        prop_assert_eq!(
            design.key_count(),
            model.buckets().len(),
            "step {}: {}",
            i,
            op
        );
        prop_assert_eq!(
            design.snapshot(),
            Some(model.snapshot()),
            "state after step {}: {}",
            i,
            op
        );
    }
    Ok(steps.len())
}

fn differential<L: Limiter>(name: &str) {
    let ops = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        source_file: Some(file!()),
        ..Config::default()
    });
    let result = runner.run(&case(), |(initial, max_keys, steps)| {
        let n = run_against_model::<L>(initial, max_keys, &steps)?;
        ops.fetch_add(n, Ordering::Relaxed);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name} differs from the model: {e}");
    }
    let ops = ops.into_inner();
    eprintln!("{name}: {CASES} sequences, {ops} operations checked against the model");
    assert!(
        ops >= CASES as usize,
        "every sequence holds at least one step"
    );
}

/// Runs a fixed script on `L` and the model, comparing as [`run_against_model`] does, and
/// returns the design's outcomes.
fn script<L: Limiter>(initial: Policy, max_keys: usize, ops: &[Op]) -> Vec<Outcome> {
    let mut model = Model::new(initial, max_keys).expect("max_keys ≥ 1");
    let design = L::new(initial, max_keys).expect("max_keys ≥ 1");
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            let want = model.apply(op);
            let got = op.run_on(&design);
            assert_eq!(got, want, "step {i}: {op}");
            assert_eq!(design.key_count(), model.buckets().len(), "step {i}: {op}");
            assert_eq!(
                design.snapshot(),
                Some(model.snapshot()),
                "after step {i}: {op}"
            );
            got
        })
        .collect()
}

fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_owned(),
        cost,
        now,
    }
}

fn replace(next: Policy, expected_version: u64, now: u64) -> Op {
    Op::ReplacePolicy {
        next,
        expected_version,
        now,
    }
}

fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Outcome {
    Outcome::Decision(Decision {
        allowed,
        whole_tokens,
        retry_after_nanos,
    })
}

// ---------------------------------------------------------------------------------------
// Named scenarios.

fn seed_burst_and_fractional_refill<L: Limiter>() {
    let out = script::<L>(
        policy(1, 10, 2),
        10,
        &[
            allow("k", 10, 0),
            allow("k", 1, 0),
            allow("k", 1, 250_000_000),
            allow("k", 1, 499_999_999),
            allow("k", 1, 500_000_000),
        ],
    );
    assert_eq!(out[0], decision(true, 0, 0));
    assert_eq!(out[1], decision(false, 0, 500_000_000));
    assert_eq!(out[2], decision(false, 0, 250_000_000));
    assert_eq!(out[3], decision(false, 0, 1));
    assert_eq!(out[4], decision(true, 0, 0));
}

fn seed_cutover_neither_tops_up_nor_loses_credit<L: Limiter>() {
    let out = script::<L>(
        policy(1, 10, 2),
        10,
        &[
            allow("k", 10, 0),
            replace(policy(2, 20, 4), 1, 500_000_000),
            allow("k", 2, 749_999_999),
            allow("k", 2, 750_000_000),
            allow("new", 20, 750_000_000),
        ],
    );
    assert_eq!(out[2], decision(false, 1, 1));
    assert_eq!(out[3], decision(true, 0, 0));
    assert_eq!(out[4], decision(true, 0, 0));
}

fn untouched_buckets_cross_several_cutovers<L: Limiter>() {
    script::<L>(
        policy(1, 10, 2),
        4,
        &[
            allow("a", 10, 0),
            allow("b", 3, 0),
            // Raise, shrink below the balances, raise again, each with a new rate.
            replace(policy(2, 30, 7), 1, 400_000_000),
            replace(policy(3, 2, 1), 2, 900_000_000),
            replace(policy(4, 50, 1_000), 3, 901_000_000),
            replace(policy(7, 5, 3), 4, 901_000_000),
            allow("c", 5, 901_000_000),
            Op::EvictFull { now: 901_000_000 },
            allow("a", 5, 2 * SECOND),
            replace(policy(8, 6, 1), 7, 3 * SECOND),
            Op::EvictFull { now: 3 * SECOND },
            allow("b", 6, 9 * SECOND),
            Op::EvictFull { now: 10 * SECOND },
            Op::KeyCount,
        ],
    );
}

fn cutovers_with_no_buckets<L: Limiter>() {
    script::<L>(
        policy(1, 10, 2),
        1,
        &[
            replace(policy(2, 3, 1), 1, 0),
            replace(policy(3, 4, 1), 2, 5),
            allow("k", 4, 5),
            allow("k", 1, 6),
            Op::EvictFull {
                now: 4 * SECOND + 5,
            },
            Op::EvictFull {
                now: 4 * SECOND + 6,
            },
            replace(policy(9, 1, 1), 3, 4 * SECOND + 6),
            allow("k", 1, 4 * SECOND + 6),
        ],
    );
}

fn eviction_uses_the_settled_balance<L: Limiter>() {
    let out = script::<L>(
        policy(1, 10, 2),
        2,
        &[
            allow("grow", 1, 0),
            allow("shrink", 9, 0),
            // At 10 s both are full under the old policy: 10 tokens. "grow" is no longer full
            // under capacity 20; "shrink" is clamped to 5, which is full.
            replace(policy(2, 20, 1), 1, 10 * SECOND),
            Op::EvictFull { now: 10 * SECOND },
            replace(policy(3, 5, 1), 2, 10 * SECOND),
            Op::EvictFull { now: 10 * SECOND },
            Op::KeyCount,
        ],
    );
    assert_eq!(out[3], Outcome::Evicted { removed: 0 });
    assert_eq!(out[5], Outcome::Evicted { removed: 2 });
}

fn extremes<L: Limiter>() {
    script::<L>(
        policy(M - 1, M, M),
        2,
        &[
            allow("k", M, 0),
            allow("k", M, 0),
            allow("k", M, 1),
            allow("j", 1, u64::MAX - 1),
            replace(policy(M, 1, 1), M - 1, u64::MAX - 1),
            allow("k", 1, u64::MAX),
            replace(policy(M, 2, 2), M, u64::MAX),
            Op::EvictFull { now: u64::MAX },
        ],
    );
    let out = script::<L>(
        policy(1, M, 1),
        1,
        &[
            allow("k", M, 0),
            allow("k", M, u64::MAX - 1),
            allow("k", 1, u64::MAX),
        ],
    );
    assert_eq!(out[1], decision(false, 18_446_744_073, M));
}

fn errors_come_in_the_documented_order<L: Limiter>() {
    let out = script::<L>(
        policy(2, 10, 2),
        1,
        &[
            allow("k", 1, 100),
            allow(" ", 0, 0),
            allow("k", 11, 0),
            allow("other", 1, 99),
            allow("other", 1, 100),
            Op::EvictFull { now: 99 },
            replace(policy(1, 10, 2), 1, 99),
            replace(policy(2, 10, 2), 2, 100),
            replace(policy(3, 10, 2), 1, 100),
        ],
    );
    let err = Outcome::Error;
    assert_eq!(out[1], err(LimitError::InvalidKey));
    assert_eq!(
        out[2],
        err(LimitError::InvalidCost {
            cost: 11,
            capacity: 10
        })
    );
    assert_eq!(
        out[3],
        err(LimitError::TimeWentBackwards {
            now: 99,
            observed: 100
        })
    );
    assert_eq!(out[4], err(LimitError::KeyCapacityReached { max_keys: 1 }));
    assert!(matches!(
        out[5],
        Outcome::Error(LimitError::TimeWentBackwards { .. })
    ));
    assert!(matches!(
        out[6],
        Outcome::Error(LimitError::TimeWentBackwards { .. })
    ));
    assert!(matches!(
        out[7],
        Outcome::Error(LimitError::StalePolicyVersion { .. })
    ));
    assert!(matches!(
        out[8],
        Outcome::Error(LimitError::StalePolicyVersion { .. })
    ));
}

fn zero_max_keys_is_refused<L: Limiter>() {
    assert_eq!(
        L::new(policy(1, 1, 1), 0).err(),
        Some(LimitError::InvalidMaxKeys)
    );
}

// ---------------------------------------------------------------------------------------
// Real threads.

fn twenty_unit_requests_at_capacity_ten<L: Limiter>() {
    for _ in 0..20 {
        let limiter = Arc::new(L::new(policy(1, 10, 1), 100).expect("valid"));
        let barrier = Arc::new(Barrier::new(20));
        let handles: Vec<_> = (0..20)
            .map(|_| {
                let (limiter, barrier) = (Arc::clone(&limiter), Arc::clone(&barrier));
                thread::spawn(move || {
                    barrier.wait();
                    limiter.allow("k", 1, 0).expect("valid call").allowed
                })
            })
            .collect();
        let passed = handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .filter(|&allowed| allowed)
            .count();
        assert_eq!(passed, 10);
        assert_eq!(limiter.key_count(), 1);
        let snap = limiter.snapshot().expect("designs here snapshot");
        assert_eq!(snap.buckets["k"].units, 0);
    }
}

fn new_keys_race_for_the_last_slots<L: Limiter>() {
    for _ in 0..20 {
        let limiter = Arc::new(L::new(policy(1, 10, 1), 10).expect("valid"));
        let barrier = Arc::new(Barrier::new(20));
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let (limiter, barrier) = (Arc::clone(&limiter), Arc::clone(&barrier));
                thread::spawn(move || {
                    barrier.wait();
                    limiter.allow(&format!("k{i}"), 1, i)
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect();
        let admitted = results.iter().filter(|r| r.is_ok()).count();
        assert!(admitted <= 10, "{results:?}");
        assert_eq!(
            limiter.key_count(),
            results.iter().filter(|r| r.is_ok()).count()
        );
        let max_ok = results
            .iter()
            .zip(0u64..)
            .filter(|(r, _)| r.is_ok())
            .map(|(_, now)| now)
            .max();
        let snap = limiter.snapshot().expect("designs here snapshot");
        assert_eq!(Some(snap.observed_nanos), max_ok);
        for r in &results {
            match r {
                Ok(d) => assert!(d.allowed),
                Err(LimitError::KeyCapacityReached { max_keys: 10 }) => {
                    assert_eq!(admitted, 10, "{results:?}")
                }
                Err(LimitError::TimeWentBackwards { now, observed }) => {
                    assert!(now < observed && Some(*observed) <= max_ok, "{results:?}")
                }
                Err(e) => panic!("unexpected {e}"),
            }
        }
    }
}

/// A small deterministic generator: no dependency, reproducible from the printed seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_op(rng: &mut XorShift) -> Op {
    let now = rng.below(6) * 100_000_000;
    match rng.below(10) {
        0..=5 => allow(
            ["a", "b", "c"][rng.below(3) as usize],
            1 + rng.below(2),
            now,
        ),
        6 => Op::EvictFull { now },
        7 | 8 => replace(
            policy(2 + rng.below(2), 1 + rng.below(3), 1 + rng.below(4)),
            1 + rng.below(2),
            now,
        ),
        _ => Op::KeyCount,
    }
}

struct Event {
    op: Op,
    outcome: Outcome,
    start: Instant,
    end: Instant,
}

/// Is there an order of the events, keeping each thread's order and real time (an event that
/// ended before another started comes first), in which the model returns every outcome and
/// ends in `end`?
fn linearizable(model: &Model, threads: &[Vec<Event>], next: &mut [usize], end: &Snapshot) -> bool {
    if threads.iter().zip(next.iter()).all(|(t, &i)| i == t.len()) {
        return model.snapshot() == *end;
    }
    for (t, events) in threads.iter().enumerate() {
        let Some(e) = events.get(next[t]) else {
            continue;
        };
        let forced_later = threads
            .iter()
            .zip(next.iter())
            .enumerate()
            .any(|(u, (h, &i))| u != t && h.get(i).is_some_and(|other| other.end < e.start));
        if forced_later {
            continue;
        }
        let mut m = model.clone();
        if m.apply(&e.op) != e.outcome {
            continue;
        }
        next[t] += 1;
        if linearizable(&m, threads, next, end) {
            return true;
        }
        next[t] -= 1;
    }
    false
}

fn concurrent_histories_are_linearizable<L: Limiter>() {
    const THREADS: usize = 3;
    const OPS: usize = 4;
    for round in 0..300u64 {
        let seed = 0x9E37_79B9_7F4A_7C15 ^ (round + 1);
        let mut rng = XorShift(seed);
        let initial = policy(1, 2, 2);
        let scripts: Vec<Vec<Op>> = (0..THREADS)
            .map(|_| (0..OPS).map(|_| random_op(&mut rng)).collect())
            .collect();
        let limiter = Arc::new(L::new(initial, 2).expect("valid"));
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = scripts
            .into_iter()
            .map(|ops| {
                let (limiter, barrier) = (Arc::clone(&limiter), Arc::clone(&barrier));
                thread::spawn(move || {
                    barrier.wait();
                    ops.into_iter()
                        .map(|op| {
                            let start = Instant::now();
                            let outcome = op.run_on(&*limiter);
                            let end = Instant::now();
                            Event {
                                op,
                                outcome,
                                start,
                                end,
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let history: Vec<Vec<Event>> = handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect();
        let end = limiter.snapshot().expect("designs here snapshot");
        let model = Model::new(initial, 2).expect("valid");
        assert!(
            linearizable(&model, &history, &mut [0; THREADS], &end),
            "round {round} (seed {seed:#x}): no order consistent with real time gives these \
             outcomes and ends in {end:?}: {:#?}",
            history
                .iter()
                .map(|t| t
                    .iter()
                    .map(|e| format!("{} -> {}", e.op, e.outcome))
                    .collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn units_per_token_is_what_the_scenarios_assume() {
    assert_eq!(UNITS_PER_TOKEN, SECOND);
}

macro_rules! design_tests {
    ($($module:ident => $design:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn differential_against_the_model() {
                differential::<$design>(stringify!($module));
            }

            #[test]
            fn seed_burst_and_fractional_refill() {
                super::seed_burst_and_fractional_refill::<$design>();
            }

            #[test]
            fn seed_cutover_neither_tops_up_nor_loses_credit() {
                super::seed_cutover_neither_tops_up_nor_loses_credit::<$design>();
            }

            #[test]
            fn untouched_buckets_cross_several_cutovers() {
                super::untouched_buckets_cross_several_cutovers::<$design>();
            }

            #[test]
            fn cutovers_with_no_buckets() {
                super::cutovers_with_no_buckets::<$design>();
            }

            #[test]
            fn eviction_uses_the_settled_balance() {
                super::eviction_uses_the_settled_balance::<$design>();
            }

            #[test]
            fn extremes() {
                super::extremes::<$design>();
            }

            #[test]
            fn errors_come_in_the_documented_order() {
                super::errors_come_in_the_documented_order::<$design>();
            }

            #[test]
            fn zero_max_keys_is_refused() {
                super::zero_max_keys_is_refused::<$design>();
            }

            #[test]
            fn twenty_unit_requests_at_capacity_ten() {
                super::twenty_unit_requests_at_capacity_ten::<$design>();
            }

            #[test]
            fn new_keys_race_for_the_last_slots() {
                super::new_keys_race_for_the_last_slots::<$design>();
            }

            #[test]
            fn concurrent_histories_are_linearizable() {
                super::concurrent_histories_are_linearizable::<$design>();
            }
        }
    )*};
}

design_tests! {
    rwlock_bucket => RwLockBucket,
    lazy_migration => LazyMigration,
    sharded_locks => ShardedLocks,
    checked_u64_bucket => CheckedU64Bucket,
}
