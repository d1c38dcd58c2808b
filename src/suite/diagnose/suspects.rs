//! Diagnosis by replay: a failing sequential trace is run again on known wrong designs; those
//! that return exactly the same outcomes (and, for a failure found in the stored state, hold
//! the same balances) reproduce it. A mistake is named only when the evidence singles it out:
//! every design that reproduces the trace makes that one mistake. When designs making
//! different mistakes reproduce it, or none does, the failure names no mistake (a wrong name
//! would send a learner to fix code that is right) and the report gives the requirement's
//! hint instead.
//!
//! The suite knows no designs itself: the caller passes the [`Suspect`]s (the harness passes
//! the catalog's wrong designs), so that the suite depends on nothing above it.
use crate::model::Outcome;
use crate::{Mistake, Requirement};

use crate::suite::diagnose::battery::{alike, consistent, departs_on};
use crate::suite::diagnose::detectors::{detected, trace_allows};
use crate::suite::diagnose::signature::{signature, Signature};
use crate::suite::host::subject::Build;

use crate::suite::core::failure::wrapped;
use crate::suite::core::failure::FailingTrace;
use crate::suite::core::failure::Failure;
use crate::suite::core::failure::Lookalike;

/// A known wrong design a failing trace is compared against.
#[derive(Clone, Copy)]
pub struct Suspect {
    /// The design's name, e.g. `SplitReadWrite`.
    pub name: &'static str,
    /// The requirement it breaks.
    pub breaks: Requirement,
    /// The seed mistake it makes.
    pub mistake: Mistake,
    /// What it does wrong, in one sentence (empty when unknown): shown to a learner whose
    /// design returns exactly what it returns.
    pub says: &'static str,
    /// A fresh instance of it: inside the harness only, so that no wrong design (one lock
    /// away from a correct one, for the races) is handed to a learner's crate.
    pub(crate) build: Build,
}

impl std::fmt::Debug for Suspect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Suspect")
            .field("name", &self.name)
            .field("breaks", &self.breaks)
            .field("mistake", &self.mistake)
            .field("says", &self.says)
            .finish_non_exhaustive()
    }
}

/// The suspects that return exactly the outcomes `replay` recorded, in the order given.
/// Panics inside a suspect are caught and count as no match.
pub fn resembling<'a>(suspects: &'a [Suspect], replay: &FailingTrace) -> Vec<&'a Suspect> {
    suspects.iter().filter(|s| reproduces(s, replay)).collect()
}

fn reproduces(suspect: &Suspect, replay: &FailingTrace) -> bool {
    if replay.observed.is_empty() {
        return false;
    }
    let run = std::panic::catch_unwind(|| -> Option<bool> {
        let limiter = (suspect.build)(replay.policy, replay.max_keys).ok()?;
        let outcomes: Vec<Outcome> = replay
            .ops
            .iter()
            .take(replay.observed.len())
            .map(|op| op.run_on(limiter.as_ref()))
            .collect();
        if outcomes != replay.observed {
            return Some(false);
        }
        // A failure found in the stored state must be reproduced in the stored state too.
        Some(match &replay.snapshot {
            None => true,
            Some(theirs) => limiter
                .snapshot()
                .is_some_and(|mine| crate::model::same_state::same(&mine, theirs)),
        })
    });
    matches!(run, Ok(Some(true)))
}

/// The one mistake every suspect in `like` makes, if they agree (and there is one).
pub(crate) fn agreed_mistake<'a>(like: impl IntoIterator<Item = &'a Lookalike>) -> Option<Mistake> {
    let mut like = like.into_iter();
    let first = like.next()?.mistake;
    like.all(|l| l.mistake == first).then_some(first)
}

/// Names the seed mistake a sequential failure shows by replaying its trace on the suspects.
///
/// - **Exact replay.** Every suspect that reproduces the trace and is
///   [consistent](crate::suite::diagnose::battery::consistent) with `design` (built by
///   `design`) is listed in [`Failure::resembles`].
/// - **Alike departure.** Every suspect that first departs from the specification on the
///   trace at the same step with the same cause as `design`, and departs
///   [alike](crate::suite::diagnose::battery::alike) with it on the battery, is listed in
///   [`Failure::kin`].
///
/// - **Detection.** The mistake the [detectors](crate::suite::diagnose::detectors) find in
///   `design` itself, if exactly one, is kept in [`Failure::detected`]. It is the failure's
///   mistake when exact lookalikes make another one that a trace cannot tell from it
///   ([`trace_allows`]).
///
/// [`Failure::mistake`] is set from the replay's reproducers when there are any (all making one
/// mistake, or one of them making the mistake the check saw itself); otherwise it is the
/// mistake the check saw itself, if any, or the one all the kin make. The check's own
/// observation is kept in [`Failure::seen`].
/// The line that says a failure's mistake is the detectors' finding.
const PROBED: &str = "Probes run on the design itself find the symptom of the mistake below.";

/// Names the mistake the detectors found on the design in `failure`, unless the check saw
/// another one itself (`seen`).
fn name_detected(failure: &mut Failure, seen: Option<Mistake>) {
    if let Some(d) = failure.detected.filter(|d| seen.is_none_or(|m| m == *d)) {
        failure.mistake = Some(d);
        failure.push_detail(PROBED);
    }
}

pub(crate) fn diagnose(mut failure: Failure, suspects: &[Suspect], design: Build) -> Failure {
    // A race is named by its counterexample; the detectors probe sequential mistakes only.
    if failure.replay.is_none() && failure.mistake.is_some_and(Mistake::is_race) {
        return failure;
    }
    // A panic shows where the design failed, not which mistake it made, and a failure without
    // a trace (a limiter that could not be built) shows none: the detectors may still find
    // one (an overflow at the extremes, a valid policy refused).
    failure.detected = detected(design);
    if failure.replay.is_none() && !failure.panicked {
        let seen = failure.mistake;
        name_detected(&mut failure, seen);
    }
    let Some(replay) = failure.replay.as_ref().filter(|_| !failure.panicked) else {
        return failure;
    };
    let lookalike = |s: &Suspect| Lookalike {
        design: s.name.to_string(),
        mistake: s.mistake,
    };
    failure.resembles = resembling(suspects, replay)
        .into_iter()
        .filter(|s| departs_on(s.build, replay.policy, replay.max_keys, &replay.ops))
        .filter(|s| consistent(s.build, design))
        .map(lookalike)
        .collect();
    let sign = |build| signature(build, replay.policy, replay.max_keys, &replay.ops);
    failure.kin = match sign(design).filter(Signature::departs) {
        None => Vec::new(),
        Some(mine) => suspects
            .iter()
            .filter(|s| sign(s.build).is_some_and(|theirs| theirs.departs() && theirs.alike(&mine)))
            .filter(|s| alike(s.build, design))
            .map(lookalike)
            .collect(),
    };
    failure.seen = failure.mistake;
    // Alike departures, the weakest evidence, give way to a mistake the probes find on the
    // design itself (a design that drops a key to make room departs where and as one that
    // serves the key untracked).
    if failure.resembles.is_empty()
        && failure.seen.is_none()
        && failure
            .detected
            .is_some_and(|d| agreed_mistake(&failure.kin) != Some(d))
    {
        failure.kin.clear();
    }
    let (evidence, exact) = if failure.resembles.is_empty() {
        (&failure.kin, false)
    } else {
        (&failure.resembles, true)
    };
    if evidence.is_empty() {
        // No catalogued design reproduces or resembles the trace: a mistake the probes of
        // its symptom find on the design itself is named, unless the check saw another.
        let seen = failure.seen;
        name_detected(&mut failure, seen);
        return failure;
    }
    // A mistake the check saw directly (an error that changed the state, a key count above
    // the bound) stands when the designs the evidence lists include one making it.
    let seen = failure
        .seen
        .filter(|m| evidence.iter().any(|l| l.mistake == *m));
    // Exact reproducers that agree outweigh the check's own sight; alike departures, weaker
    // evidence, do not.
    failure.mistake = if exact {
        agreed_mistake(evidence).or(seen)
    } else {
        failure.seen.or_else(|| agreed_mistake(evidence))
    };
    // Reproducers whose mistake a trace cannot tell from the one the probes find on the
    // design itself (a refill to full at every cutover returns what a top-up returns on a
    // capacity increase) give way to it.
    let probed = failure.detected.filter(|d| {
        exact && failure.mistake != Some(*d) && evidence.iter().all(|l| trace_allows(l.mistake, *d))
    });
    let names: Vec<&str> = evidence.iter().map(|l| l.design.as_str()).collect();
    let plural = names.len() > 1;
    let (s, verb) = if plural { ("s", "") } else { ("", "s") };
    let list = names.join(", ");
    let mut note = match (failure.mistake, exact) {
        (Some(_), true) => format!(
            "On this trace the design returns exactly what the catalogued wrong design{s} {list} return{verb}."
        ),
        (None, true) => format!(
            "On this trace the design returns exactly what the catalogued wrong designs {list} return, \
             and they make different mistakes: this trace alone does not tell which one is made."
        ),
        (Some(_), false) => format!(
            "On this trace the design first departs from the specification where and as the catalogued \
             wrong design{s} {list} depart{verb}, and departs alike on every trial of the diagnosis."
        ),
        (None, false) => format!(
            "On this trace the design first departs from the specification where and as the catalogued \
             wrong designs {list} depart, and they make different mistakes: this trace alone does not \
             tell which one is made."
        ),
    };
    // The catalogued designs' own words, when they reproduce the trace exactly: the closest
    // description of what this design does.
    if exact {
        for name in &names {
            let says = suspects
                .iter()
                .find(|s| s.name == *name)
                .map_or("", |s| s.says);
            if !says.is_empty() {
                note.push('\n');
                note.push_str("  ");
                note.push_str(&wrapped(&format!("{name}: {says}"), 98, "    "));
            }
        }
    }
    failure.push_detail(&note);
    if let Some(d) = probed {
        failure.mistake = Some(d);
        failure.push_detail(PROBED);
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::mistakes::RejectionKeepsOldTime;
    use crate::model::Op;
    use crate::suite::host::subject::boxed;
    use crate::Policy;

    #[test]
    fn an_exact_lookalike_is_described_in_its_own_words() {
        // The trace table, then a call at 750 ms that the stale time admits.
        let ms = 1_000_000;
        let ops: Vec<Op> = [(10, 0), (1, 250 * ms), (1, 500 * ms), (1, 750 * ms)]
            .into_iter()
            .map(|(cost, now)| Op::Allow {
                key: "k".into(),
                cost,
                now,
            })
            .collect();
        let policy = Policy::new(1, 10, 2).expect("a valid policy");
        let design = boxed::<RejectionKeepsOldTime>;
        let limiter = design(policy, 8).expect("builds");
        let observed = ops.iter().map(|op| op.run_on(limiter.as_ref())).collect();
        let mut failure = Failure::new("allow admitted a request the specification rejects");
        failure.replay = Some(FailingTrace {
            policy,
            max_keys: 8,
            ops,
            observed,
            snapshot: None,
        });
        let diagnosed = diagnose(failure, crate::catalog::suspects(), design);
        let detail = diagnosed.detail.unwrap_or_default();
        assert!(
            detail.contains("  RejectionKeepsOldTime: A rejection stores the refilled balance"),
            "{detail}"
        );
        assert!(detail.lines().all(|l| l.chars().count() <= 120), "{detail}");
    }
}
