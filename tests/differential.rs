//! Differential tests: every correct design (the reference `TokenBucket` and the catalog's
//! alternatives) against the executable specification, operation by operation, outcome by
//! outcome and state by state.
//!
//! The operations come from the suite's one generator (`ratelimit_lab::suite::generate`, the
//! long [`WIDE`] and [`WIDE_EXTREMES`] families: every method, look-alike keys, time going
//! backwards, stale and equal versions, `MAX_QUANTITY` and times near `u64::MAX`) and run
//! through the suite's one differential runner ([`Probe`]), which compares outcomes, key
//! counts, error atomicity and stored state after every step. On top of the probe, this file
//! requires each design's snapshot to *equal* the specification's (not only to be
//! equivalent), and counts which outcome kinds were reached, so that a generator that lost a
//! boundary fails the test instead of passing vacuously.
//!
//! Seeds are fixed, so every run generates the same operations.
// Under loom or shuttle the designs' locks only work inside those tools' executions.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::cell::Cell;
use std::collections::BTreeMap;

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use ratelimit_lab::suite::generate::{case, Mix, WIDE, WIDE_EXTREMES};
use ratelimit_lab::suite::Probe;
use ratelimit_lab::{LimitError, Limiter, Policy, MAX_QUANTITY};
use ratelimit_lab_catalog::alternatives::{
    CheckedU64Bucket, LazyMigration, OwnerThread, RwLockBucket, ShardedLocks,
};
use ratelimit_lab_model::{Model, Op, Outcome};
use ratelimit_lab_reference::TokenBucket;

/// Cases per batch; batches run until a design has run its share of operations.
const CASES_PER_BATCH: u32 = 32;

/// Which outcome kinds the operations reached.
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

    fn missing(&self) -> Vec<&'static str> {
        self.0
            .iter()
            .filter(|(_, n)| n.get() == 0)
            .map(|(k, _)| *k)
            .collect()
    }
}

/// Batch `i`'s family and seed: three ordinary batches, then one at the extremes.
fn batch(i: u32) -> (Mix, [u8; 32]) {
    let mut seed = [0u8; 32];
    seed[..4].copy_from_slice(&i.to_le_bytes());
    seed[4..8].copy_from_slice(b"diff");
    (if i % 4 == 3 { WIDE_EXTREMES } else { WIDE }, seed)
}

/// Runs generated sequences on `L` beside the specification until at least `min_ops`
/// operations have run; returns how many ran and what they reached.
fn agree<L: Limiter>(name: &str, min_ops: usize) -> (usize, Coverage) {
    let ops_run = Cell::new(0usize);
    let coverage = Coverage::new();
    let mut i = 0;
    while ops_run.get() < min_ops {
        let (mix, seed) = batch(i);
        i += 1;
        let config = Config {
            cases: CASES_PER_BATCH,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
        let result = runner.run(&case(mix), |c| {
            let mut probe = Probe::new::<L>(c.policy, c.max_keys)
                .map_err(|f| TestCaseError::fail(f.to_string()))?;
            for op in &c.ops {
                let capacity_before = probe.specified().policy.capacity();
                let outcome = probe
                    .run(op.clone())
                    .map_err(|f| TestCaseError::fail(f.to_string()))?;
                let want = probe.specified();
                if probe.design().snapshot().as_ref() != Some(&want) {
                    return Err(TestCaseError::fail(format!(
                        "after {op} the snapshot is {:?}; the specification's is {want:?}",
                        probe.design().snapshot()
                    )));
                }
                coverage.record(op, &outcome, capacity_before);
            }
            ops_run.set(ops_run.get() + c.ops.len());
            Ok(())
        });
        if let Err(e) = result {
            panic!(
                "{name} disagrees with the specification (batch {}): {e}",
                i - 1
            );
        }
    }
    println!("{name}: {} random operations agree", ops_run.get());
    (ops_run.get(), coverage)
}

#[test]
fn the_reference_agrees_with_the_specification_on_random_operations() {
    let (_, coverage) = agree::<TokenBucket>("TokenBucket", 100_000);
    for (kind, n) in &coverage.0 {
        println!("  {kind:<40} {}", n.get());
    }
    let missing = coverage.missing();
    assert!(
        missing.is_empty(),
        "no operation reached {missing:?}: the generator lost a boundary"
    );
}

#[test]
fn the_rwlock_alternative_agrees_with_the_specification() {
    agree::<RwLockBucket>("RwLockBucket", 20_000);
}

#[test]
fn the_lazy_migration_alternative_agrees_with_the_specification() {
    agree::<LazyMigration>("LazyMigration", 20_000);
}

#[test]
fn the_sharded_alternative_agrees_with_the_specification() {
    agree::<ShardedLocks>("ShardedLocks", 20_000);
}

#[test]
fn the_checked_u64_alternative_agrees_with_the_specification() {
    agree::<CheckedU64Bucket>("CheckedU64Bucket", 20_000);
}

#[test]
fn the_owner_thread_alternative_agrees_with_the_specification() {
    agree::<OwnerThread>("OwnerThread", 20_000);
}

// ---------------------------------------------------------------------------------------------
// Fixed scripts a lazy or sharded design could get wrong, on every correct design
// ---------------------------------------------------------------------------------------------

const SECOND: u64 = 1_000_000_000;

fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
    Policy::new(version, capacity, rate).expect("a valid policy")
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

/// Runs `ops` through the probe on `L` and returns the outcomes.
fn script<L: Limiter>(initial: Policy, max_keys: usize, ops: &[Op]) -> Vec<Outcome> {
    let mut probe = Probe::new::<L>(initial, max_keys).unwrap_or_else(|f| panic!("{f}"));
    ops.iter()
        .map(|op| {
            let outcome = probe.run(op.clone()).unwrap_or_else(|f| panic!("{f}"));
            assert_eq!(
                probe.design().snapshot(),
                Some(probe.specified()),
                "after {op}"
            );
            outcome
        })
        .collect()
}

/// Untouched buckets cross several cutovers (raise, shrink below the balances, raise again),
/// each with a new rate; then eviction and spending.
fn untouched_buckets_cross_several_cutovers<L: Limiter>() {
    let out = script::<L>(
        policy(1, 10, 2),
        4,
        &[
            allow("a", 10, 0),
            allow("b", 3, 0),
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
    // "a" spent 10 at 0, earned 0.8 under rate 2 by 0.4 s and 3.5 under rate 7 by 0.9 s, was
    // clamped to 2 there, earned 0.001 under rate 1 by 0.901 s (rate 1,000 was never in force
    // for any time), then 3.297 under rate 3 by 2 s: clamped to 5, exactly the cost.
    assert_eq!(
        out[8],
        Outcome::Decision(ratelimit_lab::Decision {
            allowed: true,
            whole_tokens: 0,
            retry_after_nanos: 0,
        })
    );
}

/// Cutovers with no buckets, then a key created under the newest policy.
fn cutovers_with_no_buckets<L: Limiter>() {
    let out = script::<L>(
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
    // "k" spent all 4 at 5 ns and was refused at 6 ns holding 1 unit: full (4 × 10⁹ units at
    // rate 1) exactly at 4 s + 5 ns, when the first eviction removes it.
    assert_eq!(out[4], Outcome::Evicted { removed: 1 });
    assert_eq!(out[5], Outcome::Evicted { removed: 0 });
}

/// Eviction judges the balance settled under the policy in force: a raise leaves a full
/// bucket short of the new capacity, a cut clamps it to full.
fn eviction_uses_the_settled_balance<L: Limiter>() {
    let out = script::<L>(
        policy(1, 10, 2),
        2,
        &[
            allow("grow", 1, 0),
            allow("shrink", 9, 0),
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

fn scripts<L: Limiter>() {
    untouched_buckets_cross_several_cutovers::<L>();
    cutovers_with_no_buckets::<L>();
    eviction_uses_the_settled_balance::<L>();
}

#[test]
fn fixed_cutover_and_eviction_scripts_agree_on_every_correct_design() {
    scripts::<TokenBucket>();
    scripts::<RwLockBucket>();
    scripts::<LazyMigration>();
    scripts::<ShardedLocks>();
    scripts::<CheckedU64Bucket>();
    scripts::<OwnerThread>();
}

// ---------------------------------------------------------------------------------------------
// The specification's own step function
// ---------------------------------------------------------------------------------------------

/// A step that fails, or only observes, returns the state it was given; a successful one
/// raises the observed time to its own. Checked on the generator's sequences.
#[test]
fn a_failed_or_observing_step_keeps_the_specification_state() {
    let config = Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7u8; 32]));
    let result = runner.run(&case(WIDE_EXTREMES), |c| {
        let mut model =
            Model::new(c.policy, c.max_keys).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for op in &c.ops {
            let (next, outcome) = model.step(op);
            if matches!(outcome, Outcome::Error(_) | Outcome::KeyCount { .. }) {
                proptest::prop_assert_eq!(&next, &model, "{} -> {} changed the state", op, outcome);
            } else {
                proptest::prop_assert_eq!(Some(next.observed()), op.now(), "{} -> {}", op, outcome);
            }
            model = next;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
