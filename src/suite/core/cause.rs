//! The cause of a failure: which quantity is wrong and which way, without the numbers of the
//! trace that showed it. Two checks that fail with the same cause show one slip of the
//! design, so `cargo test` explains the first in full and points the others at it.
use std::fmt;

use serde::Serialize;

use crate::model::{Op, Outcome};
use crate::{Invariant, LimitError, Mistake};

/// What a failure's first difference from the specification is: the call, the quantity and
/// the direction (`allow returned retry_after_nanos below the specification's`), and the
/// invariant it breaks when it breaks one. Equal causes are the same slip.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// The difference in words, without the trace's numbers.
    pub what: String,
    /// The invariant the difference breaks, if it breaks one (a wrong retry estimate breaks
    /// none: it is an answer, not a stored state).
    pub breaks: Option<Invariant>,
    /// `true` when the difference is in which keys are tracked (how many `key_count` says,
    /// which keys the stored state holds): the key bound's and eviction's concern, R3's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub about_keys: bool,
}

impl Cause {
    /// A cause that breaks no invariant.
    pub fn new(what: impl Into<String>) -> Cause {
        Cause {
            what: what.into(),
            breaks: None,
            about_keys: false,
        }
    }

    /// A cause that breaks `invariant` (I3, the key bound, is about keys).
    pub fn breaking(what: impl Into<String>, invariant: Invariant) -> Cause {
        Cause {
            what: what.into(),
            breaks: Some(invariant),
            about_keys: invariant == Invariant::I3,
        }
    }

    /// A difference in which keys are tracked that breaks no invariant.
    pub fn about_keys(what: impl Into<String>) -> Cause {
        Cause {
            about_keys: true,
            ..Cause::new(what)
        }
    }

    /// The cause of a concurrent counterexample that shows the race `mistake` (the calls
    /// racing in its shrunk scenario name it): what broke, and the invariant it breaks. Two
    /// concurrency checks that find the same race fail for the same cause. `None` for a
    /// mistake that is not a race.
    pub fn of_race(mistake: Mistake) -> Option<Cause> {
        Some(match mistake {
            Mistake::DoubleSpend => Cause::breaking(
                "concurrent spends of one bucket are not one atomic decision",
                Invariant::I2,
            ),
            Mistake::SplitEviction => Cause::breaking(
                "evict_full and a concurrent spend interleave inside each other",
                Invariant::I3,
            ),
            Mistake::SplitCutover => Cause::breaking(
                "replace_policy and a concurrent spend interleave inside each other",
                Invariant::I4,
            ),
            Mistake::SplitKeyBound => Cause::breaking(
                "concurrent new keys are tracked past max_keys",
                Invariant::I3,
            ),
            Mistake::SplitTimeCheck => Cause::new(
                "a concurrent call's time check and the observed time's update interleave",
            ),
            Mistake::TornSnapshot => {
                Cause::new("snapshot() copies a state no order of the concurrent calls produces")
            }
            _ => return None,
        })
    }

    /// `call` returned `quantity` above the specification's (`above`) or below it.
    pub fn quantity(call: &str, quantity: &str, above: bool) -> Cause {
        let way = if above { "above" } else { "below" };
        Cause::new(format!(
            "{call} returned {quantity} {way} the specification's"
        ))
    }

    /// The cause of `op` returning `got` where the specification returns `expected` (the two
    /// differ).
    pub fn of_outcome(op: &Op, expected: &Outcome, got: &Outcome) -> Cause {
        let call = call_name(op);
        match (expected, got) {
            (Outcome::Decision(e), Outcome::Decision(g)) if e.allowed != g.allowed => {
                Cause::new(if g.allowed {
                    format!("{call} admitted a request the specification rejects")
                } else {
                    format!("{call} rejected a request the specification admits")
                })
            }
            (Outcome::Decision(e), Outcome::Decision(g)) if e.whole_tokens != g.whole_tokens => {
                Cause::quantity(call, "whole_tokens", g.whole_tokens > e.whole_tokens)
            }
            (Outcome::Decision(e), Outcome::Decision(g)) => Cause::quantity(
                call,
                "retry_after_nanos",
                g.retry_after_nanos > e.retry_after_nanos,
            ),
            (Outcome::Evicted { removed: e }, Outcome::Evicted { removed: g }) => Cause::new(
                format!("{call} removed {} buckets than the specification", {
                    if g > e {
                        "more"
                    } else {
                        "fewer"
                    }
                }),
            ),
            (Outcome::KeyCount { keys: e }, Outcome::KeyCount { keys: g }) => {
                Cause::about_keys(format!("{call} counted {} keys than the specification", {
                    if g > e {
                        "more"
                    } else {
                        "fewer"
                    }
                }))
            }
            (Outcome::Error(e), Outcome::Error(g)) => Cause::new(format!(
                "{call} returned {} where the specification returns {}",
                error_name(g),
                error_name(e)
            )),
            (Outcome::Error(e), _) => Cause::new(format!(
                "{call} succeeded where the specification returns {}",
                error_name(e)
            )),
            (_, Outcome::Error(g)) => Cause::new(format!(
                "{call} returned {} where the specification succeeds",
                error_name(g)
            )),
            _ => Cause::new(format!("{call} returned another kind of answer")),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

/// The method `op` calls, as a person writes it.
pub(crate) fn call_name(op: &Op) -> &'static str {
    match op {
        Op::Allow { .. } => "allow",
        Op::EvictFull { .. } => "evict_full",
        Op::ReplacePolicy { .. } => "replace_policy",
        Op::KeyCount => "key_count",
        Op::Snapshot => "snapshot",
    }
}

/// The error's variant, without its fields.
fn error_name(e: &LimitError) -> &'static str {
    match e {
        LimitError::InvalidKey => "InvalidKey",
        LimitError::InvalidCost { .. } => "InvalidCost",
        LimitError::TimeWentBackwards { .. } => "TimeWentBackwards",
        LimitError::KeyCapacityReached { .. } => "KeyCapacityReached",
        LimitError::StalePolicyVersion { .. } => "StalePolicyVersion",
        LimitError::InvalidPolicy { .. } => "InvalidPolicy",
        LimitError::InvalidMaxKeys => "InvalidMaxKeys",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decision;

    fn allow() -> Op {
        Op::Allow {
            key: "k".into(),
            cost: 1,
            now: 0,
        }
    }

    fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Outcome {
        Outcome::Decision(Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        })
    }

    #[test]
    fn a_cause_names_the_quantity_and_the_way_not_the_numbers() {
        let early = Cause::of_outcome(
            &allow(),
            &decision(false, 0, 500_000_000),
            &decision(false, 0, 499_999_999),
        );
        let earlier = Cause::of_outcome(
            &allow(),
            &decision(false, 0, 333_333_334),
            &decision(false, 0, 1),
        );
        assert_eq!(early, earlier);
        assert_eq!(
            early.what,
            "allow returned retry_after_nanos below the specification's"
        );
        let late = Cause::of_outcome(&allow(), &decision(false, 0, 1), &decision(false, 0, 2));
        assert_ne!(early, late);
        let admitted = Cause::of_outcome(&allow(), &decision(false, 0, 1), &decision(true, 0, 0));
        assert_eq!(
            admitted.what,
            "allow admitted a request the specification rejects"
        );
        let tokens = Cause::of_outcome(&allow(), &decision(true, 3, 0), &decision(true, 2, 0));
        assert_eq!(
            tokens.what,
            "allow returned whole_tokens below the specification's"
        );
        let error = Cause::of_outcome(
            &allow(),
            &Outcome::Error(LimitError::InvalidKey),
            &decision(true, 0, 0),
        );
        assert_eq!(
            error.what,
            "allow succeeded where the specification returns InvalidKey"
        );
        assert_eq!(error.breaks, None);
    }
}
