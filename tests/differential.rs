//! Differential property test: the reference `TokenBucket` against the executable
//! specification `Model`, operation by operation, outcome by outcome and state by state.
//!
//! Inputs are generated as *abstract* operations ("a cost one above the current capacity",
//! "one nanosecond before the observed time", "the current version plus one") and resolved
//! against the specification's state just before each operation, so that the boundaries stay
//! boundaries as the policy and the clock move. Time mostly moves forward, so buckets drain,
//! refill and get evicted, and sometimes goes backwards on every method.
// Under loom or shuttle the designs' locks only work inside those tools' executions.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use ratelimit_lab::model::{Model, Op, Outcome};
use ratelimit_lab::reference::TokenBucket;
use ratelimit_lab::{LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN};

/// Random cases per batch; batches run until [`REQUIRED_OPS`] operations have run.
const CASES_PER_BATCH: u32 = 64;
/// Operations per case: short ones shrink well, long ones let the state wander far.
const OPS_PER_CASE: std::ops::RangeInclusive<usize> = 1..=800;
/// The issue's floor on random operations per `cargo test`.
const REQUIRED_OPS: usize = 100_000;

// ---------------------------------------------------------------------------------------------
// Abstract inputs
// ---------------------------------------------------------------------------------------------

/// How the time of one operation relates to the clock of the case.
#[derive(Clone, Copy, Debug)]
enum When {
    /// The clock's current reading.
    Same,
    /// The clock moves forward by this much (saturating), and the operation uses it.
    Forward(u64),
    /// This far before the largest time a successful call has seen (backwards when `>= 1`).
    BeforeObserved(u64),
    /// This far before the clock's reading; the clock does not move.
    BeforeClock(u64),
    /// The clock jumps to `u64::MAX - d` (if that is ahead of it).
    NearMax(u64),
}

/// A cost, relative to the capacity in force when the operation runs.
#[derive(Clone, Copy, Debug)]
enum Cost {
    Fixed(u64),
    Capacity,
    CapacityMinusOne,
    CapacityPlusOne,
    HalfCapacity,
}

/// A version, relative to the version in force when the operation runs.
#[derive(Clone, Copy, Debug)]
enum Version {
    Current,
    CurrentPlus(u64),
    CurrentMinus(u64),
    Fixed(u64),
}

#[derive(Clone, Debug)]
enum AbstractOp {
    Allow {
        key: String,
        cost: Cost,
        when: When,
    },
    EvictFull {
        when: When,
    },
    ReplacePolicy {
        next_version: Version,
        capacity: u64,
        tokens_per_second: u64,
        /// `None`: expect the version in force.
        expected: Option<Version>,
        when: When,
    },
    KeyCount,
}

#[derive(Clone, Debug)]
struct Case {
    policy: Policy,
    max_keys: usize,
    start: u64,
    ops: Vec<AbstractOp>,
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

/// Small forward steps, with the seed's interesting ones (a third and a half of a second at
/// rates 3 and 2, and one nanosecond before the half).
fn small_step() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => Just(0u64),
        4 => Just(1u64),
        2 => Just(333_333_333u64),
        2 => Just(333_333_334u64),
        2 => Just(499_999_999u64),
        3 => Just(500_000_000u64),
        2 => Just(1_000_000_000u64),
        6 => 0u64..2_000_000_000,
        2 => 0u64..1_000,
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        2400 => small_step().prop_map(When::Forward),
        600 => Just(When::Same),
        // Seconds to weeks: full refills at small rates.
        400 => (1_000_000_000u64..1_000_000_000_000_000).prop_map(When::Forward),
        // Weeks to centuries.
        20 => (1u64 << 40..1u64 << 62).prop_map(When::Forward),
        240 => prop_oneof![Just(1u64), 1u64..1_000_000_000, any::<u64>()]
            .prop_map(When::BeforeObserved),
        200 => prop_oneof![Just(1u64), 1u64..1_000_000_000].prop_map(When::BeforeClock),
        // Rare, as the clock stays there for the rest of the case: the largest elapsed times
        // (up to 2^64 nanoseconds at rates up to MAX_QUANTITY).
        1 => prop_oneof![Just(0u64), Just(1u64), 0u64..1_000_000_000].prop_map(When::NearMax),
    ]
}

/// A capacity or a rate: `1`, small, the seed's numbers, `MAX_QUANTITY` and its neighbours,
/// or anything in range.
fn quantity() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => Just(1u64),
        2 => Just(2u64),
        1 => Just(3u64),
        2 => Just(10u64),
        4 => 1u64..=20,
        1 => Just(UNITS_PER_TOKEN),
        3 => Just(MAX_QUANTITY),
        1 => (MAX_QUANTITY - 16)..=MAX_QUANTITY,
        2 => 1u64..=MAX_QUANTITY,
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    let version = prop_oneof![
        6 => Just(1u64),
        2 => 1u64..=100,
        1 => Just(MAX_QUANTITY - 1),
        1 => Just(MAX_QUANTITY),
        1 => 1u64..=MAX_QUANTITY,
    ];
    (version, quantity(), quantity())
        .prop_map(|(v, c, r)| Policy::new(v, c, r).expect("every field is in 1..=MAX_QUANTITY"))
}

fn max_keys() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => Just(1usize),
        2 => Just(2usize),
        2 => 3usize..=5,
        2 => Just(1_000usize),
        1 => Just(usize::MAX),
    ]
}

/// Mostly a handful of reused keys; sometimes blank ones (empty, spaces, tabs, an em space,
/// line breaks, a Java separator control) and non-blank look-alikes (no-break spaces, NEL),
/// and sometimes fresh short keys that fill the key table.
fn key() -> impl Strategy<Value = String> {
    let reused = prop::sample::select(vec![
        "a", "b", "c", "k", " x ", "\u{a0}", "\u{2007}", "\u{85}",
    ]);
    let blank = prop::sample::select(vec![
        "", " ", "  ", "\t", "\u{2003}", " \t\n\r", "\u{1c}", "\u{3000}",
    ]);
    prop_oneof![
        40 => prop::sample::select(vec!["a", "b"]).prop_map(str::to_owned),
        30 => reused.prop_map(str::to_owned),
        10 => blank.prop_map(str::to_owned),
        8 => "[a-z]{1,2}",
    ]
}

fn cost() -> impl Strategy<Value = Cost> {
    prop_oneof![
        20 => Just(Cost::Fixed(1)),
        10 => (1u64..=10).prop_map(Cost::Fixed),
        8 => Just(Cost::Capacity),
        4 => Just(Cost::CapacityMinusOne),
        4 => Just(Cost::HalfCapacity),
        4 => Just(Cost::CapacityPlusOne),
        3 => Just(Cost::Fixed(0)),
        3 => Just(Cost::Fixed(u64::MAX)),
        3 => Just(Cost::Fixed(MAX_QUANTITY)),
        2 => any::<u64>().prop_map(Cost::Fixed),
    ]
}

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![
        10 => Just(Version::CurrentPlus(1)),
        3 => (2u64..=10).prop_map(Version::CurrentPlus),
        3 => Just(Version::Current),
        3 => Just(Version::CurrentMinus(1)),
        1 => Just(Version::Fixed(MAX_QUANTITY)),
        1 => Just(Version::Fixed(MAX_QUANTITY - 1)),
        1 => any::<u64>().prop_map(Version::Fixed),
    ]
}

fn expected_version() -> impl Strategy<Value = Option<Version>> {
    prop_oneof![
        12 => Just(None),
        2 => Just(Some(Version::CurrentMinus(1))),
        2 => Just(Some(Version::CurrentPlus(1))),
        1 => Just(Some(Version::Fixed(0))),
        1 => Just(Some(Version::Fixed(MAX_QUANTITY))),
        1 => Just(Some(Version::Fixed(u64::MAX))),
    ]
}

/// `KeyCount` comes first so that shrinking turns the operations a failure does not need into
/// it, and the trace (which leaves it out) keeps only the ones that matter.
fn abstract_op() -> impl Strategy<Value = AbstractOp> {
    prop_oneof![
        4 => Just(AbstractOp::KeyCount),
        70 => (key(), cost(), when()).prop_map(|(key, cost, when)| AbstractOp::Allow { key, cost, when }),
        10 => when().prop_map(|when| AbstractOp::EvictFull { when }),
        8 => (version(), quantity(), quantity(), expected_version(), when()).prop_map(
            |(next_version, capacity, tokens_per_second, expected, when)| AbstractOp::ReplacePolicy {
                next_version,
                capacity,
                tokens_per_second,
                expected,
                when,
            }
        ),
    ]
}

fn start_time() -> impl Strategy<Value = u64> {
    prop_oneof![
        24 => Just(0u64),
        2 => 0u64..=u64::MAX / 2,
        1 => (u64::MAX - 2_000_000_000)..=u64::MAX,
        1 => Just(u64::MAX),
    ]
}

fn case(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Case> {
    (
        policy(),
        max_keys(),
        start_time(),
        prop::collection::vec(abstract_op(), len),
    )
        .prop_map(|(policy, max_keys, start, ops)| Case {
            policy,
            max_keys,
            start,
            ops,
        })
}

// ---------------------------------------------------------------------------------------------
// Resolution against the state just before the operation
// ---------------------------------------------------------------------------------------------

/// The case's clock: the largest time generated so far by forward moves.
struct Cursor(u64);

impl Cursor {
    fn time(&mut self, when: When, observed: u64) -> u64 {
        match when {
            When::Same => self.0,
            When::Forward(d) => {
                self.0 = self.0.saturating_add(d);
                self.0
            }
            When::BeforeObserved(d) => observed.saturating_sub(d),
            When::BeforeClock(d) => self.0.saturating_sub(d),
            When::NearMax(d) => {
                self.0 = self.0.max(u64::MAX - d);
                self.0
            }
        }
    }
}

fn resolve_cost(c: Cost, capacity: u64) -> u64 {
    match c {
        Cost::Fixed(v) => v,
        Cost::Capacity => capacity,
        Cost::CapacityMinusOne => capacity - 1,
        Cost::CapacityPlusOne => capacity + 1,
        Cost::HalfCapacity => capacity.div_ceil(2),
    }
}

fn resolve_version(v: Version, current: u64) -> u64 {
    match v {
        Version::Current => current,
        Version::CurrentPlus(d) => current.saturating_add(d),
        Version::CurrentMinus(d) => current.saturating_sub(d),
        Version::Fixed(v) => v,
    }
}

fn resolve(op: &AbstractOp, cursor: &mut Cursor, model: &Model) -> Op {
    let policy = model.policy();
    let observed = model.observed();
    match op {
        AbstractOp::Allow { key, cost, when } => Op::Allow {
            key: key.clone(),
            cost: resolve_cost(*cost, policy.capacity()),
            now: cursor.time(*when, observed),
        },
        AbstractOp::EvictFull { when } => Op::EvictFull {
            now: cursor.time(*when, observed),
        },
        AbstractOp::ReplacePolicy {
            next_version,
            capacity,
            tokens_per_second,
            expected,
            when,
        } => {
            let v = resolve_version(*next_version, policy.version()).clamp(1, MAX_QUANTITY);
            Op::ReplacePolicy {
                next: Policy::new(v, *capacity, *tokens_per_second).expect("clamped into range"),
                expected_version: expected
                    .map_or(policy.version(), |e| resolve_version(e, policy.version())),
                now: cursor.time(*when, observed),
            }
        }
        AbstractOp::KeyCount => Op::KeyCount,
    }
}

// ---------------------------------------------------------------------------------------------
// What the run covered
// ---------------------------------------------------------------------------------------------

/// Counts of outcomes across the whole run, so that a generator that stopped producing some
/// boundary fails the test instead of passing vacuously.
struct Coverage(BTreeMap<&'static str, Cell<usize>>);

impl Coverage {
    const KINDS: [&'static str; 18] = [
        "allowed",
        "allowed a cost of MAX_QUANTITY",
        "allowed a no-break-space key",
        "allowed to exactly zero",
        "rejected",
        "rejected, retry saturated",
        "allowed at MAX_QUANTITY capacity",
        "evicted some",
        "replaced",
        "key_count",
        "InvalidKey",
        "InvalidCost",
        "TimeWentBackwards in allow",
        "TimeWentBackwards in evict_full",
        "TimeWentBackwards in replace_policy",
        "KeyCapacityReached",
        "StalePolicyVersion",
        "time above u64::MAX - 2^31",
    ];

    fn new() -> Self {
        Coverage(Self::KINDS.iter().map(|k| (*k, Cell::new(0))).collect())
    }

    fn hit(&self, kind: &'static str) {
        let c = &self.0[kind];
        c.set(c.get() + 1);
    }

    fn record(&self, op: &Op, outcome: &Outcome, capacity_before: u64) {
        if op.now().is_some_and(|t| t > u64::MAX - (1 << 31)) {
            self.hit("time above u64::MAX - 2^31");
        }
        match (op, outcome) {
            (_, Outcome::Decision(d)) if d.allowed => {
                self.hit("allowed");
                if d.whole_tokens == 0 {
                    self.hit("allowed to exactly zero");
                }
                if capacity_before == MAX_QUANTITY {
                    self.hit("allowed at MAX_QUANTITY capacity");
                }
                if let Op::Allow { key, cost, .. } = op {
                    if *cost == MAX_QUANTITY {
                        self.hit("allowed a cost of MAX_QUANTITY");
                    }
                    if key.contains('\u{a0}') {
                        self.hit("allowed a no-break-space key");
                    }
                }
            }
            (_, Outcome::Decision(d)) => {
                self.hit("rejected");
                if d.retry_after_nanos == MAX_QUANTITY {
                    self.hit("rejected, retry saturated");
                }
            }
            (_, Outcome::Evicted { removed }) if *removed > 0 => self.hit("evicted some"),
            (_, Outcome::Replaced) => self.hit("replaced"),
            (_, Outcome::KeyCount { .. }) => self.hit("key_count"),
            (_, Outcome::Error(LimitError::InvalidKey)) => self.hit("InvalidKey"),
            (_, Outcome::Error(LimitError::InvalidCost { .. })) => self.hit("InvalidCost"),
            (Op::Allow { .. }, Outcome::Error(LimitError::TimeWentBackwards { .. })) => {
                self.hit("TimeWentBackwards in allow")
            }
            (Op::EvictFull { .. }, Outcome::Error(LimitError::TimeWentBackwards { .. })) => {
                self.hit("TimeWentBackwards in evict_full")
            }
            (Op::ReplacePolicy { .. }, Outcome::Error(LimitError::TimeWentBackwards { .. })) => {
                self.hit("TimeWentBackwards in replace_policy")
            }
            (_, Outcome::Error(LimitError::KeyCapacityReached { .. })) => {
                self.hit("KeyCapacityReached")
            }
            (_, Outcome::Error(LimitError::StalePolicyVersion { .. })) => {
                self.hit("StalePolicyVersion")
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

/// White-box invariants of any snapshot: I1 (no bucket above the ceiling), I3 (at most
/// `max_keys` buckets) and no bucket from the future.
fn check_invariants(s: &Snapshot, max_keys: usize) -> Result<(), TestCaseError> {
    let ceiling = u128::from(s.policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    prop_assert!(
        s.buckets.len() <= max_keys,
        "I3: {} keys > max_keys {max_keys}",
        s.buckets.len()
    );
    for (k, b) in &s.buckets {
        prop_assert!(
            b.units <= ceiling,
            "I1: bucket {k:?} holds {} > {ceiling}",
            b.units
        );
        prop_assert!(
            b.last_nanos <= s.observed_nanos,
            "bucket {k:?} is from the future"
        );
    }
    Ok(())
}

/// Runs one case on the reference and on the specification, comparing after every operation.
/// Returns the number of operations run.
fn differential(case: &Case, coverage: &Coverage) -> Result<usize, TestCaseError> {
    let limiter = TokenBucket::new(case.policy, case.max_keys).expect("max_keys >= 1");
    let mut model = Model::new(case.policy, case.max_keys).expect("max_keys >= 1");
    let mut cursor = Cursor(case.start);
    let mut before = limiter.snapshot().expect("TokenBucket implements snapshot");
    prop_assert_eq!(&before, &model.snapshot());
    let mut trace = format!("policy {:?}, max_keys {}\n", case.policy, case.max_keys);
    for (i, abstract_op) in case.ops.iter().enumerate() {
        let op = resolve(abstract_op, &mut cursor, &model);
        let capacity_before = model.policy().capacity();
        let got = op.run_on(&limiter);
        let want = model.apply(&op);
        if op != Op::KeyCount {
            let _ = writeln!(trace, "#{i}: {op:?} -> {want:?}");
        }
        prop_assert_eq!(
            &got,
            &want,
            "outcome of op #{} {:?} differs; trace (key_count calls left out):\n{}",
            i,
            op,
            trace
        );
        let after = limiter.snapshot().expect("TokenBucket implements snapshot");
        prop_assert_eq!(
            &after,
            &model.snapshot(),
            "state after op #{} {:?} differs; trace (key_count calls left out):\n{}",
            i,
            op,
            trace
        );
        prop_assert_eq!(
            limiter.key_count(),
            model.buckets().len(),
            "key_count after op #{}",
            i
        );
        if matches!(got, Outcome::Error(_) | Outcome::KeyCount { .. }) {
            prop_assert_eq!(
                &after,
                &before,
                "op #{} changed state without succeeding",
                i
            );
        }
        check_invariants(&after, case.max_keys)?;
        coverage.record(&op, &got, capacity_before);
        before = after;
    }
    Ok(case.ops.len())
}

/// `cases` cases; failures are saved under `proptest-regressions/` and replayed first.
fn config(cases: u32) -> Config {
    Config {
        cases,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/differential.txt",
        ))),
        ..Config::default()
    }
}

#[test]
fn reference_agrees_with_the_model_on_random_operations() {
    let ops_run = Cell::new(0usize);
    let cases_run = Cell::new(0usize);
    let coverage = Coverage::new();
    while ops_run.get() < REQUIRED_OPS {
        let mut runner = TestRunner::new(config(CASES_PER_BATCH));
        let result = runner.run(&case(OPS_PER_CASE), |c| {
            let n = differential(&c, &coverage)?;
            ops_run.set(ops_run.get() + n);
            cases_run.set(cases_run.get() + 1);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
    let total = ops_run.get();
    println!(
        "differential: {total} random operations in {} cases",
        cases_run.get()
    );
    for (kind, n) in &coverage.0 {
        println!("  {kind:<40} {}", n.get());
    }
    assert!(total >= REQUIRED_OPS, "only {total} operations ran");
    for (kind, n) in &coverage.0 {
        assert!(
            n.get() > 0,
            "no operation covered {kind:?}: the generator lost a boundary"
        );
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// `Model::step` is a pure function of its input (it leaves the input state unchanged and
    /// agrees with `apply`), and a step that fails, or only observes, returns the state it was
    /// given.
    #[test]
    fn model_step_is_pure_and_errors_keep_the_state(c in case(1..=200)) {
        let mut model = Model::new(c.policy, c.max_keys).expect("max_keys >= 1");
        let mut cursor = Cursor(c.start);
        for (i, abstract_op) in c.ops.iter().enumerate() {
            let op = resolve(abstract_op, &mut cursor, &model);
            let before = model.clone();
            let (next, outcome) = model.step(&op);
            prop_assert_eq!(&model, &before, "step #{} {:?} changed its input", i, op);
            let mut applied = model.clone();
            let applied_outcome = applied.apply(&op);
            prop_assert_eq!(&outcome, &applied_outcome, "step and apply disagree at #{}", i);
            prop_assert_eq!(&next, &applied, "step and apply disagree at #{}", i);
            if matches!(outcome, Outcome::Error(_) | Outcome::KeyCount { .. }) {
                prop_assert_eq!(&next, &model, "#{} {:?} -> {:?} changed the state", i, op, outcome);
            } else {
                // A successful call raises the observed time to its own.
                prop_assert_eq!(Some(next.observed()), op.now());
            }
            model = next;
        }
    }
}
