//! Stateful property checks: random operation sequences, every step compared with the
//! specification through [`Probe`], shrunk by proptest to a minimal failing sequence.
//!
//! Runs are deterministic (a fixed seed) so that every learner gets the same grade for the
//! same design; `RATELIMIT_LAB_SEED` changes the seed and `RATELIMIT_LAB_CASES` the number
//! of cases.
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

use crate::model::Op;
use crate::{Limiter, Policy, MAX_QUANTITY};

use super::probe::Probe;
use super::{env, Failure};

const M: u64 = MAX_QUANTITY;

/// One generated step before times are accumulated: a time delta (possibly backwards) and
/// what to call.
#[derive(Clone, Debug)]
enum Raw {
    Allow {
        key: &'static str,
        cost: CostPick,
        dt: i64,
    },
    Evict {
        dt: i64,
    },
    Replace {
        capacity: u64,
        rate: u64,
        version: VersionPick,
        dt: i64,
    },
    KeyCount,
}

#[derive(Clone, Copy, Debug)]
enum CostPick {
    One,
    Two,
    Capacity,
    BelowCapacity,
    AboveCapacity,
    Zero,
    Max,
}

#[derive(Clone, Copy, Debug)]
enum VersionPick {
    Next,
    Skip,
    StaleExpected,
    SameVersion,
    Max,
}

/// A sequence to run: the starting policy, the key bound and the operations.
#[derive(Clone, Debug)]
struct Case {
    policy: Policy,
    max_keys: usize,
    ops: Vec<Op>,
}

fn dt(extreme: bool) -> impl Strategy<Value = i64> {
    let huge = if extreme { i64::MAX } else { 1_000_000_000_000 };
    prop_oneof![
        3 => Just(0i64),
        4 => 1i64..1_000_000_000,
        2 => prop::sample::select(vec![1i64, 249_999_999, 250_000_000, 333_333_333, 333_333_334, 499_999_999, 500_000_000, 5_500_000_000]),
        1 => 1i64..=huge,
        1 => -1_000_000_000i64..0,
    ]
}

fn cost() -> impl Strategy<Value = CostPick> {
    prop_oneof![
        4 => Just(CostPick::One),
        2 => Just(CostPick::Two),
        2 => Just(CostPick::Capacity),
        2 => Just(CostPick::BelowCapacity),
        1 => Just(CostPick::AboveCapacity),
        1 => Just(CostPick::Zero),
        1 => Just(CostPick::Max),
    ]
}

fn version() -> impl Strategy<Value = VersionPick> {
    prop_oneof![
        6 => Just(VersionPick::Next),
        1 => Just(VersionPick::Skip),
        1 => Just(VersionPick::StaleExpected),
        1 => Just(VersionPick::SameVersion),
        1 => Just(VersionPick::Max),
    ]
}

fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![6 => prop::sample::select(vec!["a", "b", "c"]), 1 => prop::sample::select(vec!["d", "", " "])]
}

fn quantity(extreme: bool) -> impl Strategy<Value = u64> {
    if extreme {
        prop::sample::select(vec![1, 2, 3, 1_000_000_000, M - 1, M]).boxed()
    } else {
        prop::sample::select(vec![1, 2, 3, 4, 5, 7, 10, 20, 1_000_000_000]).boxed()
    }
}

/// What one family of sequences may contain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mix {
    evict: u32,
    replace: u32,
    count: u32,
    extreme: bool,
    max_keys: (usize, usize),
}

pub(crate) const ADMISSIONS: Mix = Mix {
    evict: 0,
    replace: 0,
    count: 1,
    extreme: false,
    max_keys: (4, 6),
};
pub(crate) const EVICTIONS: Mix = Mix {
    evict: 3,
    replace: 0,
    count: 2,
    extreme: false,
    max_keys: (1, 3),
};
pub(crate) const CUTOVERS: Mix = Mix {
    evict: 1,
    replace: 3,
    count: 1,
    extreme: false,
    max_keys: (1, 4),
};
pub(crate) const EXTREMES: Mix = Mix {
    evict: 1,
    replace: 2,
    count: 1,
    extreme: true,
    max_keys: (1, 3),
};

fn raw(mix: Mix) -> impl Strategy<Value = Raw> {
    let allow =
        (key(), cost(), dt(mix.extreme)).prop_map(|(key, cost, dt)| Raw::Allow { key, cost, dt });
    let evict = dt(mix.extreme).prop_map(|dt| Raw::Evict { dt });
    let replace = (
        quantity(mix.extreme),
        quantity(mix.extreme),
        version(),
        dt(mix.extreme),
    )
        .prop_map(|(capacity, rate, version, dt)| Raw::Replace {
            capacity,
            rate,
            version,
            dt,
        });
    prop_oneof![
        8 => allow,
        mix.evict => evict,
        mix.replace => replace,
        mix.count => Just(Raw::KeyCount),
    ]
}

fn case(mix: Mix) -> impl Strategy<Value = Case> {
    let start = if mix.extreme {
        prop_oneof![
            Just(0u64),
            Just(u64::MAX - 3_000_000_000),
            (u64::MAX / 2)..u64::MAX
        ]
        .boxed()
    } else {
        prop_oneof![Just(0u64), 0u64..10_000_000_000].boxed()
    };
    (
        quantity(mix.extreme),
        quantity(mix.extreme),
        mix.max_keys.0..=mix.max_keys.1,
        start,
        prop::collection::vec(raw(mix), 1..40),
    )
        .prop_filter_map("valid policy", |(capacity, rate, max_keys, start, raws)| {
            let policy = Policy::new(1, capacity, rate).ok()?;
            Some(Case {
                policy,
                max_keys,
                ops: concretize(policy, start, &raws),
            })
        })
}

/// Accumulates time deltas (saturating at both ends) and resolves costs and versions
/// against the policy the sequence would have in force if every cutover succeeded.
fn concretize(policy: Policy, start: u64, raws: &[Raw]) -> Vec<Op> {
    let mut now = start;
    let mut current = policy;
    let mut ops = Vec::with_capacity(raws.len());
    let advance = |now: &mut u64, dt: i64| {
        *now = if dt >= 0 {
            now.saturating_add(dt.unsigned_abs())
        } else {
            now.saturating_sub(dt.unsigned_abs())
        };
        *now
    };
    for r in raws {
        ops.push(match *r {
            Raw::Allow { key, cost, dt } => {
                let cap = current.capacity();
                let cost = match cost {
                    CostPick::One => 1,
                    CostPick::Two => 2.min(cap),
                    CostPick::Capacity => cap,
                    CostPick::BelowCapacity => (cap - 1).max(1),
                    CostPick::AboveCapacity => cap.saturating_add(1),
                    CostPick::Zero => 0,
                    CostPick::Max => M,
                };
                Op::Allow {
                    key: key.to_string(),
                    cost,
                    now: advance(&mut now, dt),
                }
            }
            Raw::Evict { dt } => Op::EvictFull {
                now: advance(&mut now, dt),
            },
            Raw::Replace {
                capacity,
                rate,
                version,
                dt,
            } => {
                let v = current.version();
                let (next_version, expected) = match version {
                    VersionPick::Next => (v.saturating_add(1).min(M), v),
                    VersionPick::Skip => (v.saturating_add(3).min(M), v),
                    VersionPick::StaleExpected => (v.saturating_add(1).min(M), v.saturating_sub(1)),
                    VersionPick::SameVersion => (v, v),
                    VersionPick::Max => (M, v),
                };
                let Ok(next) = Policy::new(next_version, capacity, rate) else {
                    continue;
                };
                let when = advance(&mut now, dt);
                if dt >= 0 && expected == v && next_version > v {
                    current = next;
                }
                Op::ReplacePolicy {
                    next,
                    expected_version: expected,
                    now: when,
                }
            }
            Raw::KeyCount => Op::KeyCount,
        });
    }
    ops
}

fn replay<L: Limiter>(case: &Case) -> Result<(), Failure> {
    let mut probe = Probe::<L>::new(case.policy, case.max_keys)?;
    for op in &case.ops {
        probe.run(op.clone())?;
    }
    Ok(())
}

fn config() -> Config {
    Config {
        cases: env::cases(),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

/// Runs one family of sequences; on failure, the shrunk sequence's trace.
fn run<L: Limiter>(mix: Mix) -> Result<(), Failure> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &env::seed_bytes());
    let mut runner = TestRunner::new_with_rng(config(), rng);
    let result = runner.run(&case(mix), |case| {
        replay::<L>(&case).map_err(|f| TestCaseError::fail(f.summary))
    });
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(_, minimal)) => {
            let failure = match replay::<L>(&minimal) {
                Err(f) => f,
                Ok(()) => Failure::new(
                    "a generated sequence failed, but the shrunk one passed when replayed: the design is not deterministic for the same calls",
                ),
            };
            let header = format!(
                "starting from {:?}, max_keys {} ({} operations after shrinking)",
                minimal.policy,
                minimal.max_keys,
                minimal.ops.len()
            );
            let detail = match failure.detail.clone() {
                Some(d) => format!("{header}\n{d}"),
                None => header,
            };
            Err(failure.with_detail(detail))
        }
        Err(TestError::Abort(why)) => {
            Err(Failure::new(format!("the property run was aborted: {why}")))
        }
    }
}

/// `r1_random_admissions_match_the_model`.
pub(crate) fn r1_random_admissions_match_the_model<L: Limiter>() -> Result<(), Failure> {
    run::<L>(ADMISSIONS)
}

/// `r3_random_evictions_match_the_model`.
pub(crate) fn r3_random_evictions_match_the_model<L: Limiter>() -> Result<(), Failure> {
    run::<L>(EVICTIONS)
}

/// `r4_random_cutovers_match_the_model`.
pub(crate) fn r4_random_cutovers_match_the_model<L: Limiter>() -> Result<(), Failure> {
    run::<L>(CUTOVERS)
}

/// `i1_extreme_sequences_stay_exact`.
pub(crate) fn i1_extreme_sequences_stay_exact<L: Limiter>() -> Result<(), Failure> {
    run::<L>(EXTREMES)
}
