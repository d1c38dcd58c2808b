use crate::model::Outcome;
use crate::suite::probe::balances;
use crate::suite::Replay;

use super::{Design, Role, DESIGNS};

/// The wrong designs that return exactly the outcomes a failing trace recorded, in catalog
/// order: a design behaving like one of them on its minimal failing trace most likely makes
/// the same mistake.
///
/// Panics inside a catalogued design are caught and count as no match.
pub fn resembling(replay: &Replay) -> Vec<&'static Design> {
    DESIGNS
        .iter()
        .filter(|d| matches!(d.role, Role::Wrong { .. }))
        .filter(|d| reproduces(d, replay))
        .collect()
}

fn reproduces(design: &Design, replay: &Replay) -> bool {
    if replay.observed.is_empty() {
        return false;
    }
    let run = std::panic::catch_unwind(|| -> Option<bool> {
        let limiter = design.build(replay.policy, replay.max_keys).ok()?;
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
