//! Counter-evidence for a diagnosis: a fixed battery of short sequential traces, one per
//! place the lesson's mistakes show (the trace table, a second boundary, the retry ceiling,
//! eviction, cutover up and down, stale time, errors, the key bound, versions, extremes, key
//! validation), run on a design, on a catalogued wrong design and on the specification.
//!
//! A catalogued design that reproduces a learner's failing trace is a lookalike only if it is
//! *consistent* with the learner's design on the battery: wherever either departs from the
//! specification, both return (and store) exactly the same. A mistake that would show on a
//! trial where the learner's design is right is not the learner's mistake, however well it
//! mimics one failing trace (an eviction that drops idle buckets can return what a fixed
//! window returns on an eviction trace, but the fixed window also fails the trace table,
//! which that eviction passes); and a design that explains one departure of the learner's
//! but not another explains only part of what is wrong. Either way the diagnosis says less
//! rather than something false.
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::model::{ModelLimiter, Op, Outcome};
use crate::{LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY};

use crate::model::same_state::balances;
use crate::suite::diagnose::signature::signature;
use crate::suite::host::subject::Build;

/// One trial: a limiter's policy and key bound, and the calls made on it in order.
struct Trial {
    policy: Policy,
    max_keys: usize,
    ops: Vec<Op>,
}

pub(super) const MS: u64 = 1_000_000;
pub(super) const SECOND: u64 = 1_000_000_000;

pub(super) fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_owned(),
        cost,
        now,
    }
}

pub(super) fn replace(
    version: u64,
    capacity: u64,
    rate: u64,
    expected_version: u64,
    now: u64,
) -> Op {
    match Policy::new(version, capacity, rate) {
        Ok(next) => Op::ReplacePolicy {
            next,
            expected_version,
            now,
        },
        // Every policy below is valid; an invalid one would only make the trial shorter.
        Err(_) => Op::KeyCount,
    }
}

/// Calls at the extremes, on a limiter of capacity [`MAX_QUANTITY`] and rate 1: the whole
/// capacity at 0, again at the largest time, and one token then (where unchecked units
/// overflow).
pub(super) fn at_the_extremes() -> Vec<Op> {
    vec![
        allow("k", MAX_QUANTITY, 0),
        allow("k", MAX_QUANTITY, u64::MAX - 1),
        allow("k", 1, u64::MAX - 1),
    ]
}

/// A trial of a limiter built with version 1 of `capacity` and `rate` (every trial's policy
/// is valid; an invalid one would only drop the trial).
fn trial(capacity: u64, rate: u64, max_keys: usize, ops: Vec<Op>) -> Option<Trial> {
    Some(Trial {
        policy: Policy::new(1, capacity, rate).ok()?,
        max_keys,
        ops,
    })
}

/// The battery, each trial a few calls long.
fn battery() -> Vec<Trial> {
    [
        // The seed's trace table, continued: fractional credit kept across a refusal.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 10, 0),
                allow("k", 1, 0),
                allow("k", 1, 250 * MS),
                allow("k", 1, 500 * MS),
                allow("k", 1, 750 * MS),
                allow("k", 2, 1_750 * MS),
            ],
        ),
        // A second boundary: no fresh budget at 1 s, and a whole bucket once, not twice.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 10, SECOND - 1),
                allow("k", 10, SECOND),
                allow("k", 1, 1_250 * MS),
                allow("j", 10, 2 * SECOND),
                allow("j", 10, 2 * SECOND),
            ],
        ),
        // The retry ceiling: capacity 1, rate 3.
        trial(
            1,
            3,
            8,
            vec![
                allow("k", 1, 0),
                allow("k", 1, 0),
                allow("k", 1, 333_333_333),
                allow("k", 1, 333_333_334),
            ],
        ),
        // Eviction: a spent bucket stays, a full one goes, a refilled one goes.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 10, 0),
                allow("j", 1, 0),
                Op::EvictFull { now: SECOND },
                Op::KeyCount,
                allow("k", 10, SECOND),
                Op::EvictFull { now: 10 * SECOND },
                Op::KeyCount,
                allow("k", 10, 10 * SECOND),
            ],
        ),
        // The worked cutover: capacity and rate doubled at 0.5 s.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 10, 0),
                replace(2, 20, 4, 1, 500 * MS),
                allow("k", 1, 500 * MS),
                allow("k", 1, 750 * MS),
                allow("k", 20, 750 * MS),
                allow("n", 20, 750 * MS),
            ],
        ),
        // A cutover down clamps; a later one up does not top up after a long idle time.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 1, 0),
                replace(2, 5, 2, 1, 0),
                allow("k", 5, 0),
                allow("k", 1, 0),
                replace(3, 100, 1, 2, 60 * SECOND),
                allow("k", 100, 60 * SECOND),
                allow("k", 5, 60 * SECOND),
            ],
        ),
        // Time: a call earlier than one already served is refused and changes nothing.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 10, SECOND),
                allow("k", 1, 0),
                allow("k", 2, SECOND),
                allow("k", 1, SECOND),
            ],
        ),
        // Time is the limiter's, not each key's: a new key, and another key, are refused a
        // time older than the newest call of any key.
        trial(
            10,
            2,
            8,
            vec![
                allow("a", 1, SECOND),
                allow("b", 1, 0),
                allow("a", 1, 2 * SECOND),
                allow("c", 1, 3 * SECOND),
                allow("a", 1, 2_500 * MS),
            ],
        ),
        // Errors win in order and change nothing.
        trial(
            10,
            2,
            8,
            vec![
                allow("k", 1, 10),
                allow("k", 0, 5),
                allow("k", 11, 5),
                allow("k", 0, 20),
                allow("k", 9, 10),
                allow("k", 1, 10),
            ],
        ),
        // The key bound: a second key is refused until eviction makes room.
        trial(
            10,
            2,
            1,
            vec![
                allow("a", 1, 0),
                allow("b", 1, 0),
                Op::KeyCount,
                allow("a", 10, SECOND),
                Op::EvictFull { now: 10 * SECOND },
                allow("b", 10, 10 * SECOND),
                Op::KeyCount,
            ],
        ),
        // The key bound holds a spent key: a new key at the bound does not displace it.
        trial(
            10,
            2,
            1,
            vec![allow("a", 10, 0), allow("b", 1, 0), allow("a", 1, 0)],
        ),
        // Versions: a stale administrator cannot overwrite a newer policy.
        trial(
            10,
            2,
            8,
            vec![
                replace(2, 10, 2, 1, 0),
                replace(3, 10, 2, 1, 0),
                replace(2, 10, 2, 2, 0),
                replace(3, 4, 1, 2, 0),
                allow("k", 5, 0),
            ],
        ),
        // Extremes: the largest capacity and times, where unchecked units overflow.
        trial(MAX_QUANTITY, 1, 8, at_the_extremes()),
        // Keys: blank ones are refused, by the seed's notion of blank.
        trial(
            10,
            2,
            8,
            vec![
                allow("", 1, 0),
                allow(" \t", 1, 0),
                allow("\u{1f}", 1, 0),
                allow("\u{a0}", 1, 0),
                Op::KeyCount,
            ],
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What a design did on one trial: its outcomes, and its balances at the end when it
/// reports a snapshot. `None` when it could not be built or panicked: no evidence.
type Behaviour = Option<(Vec<Outcome>, Option<Vec<(String, u128)>>)>;

/// How balances are read from a snapshot.
#[derive(Clone, Copy)]
enum Read {
    /// Refilled to the snapshot's time and clamped to its capacity: what a design would
    /// admit, whatever it stores.
    Clamped,
    /// Refilled but not clamped: a balance above the capacity shows (invariant I1).
    Unclamped,
}

/// What `build` does on `ops` under `policy`: each call's outcome, and its snapshot at the
/// end. `None` when it could not be built or panicked: no evidence.
pub(super) fn run_calls(
    build: Build,
    policy: Policy,
    max_keys: usize,
    ops: &[Op],
) -> Option<(Vec<Outcome>, Option<Snapshot>)> {
    catch_unwind(AssertUnwindSafe(|| {
        let limiter = build(policy, max_keys).ok()?;
        let outcomes = ops.iter().map(|op| op.run_on(limiter.as_ref())).collect();
        Some((outcomes, limiter.snapshot()))
    }))
    .ok()
    .flatten()
}

fn behave(build: Build, p: &Trial, read: Read) -> Behaviour {
    let (outcomes, snapshot) = run_calls(build, p.policy, p.max_keys, &p.ops)?;
    let stored = snapshot.map(|s| match read {
        Read::Clamped => balances(&s)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        Read::Unclamped => s
            .buckets
            .iter()
            .map(|(k, b)| {
                let elapsed = s.observed_nanos.saturating_sub(b.last_nanos);
                let rate = u128::from(s.policy.tokens_per_second());
                let earned = u128::from(elapsed).saturating_mul(rate);
                (k.clone(), b.units.saturating_add(earned))
            })
            .collect(),
    });
    Some((outcomes, stored))
}

/// Whether two behaviours differ, comparing stored balances only when both report them.
fn differ(a: &Behaviour, b: &Behaviour) -> bool {
    match (a, b) {
        (Some((oa, sa)), Some((ob, sb))) => {
            oa != ob || matches!((sa, sb), (Some(x), Some(y)) if x != y)
        }
        _ => false,
    }
}

/// Whether `suspect` is consistent with `design` on the battery: on every trial where either
/// departs from the specification, both behave exactly alike. A trial on which either
/// panics, or cannot be built, counts as no evidence.
pub(crate) fn consistent(suspect: Build, design: Build) -> bool {
    battery().iter().all(|p| {
        let spec = behave(spec, p, Read::Clamped);
        let (theirs, mine) = (
            behave(suspect, p, Read::Clamped),
            behave(design, p, Read::Clamped),
        );
        let departs = differ(&theirs, &spec) || differ(&mine, &spec);
        !departs || !differ(&theirs, &mine)
    })
}

/// Whether `suspect` departs from the specification *alike* with `design` on the battery, at
/// the level of the mistake rather than of the design: on every trial where the suspect
/// departs, the design departs too, first with the same cause, at whatever step
/// ([`Signature::shows_in`]). A mistake that would show where the design does not slip, or
/// slips another way, is not the design's; a trial where only the design departs says
/// nothing (a design may make a second mistake, which the diagnosis then finds unexplained).
/// A trial on which either panics, or cannot be built, counts as no evidence.
///
/// [`Signature::shows_in`]: crate::suite::diagnose::signature::Signature::shows_in
pub(crate) fn alike(suspect: Build, design: Build) -> bool {
    battery().iter().all(|p| {
        let sign = |build| signature(build, p.policy, p.max_keys, &p.ops);
        match (sign(suspect), sign(design)) {
            (Some(theirs), Some(mine)) => theirs.shows_in(&mine),
            _ => true,
        }
    })
}

/// Whether `suspect` departs from the specification on a trace (built with `policy` and
/// `max_keys`): in what it returns, or in what it stores at the end. A design that behaves
/// as the specification there cannot explain a failure on it.
pub(crate) fn departs_on(suspect: Build, policy: Policy, max_keys: usize, ops: &[Op]) -> bool {
    let p = Trial {
        policy,
        max_keys,
        ops: ops.to_vec(),
    };
    differ(
        &behave(suspect, &p, Read::Unclamped),
        &behave(spec, &p, Read::Unclamped),
    )
}

/// [`Build`] for the specification.
pub(super) fn spec(policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
    ModelLimiter::new(policy, max_keys).map(|m| Box::new(m) as Box<dyn Limiter>)
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::catalog::mistakes::{
        FixedWindowBucket, LruEviction, NoClampOnDecrease, WholeTokenRefill,
    };
    use crate::reference::TokenBucket;
    use crate::suite::host::subject::boxed;

    fn policy(capacity: u64, rate: u64) -> Policy {
        Policy::new(1, capacity, rate).expect("valid")
    }

    #[test]
    fn every_probe_of_the_battery_is_built() {
        assert_eq!(
            battery().len(),
            14,
            "a trial with an invalid policy was dropped"
        );
    }

    #[test]
    fn a_design_is_consistent_with_itself_and_the_reference_with_itself() {
        assert!(consistent(boxed::<LruEviction>, boxed::<LruEviction>));
        assert!(consistent(boxed::<TokenBucket>, boxed::<TokenBucket>));
    }

    #[test]
    fn a_mistake_that_shows_where_the_design_is_right_is_not_its_mistake() {
        // The fixed window fails the trace table, which an idle eviction passes; and an idle
        // eviction departs on the eviction trial in its own way.
        assert!(!consistent(
            boxed::<FixedWindowBucket>,
            boxed::<LruEviction>
        ));
        assert!(!consistent(
            boxed::<LruEviction>,
            boxed::<FixedWindowBucket>
        ));
        assert!(!consistent(
            boxed::<FixedWindowBucket>,
            boxed::<WholeTokenRefill>
        ));
        // A correct design explains nothing a wrong one does, and the other way round.
        assert!(!consistent(boxed::<TokenBucket>, boxed::<LruEviction>));
        assert!(!consistent(boxed::<LruEviction>, boxed::<TokenBucket>));
    }

    #[test]
    fn a_mistake_that_shows_where_the_design_does_not_slip_is_not_alike() {
        use crate::catalog::mistakes::{KeyCapacityBeforeTime, PerKeyTime};
        // A per-key time check refuses nothing a new key or another key sends late: the
        // battery's trial of the limiter's time shows it. A reordered error check departs
        // nowhere on the battery, so nothing it shows contradicts the per-key check; but the
        // per-key check's departure shows nowhere in the reordered one.
        assert!(!alike(boxed::<PerKeyTime>, boxed::<KeyCapacityBeforeTime>));
        assert!(alike(boxed::<KeyCapacityBeforeTime>, boxed::<PerKeyTime>));
        assert!(alike(boxed::<LruEviction>, boxed::<LruEviction>));
        assert!(!alike(boxed::<FixedWindowBucket>, boxed::<LruEviction>));
        assert!(!alike(boxed::<LruEviction>, boxed::<TokenBucket>));
    }

    #[test]
    fn only_a_design_that_departs_on_a_trace_can_explain_a_failure_on_it() {
        let trace = [allow("k", 10, 0), allow("k", 1, 0), allow("k", 1, 500 * MS)];
        assert!(!departs_on(boxed::<TokenBucket>, policy(10, 2), 8, &trace));
        assert!(departs_on(
            boxed::<FixedWindowBucket>,
            policy(10, 2),
            8,
            &trace
        ));
        // A balance stored above the capacity shows, though every outcome is right.
        let clamp = [allow("k", 1, 0), replace(2, 5, 2, 1, 0)];
        assert!(departs_on(
            boxed::<NoClampOnDecrease>,
            policy(10, 2),
            8,
            &clamp
        ));
        assert!(!departs_on(boxed::<TokenBucket>, policy(10, 2), 8, &clamp));
    }
}
