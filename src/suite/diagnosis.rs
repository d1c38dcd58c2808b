//! Diagnosis by replay: a failing sequential trace is run again on known wrong designs, and
//! one that returns exactly the same outcomes (and, for a failure found in the stored state,
//! holds the same balances) names the mistake.
//!
//! The suite knows no designs itself: the caller passes the [`Suspect`]s (the harness passes
//! the catalog's wrong designs), so that the suite depends on nothing above it.
use serde::Serialize;

use crate::model::Outcome;
use crate::{LimitError, Limiter, Mistake, Policy, Requirement};

use super::check::CheckInfo;
use super::probe::balances;
use super::{Failure, Replay};

/// A known wrong design a failing trace is compared against.
#[derive(Clone, Copy)]
pub struct Suspect {
    /// The design's name, e.g. `SplitReadWrite`.
    pub name: &'static str,
    /// The requirement it breaks.
    pub breaks: Requirement,
    /// The seed mistake it makes.
    pub mistake: Mistake,
    /// A fresh instance of it.
    pub build: fn(Policy, usize) -> Result<Box<dyn Limiter>, LimitError>,
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

/// A suspect that reproduced a failing trace: its name and the mistake it makes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lookalike {
    /// The wrong design's name.
    pub design: String,
    /// The seed mistake it makes.
    pub mistake: Mistake,
}

/// The suspects that return exactly the outcomes `replay` recorded, in the order given.
/// Panics inside a suspect are caught and count as no match.
pub fn resembling<'a>(suspects: &'a [Suspect], replay: &Replay) -> Vec<&'a Suspect> {
    suspects.iter().filter(|s| reproduces(s, replay)).collect()
}

fn reproduces(suspect: &Suspect, replay: &Replay) -> bool {
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
            Some(theirs) => limiter.snapshot().is_some_and(|mine| {
                balances(&mine) == balances(theirs) && mine.policy == theirs.policy
            }),
        })
    });
    matches!(run, Ok(Some(true)))
}

/// Names the seed mistake a sequential failure resembles by replaying its trace on the
/// suspects. When several reproduce it, the one making the mistake the check is about comes
/// first, then one breaking the check's requirement, then the order given (a short trace can
/// coincide with a design that is wrong in another way).
pub(crate) fn diagnose(check: &CheckInfo, mut failure: Failure, suspects: &[Suspect]) -> Failure {
    let Some(replay) = failure.replay.as_ref().filter(|_| !failure.panicked) else {
        return failure;
    };
    let mut like = resembling(suspects, replay);
    like.sort_by_key(|s| {
        (
            Some(s.mistake) != check.mistake,
            s.breaks != check.requirement,
        )
    });
    failure.resembles = like
        .iter()
        .map(|s| Lookalike {
            design: s.name.to_string(),
            mistake: s.mistake,
        })
        .collect();
    if let Some(first) = like.first() {
        failure.mistake = Some(first.mistake);
        let names: Vec<&str> = like.iter().map(|s| s.name).collect();
        let note = format!(
            "On this trace the design returns exactly what the catalogued wrong design{} {} return{}.",
            if names.len() > 1 { "s" } else { "" },
            names.join(", "),
            if names.len() > 1 { "" } else { "s" }
        );
        failure.detail = Some(match failure.detail.take() {
            Some(d) if !d.is_empty() => format!("{d}\n{note}"),
            _ => note,
        });
    }
    failure
}
