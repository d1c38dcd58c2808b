//! Mistake detectors: for a seed mistake whose defining symptom a few sequential calls show, a
//! fixed probe of that symptom run on the design itself, through the same [`Build`] the
//! battery uses. Unlike a replay on catalogued designs, a detector needs no catalogued design
//! that makes the mistake: it asks the design the question the seed's sentence answers (does
//! an error change the state? does a new key start full? does a rejected call lose credit?).
//!
//! Each detector fires only when the symptom shows *and* the design behaves as the
//! specification on the controls that isolate it, so that another mistake cannot produce it.
//! Every symptom is a difference from the specification, or between two answers of the
//! design that the contract makes equal, so a correct design never fires a detector. Many
//! detectors compare the design with itself (the same calls with and without an error, a new
//! key beside an old key that refilled to full): the comparison cancels whatever else the
//! design does wrong. Where one mistake's symptom explains another's, the table of detectors
//! ([`DETECTORS`]) says so: a detector does not fire while a symptom it names `unless` shows
//! (the three cutover detectors thus exclude each other). That a detector fires on
//! no catalogued design making another mistake is tested, not proven: the unit test below
//! iterates the catalog.
//!
//! [`detected`] names a mistake only when every detector that fires names the same one; a
//! probe on which the design panics, or which it cannot be built for, is no evidence. The
//! race mistakes have no detector (sequential calls cannot show them).
use std::mem::discriminant;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use crate::model::same_state::balances;
use crate::model::{Op, Outcome};
use crate::{Decision, LimitError, Mistake, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN};

use crate::suite::checks::examples::LONG_KEY;
use crate::suite::diagnose::battery::{
    allow, at_the_extremes, replace, run_calls, spec, MS, SECOND,
};
use crate::suite::host::subject::Build;

/// One probe: a limiter built with version 1 of a capacity and a rate and with a key bound,
/// and the calls made on it in order.
struct Probe {
    capacity: u64,
    rate: u64,
    max_keys: usize,
    ops: Vec<Op>,
}

/// A probe of capacity 10 and rate 2 (the seed's trace table's policy) with room for 8 keys.
fn small(ops: Vec<Op>) -> Probe {
    Probe {
        capacity: 10,
        rate: 2,
        max_keys: 8,
        ops,
    }
}

/// The keys a probe that stands for every key is also run on: "k" and "a" to "h", which fall
/// into every shard of a design hashing keys into a few (FNV-1a modulo 8, among others).
const SPREAD: [&str; 9] = ["k", "a", "b", "c", "d", "e", "f", "g", "h"];

/// The same probe with its key "k" renamed `key` (other keys stay).
fn on_key(p: &Probe, key: &str) -> Probe {
    let ops = p
        .ops
        .iter()
        .map(|op| match op {
            Op::Allow { key: k, cost, now } if k == "k" => allow(key, *cost, *now),
            other => other.clone(),
        })
        .collect();
    probe(p.capacity, p.rate, p.max_keys, ops)
}

/// A probe with its own policy and key bound.
fn probe(capacity: u64, rate: u64, max_keys: usize, ops: Vec<Op>) -> Probe {
    Probe {
        capacity,
        rate,
        max_keys,
        ops,
    }
}

/// What a design did on a probe: each call's outcome, and its snapshot at the end. `None`
/// when it could not be built or panicked: no evidence.
fn run(build: Build, p: &Probe) -> Option<(Vec<Outcome>, Option<Snapshot>)> {
    let policy = Policy::new(1, p.capacity, p.rate).ok()?;
    run_calls(build, policy, p.max_keys, &p.ops)
}

/// The outcomes of a design on a probe.
fn outcomes(build: Build, p: &Probe) -> Option<Vec<Outcome>> {
    run(build, p).map(|(o, _)| o)
}

/// The design's and the specification's outcomes on a probe.
fn both(design: Build, p: &Probe) -> Option<(Vec<Outcome>, Vec<Outcome>)> {
    Some((outcomes(design, p)?, outcomes(spec, p)?))
}

/// The design's and the specification's last outcomes on a probe.
fn last(design: Build, p: &Probe) -> Option<(Outcome, Outcome)> {
    let (mut mine, mut theirs) = both(design, p)?;
    Some((mine.pop()?, theirs.pop()?))
}

/// Whether the design returns exactly what the specification returns on a probe (`false`
/// without evidence).
fn as_specified(design: Build, p: &Probe) -> bool {
    both(design, p).is_some_and(|(mine, theirs)| mine == theirs)
}

fn decision(o: &Outcome) -> Option<&Decision> {
    match o {
        Outcome::Decision(d) => Some(d),
        _ => None,
    }
}

fn error(o: &Outcome) -> Option<&LimitError> {
    match o {
        Outcome::Error(e) => Some(e),
        _ => None,
    }
}

/// Whether two outcomes are the same error (of any detail).
fn same_error(a: &Outcome, b: &Outcome) -> bool {
    matches!((error(a), error(b)), (Some(x), Some(y)) if discriminant(x) == discriminant(y))
}

fn input_error(o: &Outcome) -> bool {
    matches!(
        o,
        Outcome::Error(LimitError::InvalidKey | LimitError::InvalidCost { .. })
    )
}

fn time_went_backwards(o: &Outcome) -> bool {
    matches!(o, Outcome::Error(LimitError::TimeWentBackwards { .. }))
}

fn admitted(o: &Outcome) -> bool {
    decision(o).is_some_and(|d| d.allowed)
}

fn refused(o: &Outcome) -> bool {
    decision(o).is_some_and(|d| !d.allowed)
}

/// [`Mistake::InputValidation`]: one call on a fresh limiter for each of the blank keys in
/// the contract's sense (empty, spaces and tab, U+001F), keys that are not blank (U+00A0, a
/// long key, a tab between letters, DEL alone), a
/// cost of 0, a cost above the capacity and two valid costs. Fires when the design refuses as
/// invalid input a call the specification serves, or answers otherwise (or with the other
/// input error) a call the specification refuses as invalid input. On a fresh limiter at time
/// 0 nothing but the key and the cost (no time, key bound, version or balance) decides
/// whether a call is an input error, so no other mistake changes that answer, and a correct
/// design gives the specification's. Also fires when the design refuses to build a limiter
/// for a valid policy and key bound (a capacity below, at and above the rate, the extremes),
/// or answers with an input error a token asked of a spent bucket (a rejection: the balance
/// never makes a call invalid), or judges a cost against another capacity than the one in
/// force after a cutover (on a new key, or on a key tracked before it). A large valid cost
/// refused is a symptom of its own ([`refuses_large_cost`]).
fn input_validation(design: Build) -> bool {
    let calls = [
        ("", 1),
        (" \t", 1),
        ("\u{1f}", 1),
        ("\u{a0}", 1),
        (LONG_KEY, 1),
        ("a\tb", 1),
        ("\u{7f}", 1),
        ("k", 0),
        ("k", 11),
        ("k", 1),
        ("k", 10),
    ];
    // A spent bucket refuses a token for its balance: a rejection, not an input error.
    let spent = last(design, &small(vec![allow("k", 10, 0), allow("k", 1, 0)]))
        .is_some_and(|(mine, theirs)| refused(&theirs) && input_error(&mine));
    let refused_call = calls.iter().any(|&(key, cost)| {
        last(design, &small(vec![allow(key, cost, 0)])).is_some_and(|(mine, theirs)| {
            input_error(&mine) != input_error(&theirs)
                || (input_error(&theirs) && !same_error(&mine, &theirs))
        })
    });
    // Valid policies (a capacity below, equal to and above the rate, the extremes) and key
    // bounds: the design must build a limiter for each.
    let valid = [
        (1, 3, 1),
        (2, 2, 8),
        (10, 2, 1),
        (MAX_QUANTITY, 1, 8),
        (1, MAX_QUANTITY, 8),
    ];
    let refused_build = valid.into_iter().any(|(capacity, rate, max_keys)| {
        Policy::new(1, capacity, rate).is_ok_and(|policy| {
            matches!(
                catch_unwind(AssertUnwindSafe(|| design(policy, max_keys).is_err())),
                Ok(true)
            )
        })
    });
    // After a cutover, the cost bound is the new capacity's: 6 is too much for 5, 15 fits 20,
    // for a new key and for one tracked before the cutover.
    let after_cutover = [(5, 6), (20, 15)].into_iter().any(|(capacity, cost)| {
        [vec![], vec![allow("k", 1, 0)]].into_iter().any(|before| {
            let n = before.len() + 1;
            let ops = before
                .into_iter()
                .chain([replace(2, capacity, 2, 1, 0), allow("k", cost, 0)])
                .collect();
            both(design, &small(ops)).is_some_and(|(mine, theirs)| {
                mine.get(..n) == theirs.get(..n)
                    && matches!((mine.get(n), theirs.get(n)), (Some(m), Some(t))
                        if input_error(m) != input_error(t))
            })
        })
    });
    refused_call || spent || refused_build || after_cutover
}

/// A symptom of [`Mistake::InputValidation`]: a large valid cost refused as invalid. At the
/// largest capacity, a first call asking 2 × 10¹⁰ tokens (whose units exceed `u64`) and one
/// asking the whole capacity: the specification admits both (each on a fresh limiter). Fires
/// when the design answers either with an input error. A design whose fixed point overflows
/// there panics or answers with a decision; only a cost bound other than the capacity answers
/// with `InvalidCost` (the fixed point's row gives way to this one).
fn refuses_large_cost(design: Build) -> bool {
    [20_000_000_000, MAX_QUANTITY].into_iter().any(|cost| {
        last(
            design,
            &probe(MAX_QUANTITY, 1, 8, vec![allow("k", cost, 0)]),
        )
        .is_some_and(|(mine, theirs)| admitted(&theirs) && input_error(&mine))
    })
}

/// One call that the specification refuses with an error, between calls that it serves.
struct Interrupted {
    max_keys: usize,
    before: Vec<Op>,
    error: Op,
    after: Vec<Op>,
}

/// [`Mistake::MutationBeforeValidation`], two symptoms.
///
/// - **An error changes the state.** The same calls with and without one erroneous call (an
///   invalid cost, a blank key, a stale version, a full key bound, an older time, also on a new
///   key, a cutover older than the last call) in the middle: when the design returns the
///   specification's error for it, what it returns afterwards must not depend on whether the
///   call was made. The comparison is of the design with itself, so another slip cancels out;
///   a correct design changes nothing on an error, by the contract.
/// - **Errors checked in the wrong order.** A call with two errors (a bad cost or key and an
///   older time; an older time on a new key at the key bound; a bad cost at the bound)
///   returns another error than the first in the contract's order (key, cost, time, key
///   capacity), while each of the errors alone is returned as specified (the controls): a
///   design that misses one of the errors (accepts a zero cost, serves an older time on a
///   new key, admits keys past the bound) fails a control and is left to its own detector.
fn mutation_before_validation(design: Build) -> bool {
    let after = || {
        vec![
            allow("k", 1, 5),
            allow("k", 8, 5),
            allow("k", 1, 5),
            Op::KeyCount,
        ]
    };
    let interrupted = [
        (8, allow("k", 0, 10)),
        (8, allow("k", 11, 10)),
        (8, allow("", 1, 10)),
        (8, replace(2, 5, 1, 7, 10)),
        (1, allow("b", 1, 10)),
    ]
    .into_iter()
    .map(|(max_keys, error)| Interrupted {
        max_keys,
        before: vec![allow("k", 1, 0)],
        error,
        after: after(),
    })
    .chain(std::iter::once(Interrupted {
        max_keys: 8,
        before: vec![allow("k", 1, 20)],
        error: allow("n", 1, 10),
        after: vec![allow("k", 1, 20), Op::KeyCount, allow("n", 10, 20)],
    }))
    // A cutover older than the last sweep (which changed nothing), to a smaller capacity: a
    // bucket dated after the cutover could make a design's refill panic, no evidence.
    .chain(std::iter::once(Interrupted {
        max_keys: 8,
        before: vec![allow("k", 1, 0), Op::EvictFull { now: 250 * MS }],
        error: replace(2, 5, 2, 1, 100 * MS),
        after: vec![
            allow("k", 9, 250 * MS),
            allow("k", 1, 250 * MS),
            Op::KeyCount,
        ],
    }))
    .chain(std::iter::once(Interrupted {
        max_keys: 8,
        before: vec![allow("k", 1, 20)],
        error: allow("k", 5, 10),
        after: vec![
            allow("k", 1, 15),
            allow("k", 1, 20),
            allow("k", 8, 20),
            Op::KeyCount,
        ],
    }));
    let mutated = interrupted.into_iter().any(|c| {
        let with: Vec<Op> = c
            .before
            .iter()
            .chain(std::iter::once(&c.error))
            .chain(&c.after)
            .cloned()
            .collect();
        let without: Vec<Op> = c.before.iter().chain(&c.after).cloned().collect();
        let at = c.before.len();
        let (Some((mine, theirs)), Some(skipped)) = (
            both(design, &probe(10, 2, c.max_keys, with)),
            outcomes(design, &probe(10, 2, c.max_keys, without)),
        ) else {
            return false;
        };
        let same_answer = match (mine.get(at), theirs.get(at)) {
            (Some(m), Some(t)) => same_error(m, t),
            _ => false,
        };
        same_answer && mine.get(at + 1..) != skipped.get(at..)
    });
    // After a first call at 10 ns (on `k`, or on `a` beside a new `b`), one call with one
    // error (a control) or with two (the probe): (key bound, the call, two errors).
    let calls = [
        (8, allow("k", 0, 20), false),
        (8, allow("", 1, 20), false),
        (8, allow("k", 1, 5), false),
        (8, allow("b", 1, 5), false),
        (1, allow("b", 1, 20), false),
        (8, allow("k", 0, 5), true),
        (8, allow("", 1, 5), true),
        (8, allow("", 0, 20), true),
        (1, allow("b", 1, 5), true),
        (1, allow("b", 0, 20), true),
    ];
    let answers: Vec<(bool, Option<(Outcome, Outcome)>)> = calls
        .into_iter()
        .map(|(max_keys, call, two)| {
            let first = if matches!(&call, Op::Allow { key, .. } if key == "b") {
                "a"
            } else {
                "k"
            };
            let ops = vec![allow(first, 1, 10), call];
            // The first call admitted as specified, or no evidence: the second's errors
            // depend on what the first left.
            let answer = both(design, &probe(10, 2, max_keys, ops)).and_then(|(mine, theirs)| {
                (mine.first() == theirs.first()).then_some(())?;
                Some((mine.get(1)?.clone(), theirs.get(1)?.clone()))
            });
            (two, answer)
        })
        .collect();
    let controls = answers
        .iter()
        .filter(|(two, _)| !two)
        .all(|(_, a)| a.as_ref().is_some_and(|(m, t)| same_error(m, t)));
    let reordered = controls
        && answers.iter().filter(|(two, _)| *two).any(|(_, a)| {
            a.as_ref()
                .is_some_and(|(m, t)| error(m).is_some() && !same_error(m, t))
        });
    mutated || reordered
}

/// [`Mistake::StaleTime`]: calls older than the newest time the limiter has seen (on the same key,
/// on another key (new, or tracked before that newest call), on a new key one nanosecond older, after a cleanup, after a refused call, at a cutover, a cutover
/// with a stale version too) and calls at an equal time. Fires when the design does not refuse with
/// `TimeWentBackwards` a call the specification refuses so, or refuses so a call the specification
/// serves, the calls before it answered in kind as specified (admitted, refused, the same error: a
/// call refused as an error may not raise the observed time). Every call but the probed one is
/// valid and in order, so no input or key-bound slip reaches the answer; only the probed answer's
/// kind is compared, so a slip in balances does not either.
fn stale_time(design: Build) -> bool {
    let probes = [
        vec![allow("k", 1, SECOND), allow("k", 1, 0)],
        vec![allow("a", 1, SECOND), allow("b", 1, 0)],
        vec![allow("a", 1, SECOND), allow("b", 1, SECOND)],
        vec![allow("a", 1, SECOND), allow("b", 1, SECOND - 1)],
        vec![allow("k", 1, 0), allow("k", 1, 0)],
        vec![allow("k", 4, 100), replace(2, 10, 2, 7, 5)],
        vec![allow("k", 4, 100), replace(2, 10, 2, 1, 5)],
        vec![
            allow("k", 1, 0),
            Op::EvictFull { now: 10 * SECOND },
            allow("k", 1, 5 * SECOND),
        ],
        vec![allow("k", 1, SECOND), Op::EvictFull { now: 0 }],
        vec![
            allow("k", 9, 0),
            allow("k", 9, 100 * MS),
            allow("j", 1, 50 * MS),
        ],
        // A tracked key called again older than a later call on another key.
        vec![
            allow("a", 1, 0),
            allow("b", 1, 100 * MS),
            allow("a", 1, 50 * MS),
        ],
        vec![allow("k", 1, SECOND), replace(2, 10, 2, 1, SECOND)],
        vec![replace(2, 10, 2, 1, SECOND), allow("k", 1, 0)],
        vec![Op::EvictFull { now: SECOND }, replace(2, 10, 2, 1, 0)],
    ];
    probes.into_iter().any(|ops| {
        both(design, &small(ops)).is_some_and(|(mut mine, mut theirs)| {
            match (mine.pop(), theirs.pop()) {
                (Some(m), Some(t)) => {
                    mine.iter().zip(&theirs).all(|(m, t)| same_kind(m, t))
                        && ((time_went_backwards(&t) && !time_went_backwards(&m))
                            || (error(&t).is_none() && time_went_backwards(&m)))
                }
                _ => false,
            }
        })
    })
}

/// Whether two outcomes are of one kind: both admitted, both refused, the same error, or
/// the same other answer.
fn same_kind(a: &Outcome, b: &Outcome) -> bool {
    match (decision(a), decision(b)) {
        (Some(x), Some(y)) => x.allowed == y.allowed,
        _ => same_error(a, b) || discriminant(a) == discriminant(b) && error(a).is_none(),
    }
}

/// [`Mistake::NewKeyNotFull`], two symptoms.
///
/// - **A new key answered otherwise than an old one refilled to full.** A new key's first
///   call beside the same call on an old key idle long enough to be full again (also after a
///   cutover to a larger capacity, and at 1 s, when a bucket refilled from time 0 would not
///   be full yet; and the whole bucket followed by a token at the same instant, which a first
///   call left uncharged would admit). The specification answers both alike. Fires when the
///   old key's calls are answered as specified (the control: refill, clamp and reporting are
///   right for a full bucket) and the new key's differ from them. The two traces differ only
///   in the key of the last calls.
/// - **A fresh limiter's first call refused.** 1 token at 0, and 9 of 10 at 1 s (below the
///   capacity, so a strict comparison admits it too): a full bucket admits both.
fn new_key_not_full(design: Build) -> bool {
    let pairs = [1, 10]
        .into_iter()
        .map(|cost| (vec![allow("j", 1, 0)], vec![(cost, 100 * SECOND)]))
        .chain([1, 20].into_iter().map(|cost| {
            (
                vec![allow("j", 1, 0), replace(2, 20, 4, 1, 0)],
                vec![(cost, 100 * SECOND)],
            )
        }))
        .chain([
            (vec![allow("j", 1, 0)], vec![(10, SECOND)]),
            // The whole bucket, then a token at the same instant: the first call is charged.
            (
                vec![allow("j", 1, 0)],
                vec![(10, 100 * SECOND), (1, 100 * SECOND)],
            ),
        ]);
    // A fresh limiter's first call: 1 token at 0, 9 of 10 at 1 s (below the capacity, so a
    // strict comparison admits it too).
    let first = [(1, 0), (9, SECOND)].into_iter().any(|(cost, at)| {
        last(design, &small(vec![allow("n", cost, at)]))
            .is_some_and(|(mine, theirs)| admitted(&theirs) && refused(&mine))
    });
    first
        || pairs.into_iter().any(|(before, calls)| {
            let n = before.len();
            let then = |key| {
                let mut ops = before.clone();
                ops.extend(calls.iter().map(|&(cost, at)| allow(key, cost, at)));
                small(ops)
            };
            let (old, new) = (then("j"), then("n"));
            let control = both(design, &old).filter(|(mine, theirs)| mine == theirs);
            match (control, outcomes(design, &new)) {
                (Some((old_answers, _)), Some(new_answers)) => {
                    old_answers.get(n..) != new_answers.get(n..)
                }
                _ => false,
            }
        })
}

/// [`Mistake::DroppedFraction`], two symptoms.
///
/// - **A rejection loses (or double counts) credit.** A spent bucket refills over a second,
///   with and without a rejected call in the middle of a token: the specification stores
///   the refilled balance and the time on a rejection, so the interruption changes nothing
///   after it. Fires when it does in the design (the design compared with itself), while an
///   admitted call at a whole token (the control) leaves the design as specified: a design
///   dating its balance wrongly on every call, or refilling by windows, fails that control.
/// - **`whole_tokens` not the floor of the balance.** On the trace table's spent bucket (and on a
///   refusal with 5.5 tokens left), every call admitted or refused as specified and every
///   `retry_after_nanos` exact (which pins the balance the decision reports), but a `whole_tokens`
///   different: one more than the floor (the balance rounded, not floored), or the floor before
///   an admitted cost was deducted. A `whole_tokens` off otherwise comes from another balance,
///   not from the rounding.
/// - **The snapshot drops the fraction.** A bucket refilled part of a token, every call
///   answered exactly as specified, but the design's snapshot gives the key, at the same
///   observed time, the specification's balance without its fraction: whole tokens counted
///   in units, or the number of whole tokens itself.
/// - **A cutover drops the fraction.** 1.5 tokens at a cutover that keeps the capacity and
///   the rate, one token spent right after it as specified (so the whole token survived the
///   cutover), and the half left refused once it has refilled to a whole token, while the
///   same calls without the cutover are answered as specified.
/// - **The stored balance is rounded** ([`rounds_stored`]).
///
/// Its row in [`DETECTORS`] fires unless [`window_reset`] does: a design that admits more than
/// it earned with one key, no rejection and no cutover explains each of these comparisons too.
fn dropped_fraction(design: Build) -> bool {
    let control = small(vec![
        allow("k", 10, 0),
        allow("k", 1, 500 * MS),
        allow("k", 1, SECOND),
        allow("k", 1, SECOND),
    ]);
    let after = [allow("k", 2, SECOND), allow("k", 1, SECOND)];
    let with: Vec<Op> = [allow("k", 10, 0), allow("k", 1, 250 * MS + 1)]
        .into_iter()
        .chain(after.clone())
        .collect();
    let without: Vec<Op> = std::iter::once(allow("k", 10, 0)).chain(after).collect();
    let lost = as_specified(design, &control)
        && match (
            outcomes(design, &small(with)),
            outcomes(design, &small(without)),
        ) {
            (Some(with), Some(without)) => {
                with.get(1).is_some_and(refused) && with.get(2..) != without.get(1..)
            }
            _ => false,
        };
    let reports = [
        vec![
            allow("k", 10, 0),
            allow("k", 1, 0),
            allow("k", 1, 250 * MS),
            allow("k", 1, 250 * MS),
        ],
        vec![allow("k", 10, 0), allow("k", 1, 375 * MS)],
        vec![allow("k", 5, 0), allow("k", 6, 250 * MS)],
    ];
    let misreported = reports.into_iter().any(|ops| {
        let costs: Vec<u64> = ops
            .iter()
            .map(|op| match op {
                Op::Allow { cost, .. } => *cost,
                _ => 0,
            })
            .collect();
        both(design, &small(ops)).is_some_and(|(mine, theirs)| {
            let pairs: Option<Vec<(&Decision, &Decision)>> = mine
                .iter()
                .zip(&theirs)
                .map(|(m, t)| Some((decision(m)?, decision(t)?)))
                .collect();
            pairs.is_some_and(|pairs| {
                pairs.len() == theirs.len()
                    && pairs.iter().all(|(m, t)| {
                        m.allowed == t.allowed && m.retry_after_nanos == t.retry_after_nanos
                    })
                    && pairs.iter().any(|(m, t)| m.whole_tokens != t.whole_tokens)
                    && pairs.iter().zip(&costs).all(|((m, t), cost)| {
                        let spent = if t.allowed { *cost } else { 0 };
                        [0, 1, spent].contains(&m.whole_tokens.wrapping_sub(t.whole_tokens))
                    })
            })
        })
    });
    // The key's balance at the observed time in the design's and the specification's
    // snapshots, when every call was answered as specified and the policy and observed time
    // agree.
    let stored = |ops: Vec<Op>| {
        let p = small(ops);
        match (run(design, &p), run(spec, &p)) {
            (Some((mo, Some(ms))), Some((to, Some(ts))))
                if mo == to && (ms.policy, ms.observed_nanos) == (ts.policy, ts.observed_nanos) =>
            {
                Some((*balances(&ms).get("k")?, *balances(&ts).get("k")?))
            }
            _ => None,
        }
    };
    let unit = u128::from(UNITS_PER_TOKEN);
    // 6.5 tokens, then 7: the design reports both in one scale (units, or whole tokens),
    // the whole balance exactly and the other without its half.
    let fraction = stored(vec![allow("k", 3, 0), allow("k", 1, 250 * MS)]);
    let whole = stored(vec![allow("k", 3, 0), allow("k", 1, 500 * MS)]);
    let drops_from_snapshot = match (fraction, whole) {
        (Some((mf, tf)), Some((mw, tw))) => [1, unit]
            .into_iter()
            .any(|scale| mw * scale == tw && mf * scale == tf / unit * unit && mf * scale != tf),
        _ => false,
    };
    // 1.5 tokens at a cutover to the same capacity and rate, one spent at once, the half
    // left refilled to one.
    let cut = small(vec![
        allow("k", 10, 0),
        replace(2, 10, 2, 1, 750 * MS),
        allow("k", 1, 750 * MS),
        allow("k", 1, SECOND),
    ]);
    let uncut = small(vec![
        allow("k", 10, 0),
        allow("k", 1, 750 * MS),
        allow("k", 1, SECOND),
    ]);
    let floors_at_cutover = as_specified(design, &uncut)
        && both(design, &cut).is_some_and(|(mine, theirs)| {
            mine.get(..3) == theirs.get(..3)
                && matches!((mine.get(3), theirs.get(3)), (Some(m), Some(t)) if refused(m) && admitted(t))
        });
    lost || misreported || drops_from_snapshot || floors_at_cutover || rounds_stored(design)
}

/// A symptom of [`Mistake::DroppedFraction`]: the stored balance is rounded. The seed's change
/// exercise with room for a second token (capacity 2 at 3 tokens/s, both spent): one token is
/// back at 333333334 ns, and not one nanosecond earlier. A design that rounds what it stores
/// (a full-at time kept in whole nanoseconds, a refill rounded up) admits one at 333333333,
/// though its bucket is not full again, and only there: at 333333332 it
/// refuses as specified (whatever retry it estimates from its rounded balance), so the credit
/// it invents is less than a nanosecond of refill; and
/// the seed's trace table at 2 tokens/s, where every refill is whole units, is answered as
/// specified. Such a design's retry is one nanosecond short too, but it is the balance the
/// design admits by that is wrong, not the estimate: [`retry_estimate`]'s row gives way to it.
fn rounds_stored(design: Build) -> bool {
    let control = small(vec![
        allow("k", 10, 0),
        allow("k", 1, 250 * MS),
        allow("k", 1, 500 * MS),
        allow("k", 1, 500 * MS),
    ]);
    let exercise = |at: u64| probe(2, 3, 8, vec![allow("k", 2, 0), allow("k", 1, at)]);
    // Refused a nanosecond earlier, as specified (its retry, one nanosecond short, aside).
    let refused_before = both(design, &exercise(333_333_332)).is_some_and(|(mine, theirs)| {
        mine.first() == theirs.first()
            && mine.get(1).is_some_and(refused)
            && theirs.get(1).is_some_and(refused)
    });
    as_specified(design, &control)
        && refused_before
        && grants_more_on(design, &exercise(333_333_333))
}

/// [`Mistake::RetryEstimate`], two symptoms (others: [`saturates_missing`],
/// [`truncates_wait`]).
///
/// - **Off where no refill is involved.** `retry_after_nanos` right after a spend at the
///   same instant (no time elapsed, so no refill slip can reach the balance it is computed
///   from), with and without credit left, an inexact division, an admission, a full bucket,
///   the largest capacity at rate 1 (a wait beyond `MAX_QUANTITY` nanoseconds, which
///   saturates there) and a wait below it that an `f64` cannot hold. Fires when the first
///   call the design answers otherwise than the specification is admitted or refused as specified with the same `whole_tokens` but
///   another `retry_after_nanos`, or is refused with a retry of 0 (which promises admission
///   now, and the specification never returns).
/// - **Off from a fractional balance.** A spent bucket asked for a token part-way through
///   its refill: the design refuses it as specified, and its own later admissions bracket
///   the specification's retry (the same request passes at `now + retry` and not one
///   nanosecond earlier, so the design's balance grows exactly as specified), yet it
///   estimates another retry. The estimate disagrees with the design's own refill: the
///   formula is at fault, not the balance.
fn retry_estimate(design: Build) -> bool {
    let probes = [
        small(vec![allow("k", 10, 0), allow("k", 1, 0)]),
        small(vec![allow("k", 9, 0), allow("k", 3, 0)]),
        small(vec![allow("k", 4, 0), allow("k", 6, 0)]),
        small(vec![allow("k", 10, 0)]),
        probe(1, 3, 8, vec![allow("k", 1, 0), allow("k", 1, 0)]),
        // 1 token left, 4 asked at rate 3: neither 4 × 10⁹ nor the balance divides by 3.
        probe(4, 3, 8, vec![allow("k", 3, 0), allow("k", 4, 0)]),
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 4, 1, 0),
            allow("k", 1, 0),
        ]),
        small(vec![
            allow("k", 9, 0),
            replace(2, 10, 4, 1, 0),
            allow("k", 1, 0),
        ]),
        spent_at_largest(),
        // A wait of 3333333333333333334 ns: below `MAX_QUANTITY`, beyond what an `f64` holds.
        probe(
            10_000_000_000,
            3,
            8,
            vec![allow("k", 10_000_000_000, 0), allow("k", 10_000_000_000, 0)],
        ),
    ];
    let at_once = probes.iter().any(|p| {
        both(design, p).is_some_and(|(mine, theirs)| {
            let first = mine.iter().zip(&theirs).find(|(m, t)| m != t);
            match first.map(|(m, t)| (decision(m), decision(t))) {
                Some((Some(m), Some(t))) => {
                    (m.allowed == t.allowed
                        && m.whole_tokens == t.whole_tokens
                        && m.retry_after_nanos != t.retry_after_nanos)
                        || (!m.allowed && m.retry_after_nanos == 0)
                }
                _ => false,
            }
        })
    });
    // (capacity, rate, spent at 0, cost asked, asked at)
    let partial = [
        (10, 2, 10, 1, 250 * MS),
        (10, 2, 10, 3, 375 * MS),
        (1, 3, 1, 1, 100 * MS),
    ];
    let from_fraction = partial
        .into_iter()
        .any(|(capacity, rate, spent, cost, at)| {
            let ops = |then: Option<u64>| {
                let mut ops = vec![allow("k", spent, 0), allow("k", cost, at)];
                ops.extend(then.map(|t| allow("k", cost, t)));
                probe(capacity, rate, 8, ops)
            };
            let Some((mine, theirs)) = both(design, &ops(None)) else {
                return false;
            };
            let (Some(m), Some(t)) = (
                mine.get(1).and_then(decision),
                theirs.get(1).and_then(decision),
            ) else {
                return false;
            };
            let due = at.saturating_add(t.retry_after_nanos);
            let brackets = !t.allowed
                && t.retry_after_nanos > 0
                && last(design, &ops(Some(due - 1)))
                    .is_some_and(|(m, t)| refused(&m) && refused(&t))
                && last(design, &ops(Some(due))).is_some_and(|(m, t)| admitted(&m) && admitted(&t));
            mine.first() == theirs.first()
                && brackets
                && !m.allowed
                && m.whole_tokens == t.whole_tokens
                && m.retry_after_nanos != t.retry_after_nanos
        });
    at_once || from_fraction
}

/// The other symptom of [`Mistake::RetryEstimate`]: the retry saturated before the division.
/// A spent bucket of more than `MAX_QUANTITY` units (10¹⁰ tokens, and `MAX_QUANTITY` tokens)
/// asked for its whole capacity again at once, at 2 and 3 tokens/s: the specification waits
/// ⌈missing / rate⌉ (5 × 10¹⁸ ns, or `MAX_QUANTITY` saturated); a design that caps the
/// missing units at `MAX_QUANTITY` and then divides answers exactly ⌈`MAX_QUANTITY` / rate⌉,
/// shorter, with the admission and `whole_tokens` as specified. A product that overflows
/// wraps to some other number ([`unchecked_fixed_point`], whose row gives way to this one).
fn saturates_missing(design: Build) -> bool {
    [(10_000_000_000, 2), (MAX_QUANTITY, 2), (MAX_QUANTITY, 3)]
        .into_iter()
        .any(|(capacity, rate)| {
            let p = probe(
                capacity,
                rate,
                8,
                vec![allow("k", capacity, 0), allow("k", capacity, 0)],
            );
            both(design, &p).is_some_and(|(mine, theirs)| {
                mine.first() == theirs.first()
                    && match (
                        mine.get(1).and_then(decision),
                        theirs.get(1).and_then(decision),
                    ) {
                        (Some(m), Some(t)) => {
                            !m.allowed
                                && !t.allowed
                                && m.whole_tokens == t.whole_tokens
                                && m.retry_after_nanos == MAX_QUANTITY.div_ceil(rate)
                                && m.retry_after_nanos < t.retry_after_nanos
                        }
                        _ => false,
                    }
            })
        })
}

/// A symptom of [`Mistake::RetryEstimate`]: the wait cut to 64 bits before it saturates. The
/// largest capacity at 3 tokens/s spent at once, then 8 × 10¹⁰ tokens asked: the wait,
/// ⌈8 × 10¹⁹ / 3⌉ ns, is beyond `u64`, and the specification saturates it at `MAX_QUANTITY`.
/// Fires when the design refuses with the first call as specified and a retry of exactly that
/// wait modulo 2⁶⁴ (8219922592957115051 ns): the exact wait, cast before it was capped. A
/// product that wraps before the division (the fixed point's mistake) gives another number
/// here, ⌈(8 × 10¹⁹ mod 2⁶⁴) / 3⌉ ns.
fn truncates_wait(design: Build) -> bool {
    let (cost, rate) = (80_000_000_000, 3);
    let p = probe(
        MAX_QUANTITY,
        rate,
        8,
        vec![allow("k", MAX_QUANTITY, 0), allow("k", cost, 0)],
    );
    let wait = (u128::from(cost) * u128::from(UNITS_PER_TOKEN)).div_ceil(u128::from(rate));
    // The low 64 bits, as `as u64` keeps them.
    let cut = u64::try_from(wait % (1u128 << 64)).unwrap_or(u64::MAX);
    both(design, &p).is_some_and(|(mine, theirs)| {
        mine.first() == theirs.first()
            && matches!((mine.get(1).and_then(decision), theirs.get(1).and_then(decision)),
                (Some(m), Some(t)) if !m.allowed && !t.allowed && m.retry_after_nanos == cut
                    && t.retry_after_nanos != cut)
    })
}

/// [`Mistake::WindowReset`]: one key, calls in time order, every call before the last
/// admitted by the specification: a spend across a second's boundary, a whole bucket again a
/// second after it was spent (two tokens earned), a spend after a long idle time (also from a
/// bucket left half full: the refill stops at the capacity, not at what was spent), a refill of
/// half a token after a refill of one, a whole bucket twice at once, and the seed's change
/// exercise (capacity 1, 3 tokens/s: the token is back at 333333334 ns, not a nanosecond
/// earlier; unless the design also admits a nanosecond early while its bucket is still
/// filling, [`rounds_stored`]). Fires when the first call the design admits or refuses otherwise is one it admits and
/// the specification refuses: more than the bucket's capacity plus what it earned passes. No
/// rejection, cutover, eviction, second key or error comes before it, so only the refill and
/// the admission can be at fault. Also fires when a rejection restores the whole burst: a spent
/// bucket refused one token (answered as specified), then asked for its whole capacity at the
/// same instant, at 0 and at 100 ms (0.2 tokens earned), and admitted. A rejection that only
/// keeps credit it should have stored (the dropped fraction's symptom) restores no whole bucket.
fn window_reset(design: Build) -> bool {
    let probes = [
        small(vec![allow("k", 10, SECOND - 1), allow("k", 10, SECOND)]),
        small(vec![allow("k", 10, 0), allow("k", 10, SECOND)]),
        small(vec![
            allow("k", 1, 0),
            allow("k", 10, 60 * SECOND),
            allow("k", 10, 60 * SECOND),
        ]),
        // Half the bucket left, then a minute idle: the capacity passes, and no more.
        small(vec![
            allow("k", 5, 0),
            allow("k", 10, 60 * SECOND),
            allow("k", 5, 60 * SECOND),
        ]),
        small(vec![
            allow("k", 10, 0),
            allow("k", 1, 500 * MS),
            allow("k", 1, 750 * MS),
        ]),
        small(vec![allow("k", 10, 0), allow("k", 10, 0)]),
    ];
    // The seed's change exercise, where the whole bucket (one token) comes back: early there
    // is the window's only when a token is not early as well while the bucket is still
    // filling (a stored balance rounded on every spend: [`rounds_stored`]).
    let exercise = probe(1, 3, 8, vec![allow("k", 1, 0), allow("k", 1, 333_333_333)]);
    let after_rejection = [0, 100 * MS].into_iter().any(|later| {
        let p = small(vec![
            allow("k", 10, 0),
            allow("k", 1, later),
            allow("k", 10, later),
        ]);
        both(design, &p).is_some_and(|(mine, theirs)| {
            mine.get(..2) == theirs.get(..2)
                && mine.get(2).is_some_and(admitted)
                && theirs.get(2).is_some_and(refused)
        })
    });
    let more_than_earned = |p: &Probe| {
        both(design, p).is_some_and(|(mine, theirs)| {
            let at = mine
                .iter()
                .zip(&theirs)
                .position(|(m, t)| admitted(m) != admitted(t) || decision(m).is_none());
            at.is_some_and(|at| {
                theirs[..at].iter().all(admitted)
                    && mine.get(at).is_some_and(admitted)
                    && theirs.get(at).is_some_and(refused)
            })
        })
    };
    after_rejection
        || probes.iter().any(more_than_earned)
        || (more_than_earned(&exercise) && !rounds_stored(design))
        || loses_credit(design)
}

/// The other face of [`Mistake::WindowReset`]: a refill that loses what the bucket held or
/// earned. Half the bucket spent at 0, a token a second later (two whole tokens earned, so no
/// fraction is involved), then 5 of the 6 tokens left: the specification admits all three.
/// Fires when the design answers the first as specified, admits the second (whatever balance
/// it reports) and refuses the third (it has
/// less than the stored balance plus what it earned: a refill that keeps only what was earned,
/// or one skipped while the stored balance covers the cost but dated now). No rejection,
/// cutover, eviction, second key or error comes first, and the last cost is below the balance
/// (a strict comparison admits it too), so only the refill can be at fault.
fn loses_credit(design: Build) -> bool {
    let p = small(vec![
        allow("k", 5, 0),
        allow("k", 1, SECOND),
        allow("k", 5, SECOND),
    ]);
    both(design, &p).is_some_and(|(mine, theirs)| {
        mine.first() == theirs.first()
            && theirs.iter().all(admitted)
            && mine.get(1).is_some_and(admitted)
            && mine.get(2).is_some_and(refused)
    })
}

/// [`Mistake::IdleEviction`]: `evict_full` on one key, spent at 0 (also before a cutover at 0
/// to a larger capacity, after which fullness is the new policy's, and before a cutover at the
/// sweep's own instant, which judges fullness as any other, to the same policy and to a rate
/// ten times higher (the time before it earns at the old rate), and beside a spent key that
/// comes first in key order; and at 3 tokens/s, where the capacity takes no whole number of
/// seconds to come back, at 3 s and a nanosecond before it is back), beside a
/// whole-capacity request on that key at the sweep's instant: a bucket is full exactly when such a request would
/// pass. Fires when the design answers that request as the specification does, admitted or
/// not with the same `whole_tokens` (the control: its refill to that instant is right, a
/// bucket never reads above its capacity, and so is the first spend) yet removes the
/// key where the specification keeps it, or keeps it where the specification removes it;
/// a new key's whole-capacity request must pass and a spent key's must not (the design's
/// admission is a fair measure of fullness). A refill slip that shows in the request fails
/// the control; what is left is the sweep's own judgement of fullness. Also fires when a new
/// key at the bound is served, the calls before it answered as specified, and a spent key is
/// gone from the design's snapshot: evicted under memory pressure, whatever its balance; when
/// `allow` drops a bucket it spent ([`drops_spent`]); and when a sweep keeps full buckets
/// ([`keeps_full`]).
fn idle_eviction(design: Build) -> bool {
    let controls = [
        small(vec![allow("n", 10, 0)]),
        small(vec![allow("n", 1, 0), allow("n", 10, 0)]),
    ];
    let fair = controls.iter().all(|p| {
        last(design, p).is_some_and(|(mine, theirs)| admitted(&mine) == admitted(&theirs))
    });
    // (calls before the sweep, the whole capacity then, the sweep's time): a key spent at 0,
    // also after a cutover at 0 to a larger capacity (fullness is then the new policy's).
    let cutover = |spent| vec![allow("k", spent, 0), replace(2, 20, 2, 1, 0)];
    // (rate, calls before the sweep, the whole capacity then, the sweep's time)
    let cases = [
        (2, vec![allow("k", 10, 0)], 10, SECOND),
        (2, vec![allow("k", 1, 0)], 10, 250 * MS),
        (2, vec![allow("k", 1, 0)], 10, 10 * SECOND),
        (2, vec![allow("k", 10, 0)], 10, 1),
        (2, vec![allow("k", 1, 0)], 10, 500 * MS),
        (2, cutover(1), 20, SECOND),
        (2, cutover(1), 20, 10 * SECOND),
        // At the instant of a cutover to a higher rate half a second after the spend: the
        // half second earned at the old rate (one token), so not full.
        (
            2,
            vec![allow("k", 2, 0), replace(2, 10, 20, 1, 500 * MS)],
            10,
            500 * MS,
        ),
        // At the instant a cutover raised the observed time to: a bucket full then is full.
        (
            2,
            vec![allow("k", 1, 0), replace(2, 10, 2, 1, 10 * SECOND)],
            10,
            10 * SECOND,
        ),
        // Beside a spent key that stays (and comes first in key order).
        (2, vec![allow("a", 10, 0), allow("k", 1, 0)], 10, 500 * MS),
        // At 3 tokens/s the whole capacity takes 3⅓ s to come back: at 3 s it has not, nor
        // a nanosecond before 3333333334 ns.
        (3, vec![allow("k", 10, 0)], 10, 3 * SECOND),
        (3, vec![allow("k", 10, 0)], 10, 3_333_333_333),
    ];
    // Whether a sweep removed one key (consistently with the key count after it: one fewer
    // than the keys the calls before it made).
    let removed = |o: &[Outcome], at: usize, held: usize| match (o.get(at), o.get(at + 1)) {
        (Some(Outcome::Evicted { removed }), Some(Outcome::KeyCount { keys }))
            if (*removed == 1) == (*keys + 1 == held) =>
        {
            Some(*removed == 1)
        }
        _ => None,
    };
    makes_room(design)
        || drops_spent(design)
        || (fair && keeps_full(design))
        || fair
            && cases.into_iter().any(|(rate, before, capacity, at)| {
                let n = before.len();
                let held = before
                    .iter()
                    .filter_map(|op| match op {
                        Op::Allow { key, .. } => Some(key.as_str()),
                        _ => None,
                    })
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                let then =
                    |ops: &[Op]| probe(10, rate, 8, before.iter().chain(ops).cloned().collect());
                let sweep = then(&[Op::EvictFull { now: at }, Op::KeyCount]);
                let full = then(&[allow("k", capacity, at)]);
                let refill_right = both(design, &full).is_some_and(|(mine, theirs)| {
                    let read = |o: Option<&Outcome>| {
                        o.and_then(decision).map(|d| (d.allowed, d.whole_tokens))
                    };
                    mine.get(..n) == theirs.get(..n)
                        && read(mine.get(n)).is_some()
                        && read(mine.get(n)) == read(theirs.get(n))
                });
                let holds = run(design, &sweep)
                    .and_then(|(_, snapshot)| snapshot)
                    .map(|s| s.buckets.contains_key("k"));
                refill_right && both(design, &sweep).is_some_and(|(mine, theirs)| {
                    let m = removed(&mine, n, held);
                    mine.get(..n) == theirs.get(..n)
                        && holds.is_none_or(|holds| m == Some(!holds))
                        && matches!((m, removed(&theirs, n, held)), (Some(m), Some(t)) if m != t)
                })
            })
}

/// A symptom of [`Mistake::IdleEviction`]: `allow` drops a bucket it spent. One token on a
/// fresh limiter is held as specified (the key count says 1), but the whole bucket spent at
/// once leaves the design counting fewer keys than the specification: the spent bucket was
/// dropped (and its key comes back full). A design that holds no key at all is the key
/// bound's ([`holds_no_key`]).
fn drops_spent(design: Build) -> bool {
    let held = as_specified(design, &small(vec![allow("k", 1, 0), Op::KeyCount]));
    held && both(design, &small(vec![allow("k", 10, 0), Op::KeyCount])).is_some_and(
        |(mine, theirs)| {
            mine.first() == theirs.first()
                && matches!((mine.get(1), theirs.get(1)),
                    (Some(Outcome::KeyCount { keys: m }), Some(Outcome::KeyCount { keys: t })) if m < t)
        },
    )
}

/// A symptom of [`Mistake::IdleEviction`]: a sweep that keeps full buckets. Eight keys ("a" to
/// "h", spread over any small number of shards a design hashes keys into) each spend a token
/// at 0; ten seconds later every bucket is full, and the specification's sweep removes all
/// eight; also when "k" spends a token at the sweep's instant (it stays: the sweep must refill
/// each bucket from its own last call, not from the limiter's). Fires when each bucket answers
/// a whole-capacity request then as specified (the control: it reads full, not more), the
/// calls before are answered as specified and the design removes fewer, consistently (its key
/// count and its snapshot hold what it did not remove, so the count is not at fault): some
/// full bucket stayed.
fn keeps_full(design: Build) -> bool {
    // "a" to "h": the spread keys but "k".
    let keys = &SPREAD[1..];
    // The control: each bucket reads full then (a whole-capacity request leaves 0 tokens).
    let read_full: Vec<Op> = keys
        .iter()
        .map(|k| allow(k, 1, 0))
        .chain(keys.iter().map(|k| allow(k, 10, 10 * SECOND)))
        .collect();
    if !as_specified(design, &small(read_full)) {
        return false;
    }
    [vec![], vec![allow("k", 1, 10 * SECOND)]]
        .into_iter()
        .any(|late| {
            let ops: Vec<Op> = keys
                .iter()
                .map(|k| allow(k, 1, 0))
                .chain(late)
                .chain([Op::EvictFull { now: 10 * SECOND }, Op::KeyCount])
                .collect();
            let n = ops.len() - 2;
            // Room for every key.
            let p = probe(10, 2, 16, ops);
            let (Some((mine, snapshot)), Some(theirs)) = (run(design, &p), outcomes(spec, &p))
            else {
                return false;
            };
            let held = snapshot.map(|s| s.buckets.len());
            mine.get(..n) == theirs.get(..n)
                && matches!(
                    (mine.get(n), mine.get(n + 1), theirs.get(n)),
                    (
                        Some(Outcome::Evicted { removed }),
                        Some(Outcome::KeyCount { keys: left }),
                        Some(Outcome::Evicted { removed: all }),
                    ) if removed < all && removed + left == n && held == Some(*left)
                )
        })
}

/// A symptom of [`Mistake::UntrackedKeys`]: no key is held. One token on a fresh limiter,
/// admitted as specified, and the key count: the design counts none.
fn holds_no_key(design: Build) -> bool {
    both(design, &small(vec![allow("k", 1, 0), Op::KeyCount])).is_some_and(|(mine, theirs)| {
        mine.first() == theirs.first()
            && theirs.first().is_some_and(admitted)
            && matches!(mine.get(1), Some(Outcome::KeyCount { keys: 0 }))
    })
}

/// A symptom of [`Mistake::DroppedFraction`] (its hint: store the state on every call): a
/// spend left unstored. Two tokens, then three three times, at one instant from a bucket of
/// ten: the specification admits three calls and refuses the fourth. Fires when the first two
/// are answered as specified (the second reports the balance the first left: the first spend
/// was charged, and no refill gave anything back at the same instant), the fourth is
/// admitted, and the design's snapshot still holds what the first call left (8 tokens): the
/// key was stored once and never updated. A design that stores each admission, but from the
/// wrong balance, keeps another state and is the refill's. A design that holds no key at all
/// is the key bound's ([`holds_no_key`]).
fn unstored_spend(design: Build) -> bool {
    let p = small(vec![
        allow("k", 2, 0),
        allow("k", 3, 0),
        allow("k", 3, 0),
        allow("k", 3, 0),
    ]);
    let (Some((mine, snapshot)), Some(theirs)) = (run(design, &p), outcomes(spec, &p)) else {
        return false;
    };
    let first_kept =
        snapshot.is_some_and(|s| balances(&s).get("k") == Some(&(8 * u128::from(UNITS_PER_TOKEN))));
    first_kept
        && mine.get(..2) == theirs.get(..2)
        && theirs.get(3).is_some_and(refused)
        && mine.get(3).is_some_and(admitted)
}

/// [`Mistake::UntrackedKeys`]: the key bound kept wrong. Fires when the design builds a
/// limiter with a key bound of 0 ([`builds_unbounded`]), answers a call at the bound otherwise
/// ([`answers_otherwise_at_bound`]), counts two held keys otherwise ([`miscounts_held`]),
/// counts a key a sweep removed or still serves it ([`counts_removed`], [`counts_swept`],
/// [`serves_swept`]), counts otherwise after a
/// cutover ([`counts_across_cutover`]) or serves a new key by dropping a full bucket
/// ([`drops_full_to_make_room`]).
fn untracked_keys(design: Build) -> bool {
    holds_no_key(design)
        || builds_unbounded(design)
        || answers_otherwise_at_bound(design)
        || counts_swept(design)
        || serves_swept(design)
        || miscounts_held(design)
        || counts_removed(design)
        || counts_across_cutover(design)
        || drops_full_to_make_room(design)
}

/// A cutover that keeps the tracked key's bucket (a spend after it at the same instant
/// answered as specified), and the key count: whether the design counts otherwise. A
/// cutover keeps every key; the count is the buckets held.
fn counts_across_cutover(design: Build) -> bool {
    both(
        design,
        &small(vec![
            allow("k", 1, 0),
            replace(2, 10, 2, 1, 0),
            allow("k", 10, 0),
            Op::KeyCount,
        ]),
    )
    .is_some_and(|(mine, theirs)| {
        mine.get(..3) == theirs.get(..3)
            && matches!((mine.get(3), theirs.get(3)),
                (Some(Outcome::KeyCount { keys: m }), Some(Outcome::KeyCount { keys: t })) if m != t)
    })
}

/// Whether the design builds a limiter with a key bound of 0 (the specification refuses to).
fn builds_unbounded(design: Build) -> bool {
    Policy::new(1, 10, 2).is_ok_and(|policy| {
        catch_unwind(AssertUnwindSafe(|| design(policy, 0).is_ok())).unwrap_or(false)
    })
}

/// Calls at the bound: a new key (the specification refuses it with `KeyCapacityReached`)
/// and a tracked key (the specification serves it). Whether the design serves the new key
/// while it keeps every tracked key (a spent one it drops to make room is [`idle_eviction`]'s;
/// a full one it drops is still a key beyond the bound), counts more keys than the bound
/// after serving one beyond it, or refuses the tracked key with `KeyCapacityReached` (also once
/// it has refilled to full: it is still tracked), also after a cutover that kept the tracked
/// key. Every other call is at the same time, so no time slip reaches the answer.
fn answers_otherwise_at_bound(design: Build) -> bool {
    let at_bound = [
        (1, vec![allow("a", 1, 0), allow("b", 1, 0)]),
        (
            2,
            vec![allow("a", 1, 0), allow("b", 1, 0), allow("c", 1, 0)],
        ),
        (1, vec![allow("a", 1, 0), allow("b", 1, 0), Op::KeyCount]),
        (1, vec![allow("a", 1, 0), allow("a", 1, 0)]),
        (
            2,
            vec![allow("a", 1, 0), allow("b", 1, 0), allow("a", 1, 0)],
        ),
        // A tracked key refilled to full is still tracked.
        (1, vec![allow("a", 1, 0), allow("a", 1, 10 * SECOND)]),
        // A cutover keeps every key: each still counts against the bound.
        (
            1,
            vec![allow("a", 1, 0), replace(2, 10, 2, 1, 0), allow("b", 1, 0)],
        ),
    ];
    at_bound.into_iter().any(|(max_keys, ops)| {
        let p = probe(10, 2, max_keys, ops);
        last(design, &p).is_some_and(|(mine, theirs)| match (&mine, &theirs) {
            (Outcome::KeyCount { keys }, Outcome::KeyCount { .. }) => {
                *keys > max_keys && served_beyond(design, &p)
            }
            _ => {
                (matches!(
                    theirs,
                    Outcome::Error(LimitError::KeyCapacityReached { .. })
                ) && decision(&mine).is_some()
                    && !drops_a_key(design, &p))
                    || (decision(&theirs).is_some() && key_capacity_reached(&mine))
            }
        })
    })
}

/// Two keys held, one of them full again at the observed time, and the key count: whether
/// the design counts them otherwise (every bucket held counts, full or not).
fn miscounts_held(design: Build) -> bool {
    both(
        design,
        &probe(
            10,
            2,
            8,
            vec![allow("a", 1, 0), allow("b", 1, 10 * SECOND), Op::KeyCount],
        ),
    )
    .is_some_and(|(mine, theirs)| {
        mine.get(..2) == theirs.get(..2)
            && matches!((mine.get(2), theirs.get(2)),
                (Some(Outcome::KeyCount { keys: m }), Some(Outcome::KeyCount { keys: t })) if m != t)
    })
}

/// A sweep that removed the only key as specified (the snapshot holds none; the sweep comes
/// long after the key's last spend, so any refill leaves it full), and a key count after it:
/// whether the design's count says otherwise.
fn counts_removed(design: Build) -> bool {
    let sweep = probe(
        10,
        2,
        1,
        vec![
            allow("a", 1, 0),
            Op::EvictFull { now: 10 * SECOND },
            Op::KeyCount,
        ],
    );
    match (run(design, &sweep), run(spec, &sweep)) {
        (Some((mine, Some(ms))), Some((theirs, Some(ts)))) => {
            ms.buckets.is_empty()
                && ts.buckets.is_empty()
                && mine.first() == theirs.first()
                && mine.get(2) != theirs.get(2)
        }
        _ => false,
    }
}

/// The same sweep answered as specified, then the key count or a new key (the bound has room
/// again): whether the design counts more keys than are left or refuses the new key with
/// `KeyCapacityReached`.
fn counts_swept(design: Build) -> bool {
    let swept = [Op::KeyCount, allow("b", 1, 10 * SECOND)];
    swept.into_iter().any(|after| {
        let ops = vec![allow("a", 1, 0), Op::EvictFull { now: 10 * SECOND }, after];
        both(design, &probe(10, 2, 1, ops)).is_some_and(|(mine, theirs)| {
            mine.get(..2) == theirs.get(..2)
                && match (mine.get(2), theirs.get(2)) {
                    (Some(Outcome::KeyCount { keys: m }), Some(Outcome::KeyCount { keys: t })) => {
                        m > t
                    }
                    (Some(m), Some(t)) => admitted(t) && key_capacity_reached(m),
                    _ => false,
                }
        })
    })
}

/// The same sweep answered as specified, then a new key that fills the bound again: whether
/// the design still serves the swept key (it kept the bucket it no longer counts; the
/// specification refuses it with `KeyCapacityReached`) while it keeps the new key too (one
/// that drops a key to make room is [`idle_eviction`]'s).
fn serves_swept(design: Build) -> bool {
    let ops = vec![
        allow("a", 1, 0),
        Op::EvictFull { now: 10 * SECOND },
        allow("b", 1, 10 * SECOND),
        allow("a", 1, 10 * SECOND),
    ];
    let p = probe(10, 2, 1, ops.clone());
    grants_a_new_key(design, 1, ops) && !drops_a_key(design, &p)
}

/// Whether the design serves a new key at the bound by dropping a full bucket: equivalent
/// to keeping it, but the new key is still one beyond the bound (unless the design drops
/// spent buckets too: the idle eviction's symptom, [`makes_room`]).
fn drops_full_to_make_room(design: Build) -> bool {
    grants_a_new_key(
        design,
        1,
        vec![allow("a", 1, 0), allow("b", 1, 10 * SECOND)],
    ) && !makes_room(design)
}

/// Whether the design serves the last call of a probe (a new key at the bound) where the
/// specification refuses it with `KeyCapacityReached`, every call before answered as
/// specified.
fn grants_a_new_key(design: Build, max_keys: usize, ops: Vec<Op>) -> bool {
    both(design, &probe(10, 2, max_keys, ops)).is_some_and(|(mut mine, mut theirs)| {
        match (mine.pop(), theirs.pop()) {
            (Some(m), Some(t)) => mine == theirs && admitted(&m) && key_capacity_reached(&t),
            _ => false,
        }
    })
}

/// Whether some call of a probe that the specification refuses with `KeyCapacityReached` is
/// served by the design.
fn served_beyond(design: Build, p: &Probe) -> bool {
    both(design, p).is_some_and(|(mine, theirs)| {
        mine.iter()
            .zip(&theirs)
            .any(|(m, t)| key_capacity_reached(t) && decision(m).is_some())
    })
}

/// Whether the design serves a new key at the bound by dropping a spent bucket (the calls
/// before answered as specified).
fn makes_room(design: Build) -> bool {
    [
        (1, vec![allow("a", 10, 0), allow("b", 1, 0)]),
        (
            2,
            vec![allow("a", 10, 0), allow("b", 10, 0), allow("c", 1, 0)],
        ),
    ]
    .into_iter()
    .any(|(max_keys, ops)| {
        let p = probe(10, 2, max_keys, ops.clone());
        grants_a_new_key(design, max_keys, ops) && drops_a_key(design, &p)
    })
}

/// Whether the design's snapshot after a probe lacks a key the specification's holds.
fn drops_a_key(design: Build, p: &Probe) -> bool {
    match (run(design, p), run(spec, p)) {
        (Some((_, Some(mine))), Some((_, Some(theirs)))) => {
            theirs.buckets.keys().any(|k| !mine.buckets.contains_key(k))
        }
        _ => false,
    }
}

fn key_capacity_reached(o: &Outcome) -> bool {
    matches!(o, Outcome::Error(LimitError::KeyCapacityReached { .. }))
}

/// [`Mistake::UnguardedVersion`]: policy replacements, all at time 0, with an expected
/// version that is not the current one (also 0 and `u64::MAX`), or a next version not above it, and valid ones (a
/// version skipped). Fires when the design replaces the policy where the specification
/// refuses with `StalePolicyVersion`, or refuses so a replacement the specification makes,
/// after the calls before it published the policy the specification holds (as far as the
/// design's snapshot shows).
fn unguarded_version(design: Build) -> bool {
    // Also with a tracked key, whose bucket a lazy design keeps under the first policy.
    let probes = [
        vec![replace(2, 10, 2, 1, 0), replace(3, 10, 2, 1, 0)],
        vec![replace(1, 10, 2, 1, 0)],
        vec![replace(2, 10, 2, 1, 0), replace(2, 10, 2, 2, 0)],
        vec![replace(2, 10, 2, 5, 0)],
        // A next version below the current one.
        vec![replace(3, 10, 2, 1, 0), replace(2, 10, 2, 3, 0)],
        // Expected versions a design may take for "any version".
        vec![replace(2, 10, 2, 0, 0)],
        vec![replace(2, 10, 2, u64::MAX, 0)],
        vec![
            allow("k", 1, 0),
            replace(2, 10, 2, 1, 0),
            replace(3, 10, 2, 1, 0),
        ],
    ];
    let valid = [
        vec![replace(3, 10, 2, 1, 0)],
        vec![replace(2, 10, 2, 1, 0), replace(9, 10, 2, 2, 0)],
        vec![
            allow("k", 1, 0),
            replace(2, 10, 2, 1, 0),
            replace(3, 10, 2, 2, 0),
        ],
    ];
    // The calls before the last one published the policy the specification holds (as far
    // as the design's snapshot shows): a replacement never published, not the guard,
    // explains the last one's answer otherwise.
    let published = |ops: &[Op]| {
        let before = small(ops[..ops.len().saturating_sub(1)].to_vec());
        match (run(design, &before), run(spec, &before)) {
            (Some((_, Some(mine))), Some((_, Some(theirs)))) => mine.policy == theirs.policy,
            _ => true,
        }
    };
    let refuses_valid = valid.into_iter().any(|ops| {
        published(&ops)
            && last(design, &small(ops)).is_some_and(|(mine, theirs)| {
                theirs == Outcome::Replaced
                    && matches!(mine, Outcome::Error(LimitError::StalePolicyVersion { .. }))
            })
    });
    refuses_valid
        || probes.into_iter().any(|ops| {
            published(&ops)
                && last(design, &small(ops)).is_some_and(|(mine, theirs)| {
                    mine == Outcome::Replaced
                        && matches!(
                            theirs,
                            Outcome::Error(LimitError::StalePolicyVersion { .. })
                        )
                })
        })
}

/// Whether the design refuses a whole-capacity request on a key that spent a token at the
/// same instant, at each capacity the cutover probes use: without a cutover, it cannot
/// grant more than the bucket holds (a control for the cutover symptoms below).
fn refuses_more_than_held(design: Build) -> bool {
    [5, 10, 20, 100].into_iter().all(|capacity| {
        let p = probe(
            capacity,
            2,
            8,
            vec![allow("k", 1, 0), allow("k", capacity, 0)],
        );
        last(design, &p).is_some_and(|(mine, _)| refused(&mine))
    })
}

/// Whether the design answers every call but the last as the specification does, and
/// admits the last where the specification refuses it (on a [`small`] probe).
fn grants_more(design: Build, ops: Vec<Op>) -> bool {
    grants_more_on(design, &small(ops))
}

/// [`grants_more`] on any probe.
fn grants_more_on(design: Build, p: &Probe) -> bool {
    both(design, p).is_some_and(|(mut mine, mut theirs)| match (mine.pop(), theirs.pop()) {
        (Some(m), Some(t)) => mine == theirs && admitted(&m) && refused(&t),
        _ => false,
    })
}

/// Whether the key count after a cutover (step 3) is below the design's own count before it
/// (step 1) and below the specification's: a count that is wrong all along is not the
/// cutover's doing.
fn dropped_at_cutover(mine: &[Outcome], theirs: &[Outcome]) -> bool {
    match (mine.get(1), mine.get(3), theirs.get(3)) {
        (
            Some(Outcome::KeyCount { keys: before }),
            Some(Outcome::KeyCount { keys: after }),
            Some(Outcome::KeyCount { keys: t }),
        ) => after < before && after < t,
        _ => false,
    }
}

/// The symptom of [`Mistake::BudgetReset`]: a cutover forgets a spent key. The design counts
/// fewer keys after the cutover than before, and than specified ([`dropped_at_cutover`]), and
/// the key spends again at the cutover's instant (the cutover keeps the limits, or changes only
/// the rate, or only the capacity). A count that drops while a spent bucket stays is the key
/// bound's ([`counts_across_cutover`]; the row in [`DETECTORS`] gives way to it). Or a cutover to
/// a smaller capacity, or to the same limits a minute in, lets a spent key spend more than it
/// had (its calls before answered as specified; while without a cutover it does not:
/// [`refuses_more_than_held`]).
fn resets_budgets(design: Build) -> bool {
    let spent = [(10, 2), (10, 4), (20, 2)]
        .into_iter()
        .any(|(capacity, rate)| {
            let ops = vec![
                allow("k", 10, 0),
                Op::KeyCount,
                replace(2, capacity, rate, 1, 0),
                Op::KeyCount,
                allow("k", 5, 0),
            ];
            both(design, &small(ops)).is_some_and(|(mine, theirs)| {
                dropped_at_cutover(&mine, &theirs)
                    && mine.get(4).is_some_and(admitted)
                    && theirs.get(4).is_some_and(refused)
            })
        });
    // A spent key spends again after a cutover: to a smaller capacity at 0, and to the same
    // limits a minute in (a migration that loses the clock refills every bucket then).
    let grants = [
        vec![allow("k", 8, 0), replace(2, 5, 2, 1, 0), allow("k", 5, 0)],
        vec![
            allow("k", 10, 60 * SECOND),
            replace(2, 10, 2, 1, 60 * SECOND),
            allow("k", 10, 60 * SECOND),
        ],
    ]
    .into_iter()
    .any(|ops| grants_more(design, ops));
    spent || (grants && refuses_more_than_held(design))
}

/// The other symptom of [`Mistake::BudgetReset`]: a cutover drops a key that was full at it
/// (refilled by then under the same limits, or clamped to full by a smaller capacity): the
/// design counts fewer keys after the cutover than before, and than specified
/// ([`dropped_at_cutover`]). Its row in [`DETECTORS`] gives way to a design that counts keys
/// wrong without a cutover ([`untracked_keys`]), and to one that tops a bucket up
/// ([`tops_up`]: dropping a bucket full under the old capacity grants the new one).
fn drops_full_at_cutover(design: Build) -> bool {
    [(10, 10 * SECOND), (5, 0)]
        .into_iter()
        .any(|(capacity, at)| {
            let ops = vec![
                allow("k", 1, 0),
                Op::KeyCount,
                replace(2, capacity, 2, 1, at),
                Op::KeyCount,
            ];
            both(design, &small(ops))
                .is_some_and(|(mine, theirs)| dropped_at_cutover(&mine, &theirs))
        })
}

/// The symptom of [`Mistake::CapacityTopUp`]: after a cutover to a larger capacity an existing key
/// spends the whole new capacity, which the specification refuses (the worked example; a long
/// idle time under the old rate, then a rate no higher; a bucket full for a minute, the rate
/// kept, a design that moves a full-at time by the change of capacity), its calls before answered as specified,
/// while without a cutover it does not ([`refuses_more_than_held`]), or a cutover to a smaller
/// capacity settles a bucket (dates it at the cutover) and stores a balance above the new capacity,
/// or panics where a bucket holds more than the new capacity and not where it holds less.
fn tops_up(design: Build) -> bool {
    let probes = [
        vec![
            allow("k", 10, 0),
            replace(2, 20, 4, 1, 500 * MS),
            allow("k", 20, 500 * MS),
        ],
        vec![
            allow("k", 1, 0),
            replace(2, 100, 1, 1, 60 * SECOND),
            allow("k", 100, 60 * SECOND),
        ],
        vec![
            allow("k", 10, 0),
            replace(2, 20, 2, 1, 500 * MS),
            allow("k", 11, 500 * MS),
        ],
        // A bucket full for a minute, the capacity doubled at the same rate: still 10.
        vec![
            allow("k", 1, 0),
            replace(2, 20, 2, 1, 60 * SECOND),
            allow("k", 11, 60 * SECOND),
        ],
    ];
    let grants = probes.into_iter().any(|ops| grants_more(design, ops));
    let ceiling = 5 * u128::from(UNITS_PER_TOKEN);
    let unclamped = run(
        design,
        &small(vec![allow("k", 1, 0), replace(2, 5, 2, 1, 500 * MS)]),
    )
    .and_then(|(_, snapshot)| snapshot)
    .is_some_and(|s| {
        s.buckets
            .values()
            .any(|b| b.last_nanos == 500 * MS && b.units > ceiling)
    });
    // A cutover to a capacity below a bucket's balance panics (the balance left unclamped,
    // `capacity - balance` underflowing), while the same cutover with the bucket below the new
    // capacity is answered as specified.
    let underflows = panics(
        design,
        &small(vec![allow("k", 1, 0), replace(2, 5, 2, 1, 0)]),
    ) && as_specified(
        design,
        &small(vec![
            allow("k", 8, 0),
            replace(2, 5, 2, 1, 0),
            allow("k", 2, 0),
        ]),
    );
    (grants && refuses_more_than_held(design)) || unclamped || underflows
}

/// The other symptom of [`Mistake::CapacityTopUp`]: a cutover to a smaller capacity followed at
/// the same instant by one back to the larger lets a key spend more than the clamp left it.
/// Clamped to 5, then back to capacity 10 at the same instant: still 5 tokens, as the design
/// holds after the first cutover alone (the control), and without a cutover it refuses more than
/// it holds ([`refuses_more_than_held`]). No time elapses, so no refill reaches the answer. A
/// design that settles no bucket at a cutover clamps only when a bucket is next touched and
/// answers so too: that is the retroactive rate, which its row in [`DETECTORS`] gives way to
/// (as [`tops_up`]'s does).
fn backs_up(design: Build) -> bool {
    let clamped = small(vec![
        allow("k", 1, 0),
        replace(2, 5, 2, 1, 0),
        allow("k", 6, 0),
    ]);
    as_specified(design, &clamped)
        && grants_more(
            design,
            vec![
                allow("k", 1, 0),
                replace(2, 5, 2, 1, 0),
                replace(3, 10, 2, 2, 0),
                allow("k", 6, 0),
            ],
        )
        && refuses_more_than_held(design)
}

/// The symptom of [`Mistake::RetroactiveRate`]: a cutover that changes only the rate, up (the
/// worked example at 0.5 s, also after a cutover made while no key was tracked) and down, or
/// two in a row with the key untouched between them (each period earns at the rate in force
/// over it, in whole tokens): the credit earned before a cutover is the old rate's, and after
/// it the new rate's. Whether what the design answers after the cutover differs from the specification, while the same
/// calls without the cutover are answered as specified (the control: refill and reporting are
/// right) and a cost equal to the balance passes at the cutover's own instant (admission after
/// a cutover is right where no time elapsed). The capacity stays, so no clamp and no new
/// capacity is involved. Each probe runs on nine keys ([`SPREAD`]), the control on one.
fn rate_before_cutover(design: Build) -> bool {
    let control = small(vec![
        allow("k", 10, 0),
        allow("k", 1, 500 * MS),
        allow("k", 1, 500 * MS),
        allow("k", 2, SECOND),
        allow("k", 1, SECOND),
    ]);
    let probes = [
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 4, 1, 500 * MS),
            allow("k", 1, 500 * MS),
            allow("k", 1, 500 * MS),
        ]),
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 1, 1, SECOND),
            allow("k", 2, SECOND),
            allow("k", 1, SECOND),
        ]),
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 4, 1, 2 * SECOND),
            allow("k", 4, 2 * SECOND),
            allow("k", 1, 2 * SECOND),
        ]),
        // After the cutover the new rate: 1 token by 0.5 s, 2 more by 1 s.
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 4, 1, 500 * MS),
            allow("k", 3, SECOND),
            allow("k", 1, SECOND),
        ]),
        // Two cutovers with the key untouched between them: each period earns at its own
        // rate, in whole tokens (a design dropping fractions answers as specified): 1 token
        // by 0.5 s (2/s), 2 more by 1 s (4/s), 1 more by 1.5 s (2/s).
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 4, 1, 500 * MS),
            replace(3, 10, 2, 2, SECOND),
            allow("k", 4, 1500 * MS),
            allow("k", 1, 1500 * MS),
        ]),
        // The rates the other way: 1 token by 0.5 s (2/s), 1 more by 1.5 s (1/s), 2 more by
        // 2 s (4/s). The first call after the cutovers is admitted: a refusal's retry there
        // would be the estimate's matter.
        small(vec![
            allow("k", 10, 0),
            replace(2, 10, 1, 1, 500 * MS),
            replace(3, 10, 4, 2, 1500 * MS),
            allow("k", 4, 2 * SECOND),
            allow("k", 1, 2 * SECOND),
        ]),
        // The worked example after a cutover made while no key was tracked (a design keeping
        // a history of policies has one it no longer needs).
        small(vec![
            replace(2, 10, 2, 1, 0),
            allow("k", 10, 0),
            replace(3, 10, 4, 2, 500 * MS),
            allow("k", 1, 500 * MS),
            allow("k", 1, 500 * MS),
        ]),
    ];
    // At the cutover's own instant no rate applies yet: a cost equal to the balance passes.
    let at_cutover = small(vec![
        allow("k", 9, 0),
        replace(2, 10, 4, 1, 0),
        allow("k", 1, 0),
    ]);
    // Each probe on "k" and on "a" to "h", so that a slip confined to some shards (or
    // buckets) of a design that hashes its keys shows whatever the hash.
    let probes = probes
        .iter()
        .flat_map(|p| SPREAD.iter().map(move |key| on_key(p, key)));
    as_specified(design, &control)
        && as_specified(design, &at_cutover)
        && probes.into_iter().any(|p| {
            // The calls up to the last cutover are answered as specified; a call after it
            // is not.
            let cut = p
                .ops
                .iter()
                .rposition(|op| matches!(op, Op::ReplacePolicy { .. }))
                .map_or(0, |i| i + 1);
            both(design, &p).is_some_and(|(mine, theirs)| {
                mine.len() == theirs.len()
                    && mine.get(..cut) == theirs.get(..cut)
                    && mine.get(cut..) != theirs.get(cut..)
            })
        })
}

/// Whether the design answers as specified the probes of small numbers that the fixed point's
/// symptoms are judged beside: refills of half a token, a second's boundary, a spend, an
/// inexact retry. A design that fails them makes a mistake that no overflow explains.
fn small_as_specified(design: Build) -> bool {
    let controls = [
        small(vec![
            allow("k", 10, 0),
            allow("k", 1, 250 * MS),
            allow("k", 1, 500 * MS),
            allow("k", 1, 750 * MS),
            allow("k", 2, 1_750 * MS),
        ]),
        small(vec![allow("k", 10, SECOND - 1), allow("k", 10, SECOND)]),
        small(vec![allow("k", 5, 0), allow("k", 6, 0)]),
        small(vec![allow("k", 5, 0), allow("k", 1, SECOND)]),
        probe(1, 3, 8, vec![allow("k", 1, 0), allow("k", 1, 0)]),
    ];
    controls.iter().all(|p| as_specified(design, p))
}

/// [`Mistake::UncheckedFixedPoint`]: the largest capacity and times, and a capacity whose units
/// exceed `u64`, every call later than the one before (also a sweep and a cutover at the largest
/// capacity). Fires when the design admits or refuses otherwise than the specification there,
/// reports another `whole_tokens`, or refuses with a retry shorter than the specification's
/// (missing units beyond `u64`, wrapped), before any call it answers with an error where the
/// specification decides (or the other way: an input or time slip), while it answers
/// the seed's trace table, a second boundary, a refusal with tokens left and the seed's ceiling
/// (333333334 ns) exactly as specified (the controls: refill, rounding, retry and admission are
/// right at small quantities), or panics there (an overflow in a debug build) where it builds. A
/// correct design never panics. A retry longer than the specification's at the extremes is the
/// retry detector's matter (one that does not saturate at `MAX_QUANTITY`).
fn unchecked_fixed_point(design: Build) -> bool {
    let huge = 2 * (u64::MAX / UNITS_PER_TOKEN);
    let extremes = [
        probe(MAX_QUANTITY, 1, 8, at_the_extremes()),
        probe(
            MAX_QUANTITY,
            MAX_QUANTITY,
            8,
            vec![allow("k", MAX_QUANTITY, 0), allow("k", 1, 3)],
        ),
        probe(huge, 2, 8, vec![allow("k", huge, 0), allow("k", 1, 1)]),
        // Missing units far beyond `u64` (about 4.6 × 10^27), a retry of 499999999 ns.
        probe(
            MAX_QUANTITY,
            MAX_QUANTITY,
            8,
            vec![allow("k", MAX_QUANTITY / 2, 0), allow("k", MAX_QUANTITY, 1)],
        ),
        // A sweep and a cutover at the largest capacity.
        probe(
            MAX_QUANTITY,
            1,
            8,
            vec![allow("k", 1, 0), Op::EvictFull { now: SECOND }],
        ),
        probe(
            MAX_QUANTITY,
            1,
            8,
            vec![
                allow("k", 1, 0),
                replace(2, MAX_QUANTITY, MAX_QUANTITY, 1, SECOND),
            ],
        ),
    ];
    small_as_specified(design)
        && extremes.iter().any(|p| {
            panics(design, p) || {
                both(design, p).is_some_and(|(mine, theirs)| {
                    // Up to the first call answered with an error where the specification
                    // decides (or the other way, or another error): an error there is the
                    // input rules' or the time's, not arithmetic.
                    mine.iter()
                        .zip(&theirs)
                        .take_while(|(m, t)| match (decision(m), decision(t)) {
                            (Some(_), Some(_)) => true,
                            (None, None) => m == t,
                            _ => false,
                        })
                        .any(|(m, t)| match (decision(m), decision(t)) {
                            (Some(m), Some(t)) => {
                                m.allowed != t.allowed
                                    || m.whole_tokens != t.whole_tokens
                                    || (!t.allowed && m.retry_after_nanos < t.retry_after_nanos)
                            }
                            _ => false,
                        })
                })
            }
        })
}

/// A symptom of [`Mistake::UncheckedFixedPoint`]: a refill rounded beyond 2⁵³ units. A spent
/// bucket of 10⁷ tokens at 1 token/s asked for all of it again 2⁵³ + 1 ns later (2⁵³ + 1
/// units earned, which an `f64` cannot hold): the specification refuses it. Fires when the
/// design refuses it too, with the same `whole_tokens`, and its snapshot holds a balance off
/// by 1 to 16 units (a product computed in floating point and cast back), the policy and
/// observed time agreeing; the small probes of [`unchecked_fixed_point`] answered as
/// specified. A dropped fraction is off by far more; a retry formula leaves the balance exact.
fn rounds_large_refill(design: Build) -> bool {
    let capacity = 10_000_000;
    let p = probe(
        capacity,
        1,
        8,
        vec![allow("k", capacity, 0), allow("k", capacity, (1 << 53) + 1)],
    );
    let off = match (run(design, &p), run(spec, &p)) {
        (Some((mine, Some(ms))), Some((theirs, Some(ts)))) => {
            mine.first() == theirs.first()
                && matches!((mine.get(1).and_then(decision), theirs.get(1).and_then(decision)),
                    (Some(m), Some(t)) if !m.allowed && !t.allowed && m.whole_tokens == t.whole_tokens)
                && (ms.policy, ms.observed_nanos) == (ts.policy, ts.observed_nanos)
                && matches!((balances(&ms).get("k"), balances(&ts).get("k")),
                    (Some(m), Some(t)) if (1..=16).contains(&m.abs_diff(*t)))
        }
        _ => false,
    };
    off && small_as_specified(design)
}

/// The largest capacity at 1 token/s spent at once and asked for again: a wait beyond
/// `u64::MAX` nanoseconds, which saturates at `MAX_QUANTITY`.
fn spent_at_largest() -> Probe {
    probe(
        MAX_QUANTITY,
        1,
        8,
        vec![allow("k", MAX_QUANTITY, 0), allow("k", MAX_QUANTITY, 0)],
    )
}

/// A symptom of [`Mistake::RetryEstimate`]: a refusal that says to retry at once. The
/// specification never refuses with `retry_after_nanos` 0 (a refused request always lacks
/// some units); a design that falls back to 0 where the wait does not fit a `u64` (a spent
/// bucket of `MAX_QUANTITY` tokens at 1 token/s, asked for all of them) promises admission now.
/// The fixed point's row gives way to it: a wrapped product gives some other number.
fn retries_at_once(design: Build) -> bool {
    outcomes(design, &spent_at_largest()).is_some_and(|mine| {
        mine.iter()
            .filter_map(decision)
            .any(|d| !d.allowed && d.retry_after_nanos == 0)
    })
}

/// A symptom: a fixed set of probes run on a design, and whether the design shows it.
type Symptom = fn(Build) -> bool;

/// Whether the design panics on a probe that it builds a limiter for and that the
/// specification answers (a correct design never panics).
fn panics(design: Build, p: &Probe) -> bool {
    let builds = Policy::new(1, p.capacity, p.rate).is_ok_and(|policy| {
        catch_unwind(AssertUnwindSafe(|| design(policy, p.max_keys).is_ok())).unwrap_or(false)
    });
    builds && run(design, p).is_none() && run(spec, p).is_some()
}

/// One detector: the mistake it names, the symptom that makes it fire, and the symptoms of
/// other mistakes that explain that symptom too (it does not fire when one of them shows).
struct Detector {
    mistake: Mistake,
    fires: Symptom,
    unless: &'static [Symptom],
}

/// Every detector, at least one per sequential mistake the seed names, in the order of
/// [`Mistake::ALL`]. The exclusions are the whole of the rules between detectors: a new key
/// answered otherwise than an old one refilled to full ([`new_key_not_full`]) explains more
/// admitted than earned on the window's probes, which all start on a new key; so do a design
/// that holds no key ([`holds_no_key`]), drops a bucket it spent ([`drops_spent`]) or leaves a
/// spend unstored ([`unstored_spend`]), and a design that holds no key explains a key dropped
/// to make room and a spend unstored; a design
/// that admits more than it earned without a cutover ([`window_reset`]) explains a dropped
/// fraction and the cutover grants; a stored balance rounded by less than a nanosecond of
/// refill ([`rounds_stored`]) explains a retry one nanosecond short; a retry saturated before
/// its division ([`saturates_missing`]) or a refusal saying to retry at once
/// ([`retries_at_once`]) or a wait cut to 64 bits ([`truncates_wait`]) explains one short at
/// the extremes, and a large valid cost refused as invalid ([`refuses_large_cost`]) any answer
/// there; a budget reset (a whole new capacity) explains a top-up and a retroactive rate; a cutover that applies a rate to the wrong side of it
/// ([`rate_before_cutover`], with the capacity kept) explains a top-up: a bucket settled under
/// the new policy reads full at the new capacity, and one not settled at all is clamped only
/// when next touched (a capacity raised back at one instant); a key count that a cutover
/// lowers while the bucket stays ([`counts_across_cutover`]), or any count wrong without a
/// cutover ([`untracked_keys`]), explains a budget reset's lower count; a full bucket dropped
/// at a cutover ([`drops_full_at_cutover`]) explains a capacity raised back at one instant, and
/// a top-up explains dropping a bucket full under the old capacity.
const DETECTORS: [Detector; 21] = [
    Detector {
        mistake: Mistake::WindowReset,
        fires: window_reset,
        unless: &[new_key_not_full, holds_no_key, drops_spent, unstored_spend],
    },
    Detector {
        mistake: Mistake::NewKeyNotFull,
        fires: new_key_not_full,
        unless: &[],
    },
    Detector {
        mistake: Mistake::DroppedFraction,
        fires: dropped_fraction,
        unless: &[window_reset],
    },
    Detector {
        mistake: Mistake::DroppedFraction,
        fires: unstored_spend,
        unless: &[holds_no_key],
    },
    Detector {
        mistake: Mistake::RetryEstimate,
        fires: retry_estimate,
        unless: &[rounds_stored],
    },
    Detector {
        mistake: Mistake::RetryEstimate,
        fires: saturates_missing,
        unless: &[],
    },
    Detector {
        mistake: Mistake::RetryEstimate,
        fires: truncates_wait,
        unless: &[],
    },
    Detector {
        mistake: Mistake::UncheckedFixedPoint,
        fires: unchecked_fixed_point,
        unless: &[
            saturates_missing,
            retries_at_once,
            truncates_wait,
            refuses_large_cost,
        ],
    },
    Detector {
        mistake: Mistake::UncheckedFixedPoint,
        fires: rounds_large_refill,
        unless: &[],
    },
    Detector {
        mistake: Mistake::StaleTime,
        fires: stale_time,
        unless: &[],
    },
    Detector {
        mistake: Mistake::InputValidation,
        fires: input_validation,
        unless: &[],
    },
    Detector {
        mistake: Mistake::InputValidation,
        fires: refuses_large_cost,
        unless: &[],
    },
    Detector {
        mistake: Mistake::MutationBeforeValidation,
        fires: mutation_before_validation,
        unless: &[],
    },
    Detector {
        mistake: Mistake::IdleEviction,
        fires: idle_eviction,
        unless: &[holds_no_key],
    },
    Detector {
        mistake: Mistake::UntrackedKeys,
        fires: untracked_keys,
        unless: &[],
    },
    Detector {
        mistake: Mistake::RetroactiveRate,
        fires: rate_before_cutover,
        unless: &[resets_budgets, window_reset],
    },
    Detector {
        mistake: Mistake::CapacityTopUp,
        fires: tops_up,
        unless: &[resets_budgets, window_reset, rate_before_cutover],
    },
    Detector {
        mistake: Mistake::CapacityTopUp,
        fires: backs_up,
        unless: &[
            resets_budgets,
            window_reset,
            rate_before_cutover,
            drops_full_at_cutover,
        ],
    },
    Detector {
        mistake: Mistake::UnguardedVersion,
        fires: unguarded_version,
        unless: &[],
    },
    Detector {
        mistake: Mistake::BudgetReset,
        fires: resets_budgets,
        unless: &[counts_across_cutover, window_reset],
    },
    Detector {
        mistake: Mistake::BudgetReset,
        fires: drops_full_at_cutover,
        unless: &[untracked_keys, tops_up],
    },
];

/// The cutover mistakes that grant credit: a budget reset, a top-up and a retroactive rate.
/// On a trace with one cutover their answers often coincide (refilling every bucket to the
/// new capacity and topping it up on an increase return the same), so a catalogued design
/// making one of them reproduces a design making another; their detectors exclude each other
/// (the `unless` of their rows in [`DETECTORS`]), and only the probes tell them apart.
const CUTOVER_GRANTS: [Mistake; 3] = [
    Mistake::BudgetReset,
    Mistake::CapacityTopUp,
    Mistake::RetroactiveRate,
];

/// Whether a trace reproduced by a catalogued design making `shown` is evidence a design
/// making `detected` can give: the same mistake, or two of the [`CUTOVER_GRANTS`].
pub(crate) fn trace_allows(shown: Mistake, detected: Mistake) -> bool {
    shown == detected || (CUTOVER_GRANTS.contains(&shown) && CUTOVER_GRANTS.contains(&detected))
}

/// The mistakes whose detectors fire on `design`, each once, in the order of [`Mistake::ALL`].
/// Each symptom is probed at most once, however many rows name it.
pub(crate) fn firing(design: Build) -> Vec<Mistake> {
    let mut seen: Vec<(Symptom, bool)> = Vec::new();
    let mut shows = |symptom: Symptom| {
        if let Some((_, shown)) = seen.iter().find(|(s, _)| std::ptr::fn_addr_eq(*s, symptom)) {
            return *shown;
        }
        let shown = symptom(design);
        seen.push((symptom, shown));
        shown
    };
    let mut fired = Vec::new();
    for d in &DETECTORS {
        if !fired.contains(&d.mistake) && shows(d.fires) && !d.unless.iter().any(|u| shows(*u)) {
            fired.push(d.mistake);
        }
    }
    fired
}

/// The one mistake the detectors find in `design`: `None` when none fires, or when
/// detectors of different mistakes fire (the evidence then contradicts itself).
///
/// The probes are sequential and fixed, so their answer is a property of the design: it is
/// settled once per process and design (the checks of one `cargo test` share it).
pub(crate) fn detected(design: Build) -> Option<Mistake> {
    static SETTLED: Mutex<Vec<(Build, Option<Mistake>)>> = Mutex::new(Vec::new());
    let settled = |found: &[(Build, Option<Mistake>)]| {
        found
            .iter()
            .find(|(b, _)| std::ptr::fn_addr_eq(*b, design))
            .map(|(_, m)| *m)
    };
    if let Some(m) = settled(&SETTLED.lock().unwrap_or_else(PoisonError::into_inner)) {
        return m;
    }
    // The probes run without the lock held: a design that panics or blocks in them holds up
    // no other check.
    let fired = firing(design);
    let first = fired.first().copied();
    let found = first.filter(|f| fired.iter().all(|m| m == f));
    let mut all = SETTLED.lock().unwrap_or_else(PoisonError::into_inner);
    if settled(&all).is_none() {
        all.push((design, found));
    }
    found
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::suite::host::subject::boxed;

    /// The proof that detectors never name a mistake a design does not make: on every
    /// correct design of the catalog (and the reference and the specification) no detector
    /// fires, and on every catalogued wrong design every detector that fires is its own
    /// mistake's. Prints which wrong designs each detector names.
    #[test]
    fn every_detector_that_fires_names_the_designs_own_mistake() {
        let mut problems = Vec::new();
        for m in Mistake::ALL {
            let detectors = DETECTORS.iter().filter(|d| d.mistake == m).count();
            if (detectors > 0) == m.is_race() {
                problems.push(format!("{m:?} has {detectors} detectors"));
            }
        }
        let correct: Vec<(&str, Build)> = ratelimit_lab_catalog::DESIGNS
            .iter()
            .filter(|d| matches!(d.verdict, crate::catalog::Verdict::Correct))
            .map(|d| (d.name, d.build))
            .chain([
                (
                    "TokenBucket",
                    boxed::<crate::reference::TokenBucket> as Build,
                ),
                ("ShardedBucket", boxed::<crate::reference::ShardedBucket>),
                ("Specification", spec),
            ])
            .collect();
        assert!(correct.len() >= 10, "{}", correct.len());
        for (name, build) in correct {
            let fired = firing(build);
            if !fired.is_empty() {
                problems.push(format!("{name} (correct): {fired:?} fired"));
            }
        }
        let mut named = 0;
        for s in crate::catalog::suspects() {
            let fired = firing(s.build);
            if fired.iter().any(|m| *m != s.mistake) {
                problems.push(format!("{} ({:?}): {fired:?} fired", s.name, s.mistake));
            }
            if detected(s.build) == Some(s.mistake) {
                named += 1;
            }
            println!("{} ({:?}): {fired:?}", s.name, s.mistake);
        }
        println!("detected: {named} of {}", crate::catalog::suspects().len());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
