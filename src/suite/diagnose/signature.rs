//! The signature of a departure: where and how a design first departs from the specification
//! on a trace, in the terms of its [`Cause`] (which call, which quantity, which way) and not
//! the trace's numbers.
//!
//! Two designs run on the same trace that first depart at the same step, with the same cause,
//! slip in the same place the same way, though they may return different numbers there and
//! differ after it: an unseen design with a catalogued design's flaw does, where exact replay
//! (every outcome identical) would tell them apart by details the flaw does not decide. The
//! stored state speaks too, but only when both designs report it ([`Signature::alike`]).
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::model::same_state::{compare, StateDifference};
use crate::model::{Model, Op};
use crate::{Policy, Snapshot, UNITS_PER_TOKEN};

use crate::suite::core::cause::Cause;
use crate::suite::host::subject::Build;

/// Where a design first departs from the specification on a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Signature {
    /// The first step (0-based) whose outcome differs, and the cause of the difference;
    /// `None` when every outcome is the specification's.
    pub(crate) outcome: Option<(usize, String)>,
    /// What the design's stored state shows.
    pub(crate) stored: Stored,
}

/// What a design's stored state shows on a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// It reports no snapshot: its state gives no evidence.
    Unreported,
    /// After every step its state is the specification's.
    Same,
    /// After this step (0-based) its state first differs, in this part and way.
    Differs(usize, String),
}

impl Signature {
    /// Whether the design departs from the specification at all.
    pub(crate) fn departs(&self) -> bool {
        self.outcome.is_some() || matches!(self.stored, Stored::Differs(..))
    }

    /// Whether `self`'s departure shows in `design`'s too: when `self`'s outcomes differ
    /// from the specification's, `design`'s differ first with the same cause, at whatever step
    /// (a design making the same mistake with other details may slip a step sooner or later);
    /// when only `self`'s stored state differs, `design`'s differs the same way, unless
    /// `design` reports no state. When `self` does not depart, it asks nothing of `design`.
    pub(crate) fn shows_in(&self, design: &Signature) -> bool {
        match (&self.outcome, &design.outcome) {
            (Some((_, theirs)), Some((_, mine))) => theirs == mine,
            (Some(_), None) => false,
            (None, _) => match (&self.stored, &design.stored) {
                (Stored::Differs(_, theirs), Stored::Differs(_, mine)) => theirs == mine,
                (Stored::Differs(..), Stored::Same) => false,
                _ => true,
            },
        }
    }

    /// Whether two designs depart alike: their first differing outcomes are at the same step
    /// with the same cause (or neither has one), and, when both report their stored state,
    /// it first differs at the same step in the same way (or in neither).
    pub(crate) fn alike(&self, other: &Signature) -> bool {
        let stored = match (&self.stored, &other.stored) {
            (Stored::Unreported, _) | (_, Stored::Unreported) => true,
            (a, b) => a == b,
        };
        self.outcome == other.outcome && stored
    }
}

/// The signature of the design built by `build` on `ops`, run on a limiter of `policy` and
/// `max_keys`; `None` when it cannot be built or panics (no evidence either way). The trace is
/// run to its end or to the first differing outcome, whichever comes first.
pub(crate) fn signature(
    build: Build,
    policy: Policy,
    max_keys: usize,
    ops: &[Op],
) -> Option<Signature> {
    catch_unwind(AssertUnwindSafe(|| {
        let design = build(policy, max_keys).ok()?;
        let mut model = Model::new(policy, max_keys).ok()?;
        let mut stored = Stored::Same;
        for (step, op) in ops.iter().enumerate() {
            let got = op.run_on(design.as_ref());
            let expected = model.apply(op);
            if got != expected {
                let cause = Cause::of_outcome(op, &expected, &got);
                return Some(Signature {
                    outcome: Some((step, cause.what)),
                    stored,
                });
            }
            if stored == Stored::Same {
                stored = match design.snapshot() {
                    None => Stored::Unreported,
                    Some(got) if above_capacity(&got) => {
                        Stored::Differs(step, "balance above capacity".into())
                    }
                    Some(got) => match compare(&got, &model.snapshot()) {
                        Ok(()) => Stored::Same,
                        Err(d) => Stored::Differs(step, part(&d)),
                    },
                };
            }
        }
        Some(Signature {
            outcome: None,
            stored,
        })
    }))
    .ok()
    .flatten()
}

/// Whether a stored balance is above the capacity (invariant I1), which a comparison of
/// balances clamped to the capacity does not show.
fn above_capacity(s: &Snapshot) -> bool {
    let cap = u128::from(s.policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    s.buckets.values().any(|b| b.units > cap)
}

/// The part of a stored state that differs, and which way, without the numbers.
fn part(difference: &StateDifference) -> String {
    let way = |more: bool| if more { "above" } else { "below" };
    match difference {
        StateDifference::Policy { .. } => "policy".into(),
        StateDifference::Observed { got, want } => format!("observed time {}", way(got > want)),
        StateDifference::Keys { .. } => "keys".into(),
        StateDifference::Balance { got, want, .. } => format!("balance {}", way(got > want)),
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::catalog::mistakes::{FixedWindowBucket, NoClampOnDecrease};
    use crate::reference::TokenBucket;
    use crate::suite::host::subject::boxed;

    use crate::suite::diagnose::battery::{allow, MS};

    fn policy() -> Policy {
        Policy::new(1, 10, 2).expect("valid")
    }

    #[test]
    fn a_correct_design_does_not_depart() {
        let ops = [
            allow("k", 10, 0),
            allow("k", 1, 250 * MS),
            allow("k", 1, 500 * MS),
        ];
        let s = signature(boxed::<TokenBucket>, policy(), 8, &ops).expect("builds");
        assert!(!s.departs(), "{s:?}");
    }

    #[test]
    fn the_signature_names_the_step_and_cause_not_the_numbers() {
        // Half a second after a spent bucket one token has refilled; a fixed window refills
        // nothing before the second's boundary.
        let ops = [allow("k", 10, 0), allow("k", 1, 500 * MS)];
        let window = signature(boxed::<FixedWindowBucket>, policy(), 8, &ops).expect("builds");
        let rejected = "allow rejected a request the specification admits".to_owned();
        assert_eq!(window.outcome, Some((1, rejected.clone())));
        let at = |step: usize, what: &str| Signature {
            outcome: Some((step, what.to_owned())),
            stored: Stored::Unreported,
        };
        assert!(window.alike(&at(1, &rejected)));
        assert!(!window.alike(&at(0, &rejected)), "another step");
        let early = "allow returned retry_after_nanos below the specification's";
        assert!(!window.alike(&at(1, early)), "another cause");
        // Shown in a design that slips the same way a step later; not in one that never does
        // or slips another way.
        assert!(window.shows_in(&at(2, &rejected)));
        assert!(!window.shows_in(&at(1, early)));
        let spec = signature(boxed::<TokenBucket>, policy(), 8, &ops).expect("builds");
        assert!(!window.shows_in(&spec));
        assert!(
            spec.shows_in(&window),
            "a design that does not depart asks nothing"
        );
    }

    #[test]
    fn a_stored_difference_speaks_only_when_both_report_a_state() {
        let next = Policy::new(2, 5, 2).expect("valid");
        let ops = [
            allow("k", 1, 0),
            Op::ReplacePolicy {
                next,
                expected_version: 1,
                now: 0,
            },
        ];
        let unclamped = signature(boxed::<NoClampOnDecrease>, policy(), 8, &ops).expect("builds");
        assert!(unclamped.departs(), "{unclamped:?}");
        assert_eq!(unclamped.outcome, None);
        let silent = Signature {
            outcome: None,
            stored: Stored::Unreported,
        };
        assert!(silent.alike(&unclamped) && unclamped.alike(&silent));
        let same = Signature {
            outcome: None,
            stored: Stored::Same,
        };
        assert!(!same.alike(&unclamped));
    }
}
