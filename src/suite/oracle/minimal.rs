//! Minimal traces for the fixed scenarios: a scenario check fails on the trace it was written
//! with, which can hold steps the failure does not need. The failing trace is shrunk by
//! dropping steps, one at a time, as long as the design still departs from the specification
//! at the same last call; numbers are then simplified the same way (times and costs halved,
//! or set to 1), as long as the failure stays.
//!
//! Only traces the plain differential probe fails on are shrunk (a check's own assertion
//! beyond the probe is kept as it was), so a shrunk trace is always one a person can replay
//! against the specification step by step. A panic is the same failure only as a panic at the
//! last call of the shorter trace.
use crate::model::Op;
use crate::suite::host::subject::Subject;

use crate::suite::core::failure::Failure;
use crate::suite::oracle::probe::Probe;

/// The longest trace shrunk; longer ones (a check that fills many keys) are kept whole.
const MAX_STEPS: usize = 64;

/// `failure`, with its trace shrunk when a shorter or simpler one fails at the same call.
pub(crate) fn shrunk(subject: Subject, failure: Failure) -> Failure {
    let Some(replay) = failure.replay.clone() else {
        return failure;
    };
    if replay.ops.is_empty() || replay.ops.len() > MAX_STEPS {
        return failure;
    }
    // A key count the probe appended as a step of its own is checked by the probe after the
    // call before it anyway.
    let mut ops = replay.ops.clone();
    if ops.len() > 1 && ops.last() == Some(&Op::KeyCount) {
        ops.pop();
    }
    // The same failure: at the same last call, in the outcome or in the stored state as
    // before, resembling the same mistake when it resembled one.
    let snapshot_only = |f: &Failure| f.replay.as_ref().is_some_and(|r| r.snapshot.is_some());
    let same = |f: &Failure| {
        snapshot_only(f) == snapshot_only(&failure)
            && (failure.mistake.is_none() || f.mistake == failure.mistake)
    };
    let fails = |ops: &[Op]| {
        fails_at_last(
            subject,
            replay.policy,
            replay.max_keys,
            ops,
            failure.panicked,
        )
        .filter(|f| same(f))
    };
    // The whole trace must fail through the probe at its last call, or there is nothing
    // this can shrink faithfully.
    let Some(mut best) = fails(&ops) else {
        return failure;
    };
    let original = ops.len();
    let mut i = 0;
    while i + 1 < ops.len() {
        let mut candidate = ops.clone();
        candidate.remove(i);
        match fails(&candidate) {
            Some(f) => {
                ops = candidate;
                best = f;
            }
            None => i += 1,
        }
    }
    // Two requests of one key at one time before the last call become one request of both
    // costs (ten spends of one token become one spend of ten), as long as the failure stays.
    let mut i = 0;
    while i + 2 < ops.len() {
        match merged(&ops[i], &ops[i + 1]) {
            Some(one) => {
                let mut candidate = ops.clone();
                candidate.splice(i..i + 2, [one]);
                match fails(&candidate) {
                    Some(f) => {
                        ops = candidate;
                        best = f;
                    }
                    None => i += 1,
                }
            }
            None => i += 1,
        }
    }
    // The last call is the failure's own; only the calls before it are simplified.
    for i in 0..ops.len().saturating_sub(1) {
        for simpler in simpler_ops(&ops[i]) {
            let mut candidate = ops.clone();
            candidate[i] = simpler;
            if let Some(f) = fails(&candidate) {
                ops = candidate;
                best = f;
                break;
            }
        }
    }
    if ops == replay.ops || (ops.len() == original && best.replay == failure.replay) {
        return failure;
    }
    let note = if ops.len() < original {
        format!(
            "(the check's own trace, {original} steps, shrunk to the {} that still fail at the \
             same call)",
            ops.len()
        )
    } else {
        "(the check's own trace, with its numbers simplified where the failure stays)".to_string()
    };
    best.push_detail(&note);
    Failure {
        mistake: best.mistake.or(failure.mistake),
        ..best
    }
}

/// The probe's failure when `ops`, run on a fresh design and specification, first depart at
/// the last call, by a panic exactly when `panicked`; `None` when they agree throughout,
/// depart earlier, or depart otherwise.
fn fails_at_last(
    subject: Subject,
    policy: crate::Policy,
    max_keys: usize,
    ops: &[Op],
    panicked: bool,
) -> Option<Failure> {
    let mut probe = Probe::of(subject, policy, max_keys).ok()?;
    for (i, op) in ops.iter().enumerate() {
        if let Err(f) = probe.run(op.clone()) {
            return (i + 1 == ops.len() && f.panicked == panicked).then_some(f);
        }
    }
    None
}

/// One request for the key and time of two consecutive requests `a` and `b`, costing both.
fn merged(a: &Op, b: &Op) -> Option<Op> {
    match (a, b) {
        (
            Op::Allow { key, cost, now },
            Op::Allow {
                key: key_b,
                cost: cost_b,
                now: now_b,
            },
        ) if key == key_b && now == now_b => Some(Op::Allow {
            key: key.clone(),
            cost: cost.checked_add(*cost_b)?,
            now: *now,
        }),
        _ => None,
    }
}

/// Simpler versions of `op`, simplest first: times and costs of 1 or halved, times of 0.
fn simpler_ops(op: &Op) -> Vec<Op> {
    let smaller = |v: u64| -> Vec<u64> {
        let mut out: Vec<u64> = [0, 1, v / 2].into_iter().filter(|s| *s < v).collect();
        out.dedup();
        out
    };
    match op {
        Op::Allow { key, cost, now } => {
            let mut out: Vec<Op> = smaller(*now)
                .into_iter()
                .map(|now| Op::Allow {
                    key: key.clone(),
                    cost: *cost,
                    now,
                })
                .collect();
            out.extend(
                smaller(*cost)
                    .into_iter()
                    .filter(|c| *c >= 1)
                    .map(|cost| Op::Allow {
                        key: key.clone(),
                        cost,
                        now: *now,
                    }),
            );
            out
        }
        Op::EvictFull { now } => smaller(*now)
            .into_iter()
            .map(|now| Op::EvictFull { now })
            .collect(),
        Op::ReplacePolicy {
            next,
            expected_version,
            now,
        } => smaller(*now)
            .into_iter()
            .map(|now| Op::ReplacePolicy {
                next: *next,
                expected_version: *expected_version,
                now,
            })
            .collect(),
        Op::KeyCount | Op::Snapshot => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::mistakes::FloorRetryEstimate;
    use crate::reference::TokenBucket;
    use crate::Policy;

    fn allow(key: &str, cost: u64, now: u64) -> Op {
        Op::Allow {
            key: key.into(),
            cost,
            now,
        }
    }

    /// The trace the probe builds for `ops`, as its failure.
    fn failing(subject: Subject, policy: Policy, ops: &[Op]) -> Failure {
        let mut probe = Probe::of(subject, policy, 8).expect("builds");
        for op in ops {
            if let Err(f) = probe.run(op.clone()) {
                return f;
            }
        }
        panic!("the trace did not fail");
    }

    #[test]
    fn steps_the_failure_does_not_need_are_dropped_and_numbers_simplified() {
        let policy = Policy::new(1, 1, 3).expect("valid");
        // An unrelated key, a spend, an idle refill, then the spend whose retry is early.
        let ops = [
            allow("other", 1, 0),
            allow("k", 1, 5),
            allow("other", 1, 400_000_000),
            allow("k", 1, 400_000_000),
            allow("k", 1, 400_000_000),
        ];
        let before = failing(Subject::of::<FloorRetryEstimate>(), policy, &ops);
        assert_eq!(before.trace.len(), 5);
        let after = shrunk(Subject::of::<FloorRetryEstimate>(), before);
        let replay = after.replay.as_ref().expect("a replay");
        assert!(replay.ops.len() <= 2, "{:?}", replay.ops);
        assert!(
            after
                .detail
                .as_deref()
                .unwrap_or_default()
                .contains("5 steps, shrunk to the"),
            "{:?}",
            after.detail
        );
        assert!(fails_at_last(
            Subject::of::<FloorRetryEstimate>(),
            policy,
            8,
            &replay.ops,
            false
        )
        .is_some());
    }

    #[test]
    fn requests_of_one_key_at_one_time_merge_into_one() {
        // The twenty contenders' calls one at a time: ten spends of one token empty the
        // bucket, and the eleventh's retry (a third of a second) is early. One spend of ten shows it as well.
        let policy = Policy::new(1, 10, 3).expect("valid");
        let ops: Vec<Op> = (0..11).map(|_| allow("k", 1, 0)).collect();
        let subject = Subject::of::<FloorRetryEstimate>();
        let before = failing(subject, policy, &ops);
        assert_eq!(before.trace.len(), 11);
        let after = shrunk(subject, before);
        let replay = after.replay.as_ref().expect("a replay");
        assert_eq!(replay.ops, [allow("k", 10, 0), allow("k", 1, 0)]);
        assert_eq!(after.trace.len(), 2);
    }

    /// The reference, but a cutover panics while a key is tracked.
    #[derive(Debug)]
    struct PanicsAtCutover(TokenBucket);

    impl crate::Limiter for PanicsAtCutover {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, crate::LimitError> {
            TokenBucket::new(policy, max_keys).map(PanicsAtCutover)
        }
        fn allow(
            &self,
            key: &str,
            cost: u64,
            now: u64,
        ) -> Result<crate::Decision, crate::LimitError> {
            self.0.allow(key, cost, now)
        }
        fn evict_full(&self, now: u64) -> Result<usize, crate::LimitError> {
            self.0.evict_full(now)
        }
        fn replace_policy(
            &self,
            next: Policy,
            expected: u64,
            now: u64,
        ) -> Result<(), crate::LimitError> {
            assert_eq!(self.0.key_count(), 0, "a tracked key at a cutover");
            self.0.replace_policy(next, expected, now)
        }
        fn key_count(&self) -> usize {
            self.0.key_count()
        }
        fn snapshot(&self) -> Option<crate::Snapshot> {
            self.0.snapshot()
        }
    }

    #[test]
    fn a_panic_is_shrunk_to_a_shorter_trace_that_panics_at_its_last_call() {
        let policy = Policy::new(1, 10, 2).expect("valid");
        let next = Policy::new(2, 5, 2).expect("valid");
        let ops = [
            allow("a", 1, 0),
            allow("b", 4, 0),
            allow("a", 1, 500_000_000),
            Op::ReplacePolicy {
                next,
                expected_version: 1,
                now: 600_000_000,
            },
        ];
        let subject = Subject::of::<PanicsAtCutover>();
        crate::suite::core::quiet_panics::begin();
        let before = failing(subject, policy, &ops);
        let after = shrunk(subject, before.clone());
        crate::suite::core::quiet_panics::end();
        assert!(before.panicked);
        assert!(after.panicked, "still the panic");
        let replay = after.replay.as_ref().expect("a replay");
        assert_eq!(replay.ops.len(), 2, "{:?}", replay.ops);
        assert!(matches!(replay.ops.last(), Some(Op::ReplacePolicy { .. })));
        assert!(after.summary.contains("panicked"), "{}", after.summary);
    }

    #[test]
    fn a_failure_the_probe_cannot_reproduce_is_kept_as_it_was() {
        let policy = Policy::new(1, 10, 2).expect("valid");
        let mut f = Failure::new("a check's own assertion");
        f.replay = Some(crate::suite::core::failure::FailingTrace {
            policy,
            max_keys: 8,
            ops: vec![allow("k", 1, 0)],
            observed: Vec::new(),
            snapshot: None,
        });
        let kept = shrunk(Subject::of::<TokenBucket>(), f.clone());
        assert_eq!(kept, f);
    }
}
