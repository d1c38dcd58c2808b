//! Which requirement a failing sequential trace breaks: the requirement of the step where the
//! design first differs from the specification, read from the (shrunk) trace itself, not from
//! the check that happened to run it. A retry slip caught by a cutover check is an R1 slip;
//! a version guard caught by a check that a refused call changes nothing is an R4 slip.
use crate::model::{Model, Op, Outcome};
use crate::suite::core::failure::FailingTrace;
use crate::{LimitError, Requirement};

use crate::suite::core::cause::Cause;

/// The requirement `trace` breaks, judged from the step where it differs (its last step):
///
/// 1. a step before it that the specification needs to differ there: an accepted
///    `replace_policy` files the failure under R4, an `evict_full` under R3 (a trace the
///    suite prints is shrunk, so an earlier cutover or eviction is one the difference needs);
/// 2. otherwise the differing step itself: a refused key, cost or time on either side
///    (`InvalidKey`, `InvalidCost`, `TimeWentBackwards`: validation, R1's); a
///    `replace_policy` or a policy error (R4); an `evict_full`, a `key_count`, a key refused
///    for the key bound, or a `cause` that breaks I3 or is about which keys are tracked (R3);
///    anything else, an admission or its numbers (R1).
///
/// `None` for an empty trace, or one the specification cannot run (`max_keys` 0).
pub(crate) fn broken_requirement(
    trace: &FailingTrace,
    cause: Option<&Cause>,
) -> Option<Requirement> {
    let (last, before) = trace.ops.split_last()?;
    let mut model = Model::new(trace.policy, trace.max_keys).ok()?;
    let mut after_cutover = false;
    let mut after_eviction = false;
    for op in before {
        let outcome = model.apply(op);
        match op {
            Op::ReplacePolicy { .. } if outcome == Outcome::Replaced => after_cutover = true,
            Op::EvictFull { .. } => after_eviction = true,
            _ => {}
        }
    }
    if after_cutover {
        return Some(Requirement::R4);
    }
    if after_eviction {
        return Some(Requirement::R3);
    }
    let expected = model.apply(last);
    let got = trace.observed.get(before.len());
    let errors = [Some(&expected), got]
        .into_iter()
        .flatten()
        .filter_map(|o| match o {
            Outcome::Error(e) => Some(e),
            _ => None,
        });
    let mut policy_error = false;
    let mut key_bound = false;
    for e in errors {
        match e {
            LimitError::InvalidKey
            | LimitError::InvalidCost { .. }
            | LimitError::TimeWentBackwards { .. } => return Some(Requirement::R1),
            LimitError::StalePolicyVersion { .. } | LimitError::InvalidPolicy { .. } => {
                policy_error = true;
            }
            LimitError::KeyCapacityReached { .. } => key_bound = true,
            LimitError::InvalidMaxKeys => {}
        }
    }
    if policy_error || matches!(last, Op::ReplacePolicy { .. }) {
        return Some(Requirement::R4);
    }
    let about_keys = cause.is_some_and(|c| c.about_keys);
    if key_bound || about_keys || matches!(last, Op::EvictFull { .. } | Op::KeyCount) {
        return Some(Requirement::R3);
    }
    Some(Requirement::R1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, Invariant, Policy};

    fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).expect("a valid policy")
    }

    fn allow(key: &str, now: u64) -> Op {
        Op::Allow {
            key: key.into(),
            cost: 1,
            now,
        }
    }

    fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Outcome {
        Outcome::Decision(Decision {
            allowed,
            whole_tokens,
            retry_after_nanos,
        })
    }

    fn trace(ops: Vec<Op>, observed: Vec<Outcome>) -> FailingTrace {
        FailingTrace {
            policy: policy(1, 1, 2),
            max_keys: 1,
            ops,
            observed,
            snapshot: None,
        }
    }

    #[test]
    fn a_failure_is_filed_under_the_requirement_of_the_step_that_differs() {
        // An early retry: R1, whatever check found it.
        let early = trace(
            vec![allow("k", 0), allow("k", 0)],
            vec![decision(true, 0, 0), decision(false, 0, 499_999_999)],
        );
        assert_eq!(broken_requirement(&early, None), Some(Requirement::R1));
        // The same difference after an accepted cutover: R4.
        let cutover = Op::ReplacePolicy {
            next: policy(2, 1, 4),
            expected_version: 1,
            now: 0,
        };
        let after = trace(
            vec![allow("k", 0), cutover.clone(), allow("k", 0)],
            vec![
                decision(true, 0, 0),
                Outcome::Replaced,
                decision(true, 0, 0),
            ],
        );
        assert_eq!(broken_requirement(&after, None), Some(Requirement::R4));
        // A refused cutover before it does not count; an equal version let through is R4's.
        let equal = Op::ReplacePolicy {
            next: policy(1, 5, 2),
            expected_version: 1,
            now: 0,
        };
        let guard = trace(vec![equal], vec![Outcome::Replaced]);
        assert_eq!(broken_requirement(&guard, None), Some(Requirement::R4));
        // A second key beyond max_keys admitted: R3; a time refused in the wrong order: R1.
        let bound = trace(
            vec![allow("a", 0), allow("b", 0)],
            vec![decision(true, 0, 0), decision(true, 0, 0)],
        );
        assert_eq!(broken_requirement(&bound, None), Some(Requirement::R3));
        let order = trace(
            vec![allow("a", 5), allow("b", 0)],
            vec![
                decision(true, 0, 0),
                Outcome::Error(LimitError::KeyCapacityReached { max_keys: 1 }),
            ],
        );
        assert_eq!(broken_requirement(&order, None), Some(Requirement::R1));
        // After an eviction: R3; an empty trace: none.
        let evicted = trace(
            vec![Op::EvictFull { now: 0 }, allow("k", 0)],
            vec![Outcome::Evicted { removed: 0 }, decision(true, 1, 0)],
        );
        assert_eq!(broken_requirement(&evicted, None), Some(Requirement::R3));
        assert_eq!(broken_requirement(&trace(vec![], vec![]), None), None);
        let stored = Cause::breaking("more stored buckets than max_keys", Invariant::I3);
        let one = trace(vec![allow("a", 0)], vec![decision(true, 0, 0)]);
        assert_eq!(
            broken_requirement(&one, Some(&stored)),
            Some(Requirement::R3)
        );
        // Which keys are stored is R3's, whatever the words; a balance is R1's.
        let keys = Cause::about_keys("the stored keys differ from the specification's");
        assert_eq!(broken_requirement(&one, Some(&keys)), Some(Requirement::R3));
        let balance = Cause::new("a stored balance of keys is below the specification's");
        assert_eq!(
            broken_requirement(&one, Some(&balance)),
            Some(Requirement::R1)
        );
    }
}
