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

use crate::suite::diagnose::battery::{consistent, departs_on};
use crate::suite::host::subject::Build;

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

/// Names the seed mistake a sequential failure shows by replaying its trace on the suspects:
/// every suspect that reproduces it and is [consistent](crate::suite::diagnose::battery::consistent) with
/// `design` (built by `design`) is listed in [`Failure::resembles`], and [`Failure::mistake`]
/// is set only when they all make the same mistake.
pub(crate) fn diagnose(mut failure: Failure, suspects: &[Suspect], design: Build) -> Failure {
    let Some(replay) = failure.replay.as_ref().filter(|_| !failure.panicked) else {
        return failure;
    };
    failure.resembles = resembling(suspects, replay)
        .into_iter()
        .filter(|s| departs_on(s.build, replay.policy, replay.max_keys, &replay.ops))
        .filter(|s| consistent(s.build, design))
        .map(|s| Lookalike {
            design: s.name.to_string(),
            mistake: s.mistake,
        })
        .collect();
    if failure.resembles.is_empty() {
        return failure;
    }
    // A mistake the check saw directly (an error that changed the state, a key count above
    // the bound) stands when the designs that reproduce the trace include one making it.
    let seen = failure
        .mistake
        .filter(|m| failure.resembles.iter().any(|l| l.mistake == *m));
    failure.mistake = agreed_mistake(&failure.resembles).or(seen);
    let names: Vec<&str> = failure
        .resembles
        .iter()
        .map(|l| l.design.as_str())
        .collect();
    let note = match failure.mistake {
        Some(_) => format!(
            "On this trace the design returns exactly what the catalogued wrong design{} {} return{}.",
            if names.len() > 1 { "s" } else { "" },
            names.join(", "),
            if names.len() > 1 { "" } else { "s" }
        ),
        None => format!(
            "On this trace the design returns exactly what the catalogued wrong designs {} return, \
             and they make different mistakes: this trace alone does not tell which one is made.",
            names.join(", ")
        ),
    };
    failure.detail = Some(match failure.detail.take() {
        Some(d) if !d.is_empty() => format!("{d}\n{note}"),
        _ => note,
    });
    failure
}
