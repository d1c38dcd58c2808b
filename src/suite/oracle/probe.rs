//! The differential runner behind every sequential check: each operation goes to the design
//! and to the specification, and both answers, the black-box invariants and (for designs
//! with a [`Snapshot`]) the white-box ones are compared after every step.
use crate::suite::host::subject::Subject;

use crate::model::{Model, Op, Outcome, ShownKey};
use crate::{LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN};

use crate::model::same_state::StateDifference;
use crate::suite::core::cause::{call_name, Cause};
use crate::suite::core::failure::FailingTrace;
use crate::suite::core::failure::Failure;
use crate::suite::core::failure::TraceRow;
use crate::suite::core::panics::guarded;
use crate::suite::oracle::difference::{difference_note, removed_keys, snapshot_change};
use crate::{Invariant, Mistake};

/// Builds a design, reporting an error or a panic as a failure.
pub(crate) fn build(
    subject: Subject,
    policy: Policy,
    max_keys: usize,
) -> Result<Box<dyn Limiter>, Failure> {
    match guarded(|| subject.build(policy, max_keys)) {
        Ok(Ok(design)) => Ok(design),
        Ok(Err(e)) => Err(Failure::new(format!(
            "new({policy}, max_keys {max_keys}) returned the error \"{e}\"; the specification builds a limiter"
        ))),
        Err(msg) => Err(Failure::new(format!(
            "new({policy}, max_keys {max_keys}) panicked: {msg}"
        ))
        .as_panic()),
    }
}

/// The differential runner: a design and the specification, driven in lock step. After
/// every operation it compares the outcomes, the key count (never above `max_keys`), that an
/// error changed nothing, and, when the design has a [`Snapshot`], I1 on every stored bucket,
/// I3 and the stored state's equivalence to the specification's (same keys, policy and
/// observed time, same balance at that time). The first difference is a [`Failure`] with the
/// whole trace so far, replayable.
pub struct Probe {
    design: Box<dyn Limiter>,
    model: Model,
    rows: Vec<TraceRow>,
    replay: FailingTrace,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("model", &self.model)
            .field("rows", &self.rows)
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}

impl Probe {
    /// A fresh `L` and specification under `policy` and `max_keys`.
    ///
    /// # Errors
    ///
    /// A failure when the design's `new` returns an error or panics (or `max_keys` is `0`,
    /// which the specification refuses).
    pub fn new<L: Limiter>(policy: Policy, max_keys: usize) -> Result<Self, Failure> {
        Probe::of(Subject::of::<L>(), policy, max_keys)
    }

    /// [`Probe::new`] for a design given as a [`Subject`].
    ///
    /// # Errors
    ///
    /// As [`Probe::new`].
    pub fn of(subject: Subject, policy: Policy, max_keys: usize) -> Result<Self, Failure> {
        let model = Model::new(policy, max_keys)
            .map_err(|e| Failure::new(format!("the check itself is misconfigured: {e}")))?;
        Ok(Probe {
            design: build(subject, policy, max_keys)?,
            model,
            rows: Vec::new(),
            replay: FailingTrace {
                policy,
                max_keys,
                ops: Vec::new(),
                observed: Vec::new(),
                snapshot: None,
            },
        })
    }

    fn fail(&self, summary: String) -> Failure {
        Failure::new(summary)
            .with_trace(self.rows.clone())
            .with_replay(self.replay.clone())
    }

    /// `allow` on both sides.
    pub(crate) fn allow(&mut self, key: &str, cost: u64, now: u64) -> Result<Outcome, Failure> {
        self.run(Op::Allow {
            key: key.to_string(),
            cost,
            now,
        })
    }

    /// `evict_full` on both sides.
    pub(crate) fn evict_full(&mut self, now: u64) -> Result<Outcome, Failure> {
        self.run(Op::EvictFull { now })
    }

    /// `replace_policy` on both sides.
    pub(crate) fn replace(
        &mut self,
        next: Policy,
        expected: u64,
        now: u64,
    ) -> Result<Outcome, Failure> {
        self.run(Op::ReplacePolicy {
            next,
            expected_version: expected,
            now,
        })
    }

    /// The specification's stored state after the operations so far: what a correct design's
    /// [`Limiter::snapshot`] describes (the same state by [`Snapshot`]'s contract, not
    /// necessarily the same numbers). The specification itself stays inside the harness.
    pub fn specified(&self) -> Snapshot {
        self.model.snapshot()
    }

    /// The design under test.
    pub fn design(&self) -> &dyn Limiter {
        self.design.as_ref()
    }

    /// Runs `op` on both sides and checks everything observable afterwards; returns the
    /// outcome both agree on.
    ///
    /// # Errors
    ///
    /// The first difference, or a panic of the design, with the trace that shows it.
    pub fn run(&mut self, op: Op) -> Result<Outcome, Failure> {
        let before = self.snapshot()?;
        let spec_keys: Vec<String> = self.model.buckets().keys().cloned().collect();
        let got = guarded(|| op.run_on(&*self.design));
        let expected = self.model.apply(&op);
        let step = self.rows.len() + 1;
        let mut expected_text = expected.to_string();
        let mut got_text = match &got {
            Ok(outcome) => outcome.to_string(),
            Err(msg) => format!("panicked: {msg}"),
        };
        if matches!(op, Op::EvictFull { .. }) {
            // An eviction names the keys it removed: the specification's always, the
            // design's when it shows its state.
            let spec_after = self.model.buckets();
            expected_text.push_str(&removed_keys(
                spec_keys.iter().filter(|k| !spec_after.contains_key(*k)),
            ));
            if let (Some(before), Ok(Outcome::Evicted { .. })) = (&before, &got) {
                if let Ok(Some(after)) = self.snapshot() {
                    got_text.push_str(&removed_keys(
                        before
                            .buckets
                            .keys()
                            .filter(|k| !after.buckets.contains_key(*k)),
                    ));
                }
            }
        }
        self.rows.push(TraceRow {
            step,
            action: op.to_string(),
            expected: expected_text,
            got: got_text,
        });
        self.replay.ops.push(op.clone());
        let got = match got {
            Ok(outcome) => {
                self.replay.observed.push(outcome.clone());
                outcome
            }
            Err(msg) => {
                return Err(self
                    .fail(format!("step {step}: {op} panicked: {msg}"))
                    .as_panic()
                    .because(Cause::new(format!("{} panicked: {msg}", call_name(&op)))))
            }
        };
        if !got.matches(&expected) {
            return Err(self
                .fail(format!(
                    "step {step}: {op} returned \"{got}\"; the specification says \"{expected}\""
                ))
                .with_detail(difference_note(&expected, &got))
                .because(Cause::of_outcome(&op, &expected, &got)));
        }
        self.check_key_count(step, matches!(expected, Outcome::Error(_)))?;
        if let (Some(before), Outcome::Error(e)) = (&before, &expected) {
            let after = self.snapshot()?;
            if !after
                .as_ref()
                .is_some_and(|after| crate::model::same_state::same(after, before))
            {
                let change = snapshot_change(before, after.as_ref());
                self.replay.snapshot = after;
                return Err(self
                    .fail(format!(
                        "step {step}: {op} returned the error \"{e}\" but changed the state: {change}"
                    ))
                    .resembling(Mistake::MutationBeforeValidation)
                    .because(Cause::new(format!(
                        "{} returned an error but changed the state",
                        call_name(&op)
                    ))));
            }
        }
        self.check_snapshot(step)?;
        Ok(got)
    }

    fn snapshot(&self) -> Result<Option<Snapshot>, Failure> {
        guarded(|| self.design.snapshot())
            .map_err(|msg| self.fail(format!("snapshot() panicked: {msg}")).as_panic())
    }

    /// I3 and the key count after `step`, whose call the specification refused with an
    /// error when `errored` (the count was right before it: a count that moved on an error
    /// is the error changing the state, whichever way it moved).
    fn check_key_count(&mut self, step: usize, errored: bool) -> Result<(), Failure> {
        let expected = self.model.buckets().len();
        let got = guarded(|| self.design.key_count()).map_err(|msg| {
            self.fail(format!("key_count() after step {step} panicked: {msg}"))
                .as_panic()
        })?;
        if got != expected {
            // The observation becomes a step of its own, so the trace replays it.
            self.rows.push(TraceRow {
                step: step + 1,
                action: Op::KeyCount.to_string(),
                expected: Outcome::KeyCount { keys: expected }.to_string(),
                got: Outcome::KeyCount { keys: got }.to_string(),
            });
            self.replay.ops.push(Op::KeyCount);
            self.replay.observed.push(Outcome::KeyCount { keys: got });
        }
        let seen = if errored {
            Mistake::MutationBeforeValidation
        } else {
            Mistake::UntrackedKeys
        };
        if got > self.model.max_keys() {
            return Err(self
                .fail(format!(
                    "I3: after step {step} key_count() is {got}, above max_keys {}",
                    self.model.max_keys()
                ))
                .resembling(seen)
                .because(Cause::breaking("key_count() above max_keys", Invariant::I3)));
        }
        if got != expected {
            let way = if got > expected { "more" } else { "fewer" };
            let failure = self
                .fail(format!(
                    "after step {step} key_count() is {got}; the specification tracks {expected} keys"
                ))
                .because(Cause::about_keys(format!(
                    "the design tracks {way} keys than the specification"
                )));
            return Err(if errored {
                let mut failure = failure.resembling(seen);
                failure.push_detail("The call returned an error, yet the key count moved.");
                failure
            } else {
                failure
            });
        }
        Ok(())
    }

    /// White-box: I1 on every stored bucket, I3, and the stored state equivalent to the
    /// specification's (same keys, same policy and observed time, same balance at the
    /// observed time).
    fn check_snapshot(&mut self, step: usize) -> Result<(), Failure> {
        let Some(got) = self.snapshot()? else {
            return Ok(());
        };
        self.replay.snapshot = Some(got.clone());
        let want = self.model.snapshot();
        let policy = got.policy;
        let cap = u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN);
        for (key, b) in &got.buckets {
            if b.units > cap {
                return Err(self
                    .fail(format!(
                        "I1: after step {step} the snapshot stores {} units for {}, above capacity {} × 10⁹",
                        b.units,
                        ShownKey(key),
                        policy.capacity()
                    ))
                    .because(Cause::breaking(
                        "a stored balance above capacity",
                        Invariant::I1,
                    )));
            }
            if b.last_nanos > got.observed_nanos {
                return Err(self
                    .fail(format!(
                        "after step {step} the snapshot dates {} at {} ns, after the observed time {} ns",
                        ShownKey(key),
                        b.last_nanos, got.observed_nanos
                    ))
                    .because(Cause::new("a bucket dated after the observed time")));
            }
        }
        if got.buckets.len() > self.model.max_keys() {
            return Err(self
                .fail(format!(
                    "I3: after step {step} the snapshot holds {} buckets, above max_keys {}",
                    got.buckets.len(),
                    self.model.max_keys()
                ))
                .because(Cause::breaking(
                    "more stored buckets than max_keys",
                    Invariant::I3,
                )));
        }
        if let Err(difference) = crate::model::same_state::compare(&got, &want) {
            return Err(self
                .fail(format!(
                    "after step {step} the stored state differs: {difference}"
                ))
                .because(stored_difference(&difference)));
        }
        self.replay.snapshot = None;
        Ok(())
    }
}

/// The cause of a stored state that differs: which part of it, and which way.
fn stored_difference(difference: &StateDifference) -> Cause {
    let way = |more: bool| if more { "above" } else { "below" };
    match difference {
        StateDifference::Policy { .. } => {
            Cause::new("the stored policy differs from the specification's")
        }
        StateDifference::Observed { got, want } => Cause::new(format!(
            "the stored observed time is {} the specification's",
            way(got > want)
        )),
        StateDifference::Keys { .. } => {
            Cause::about_keys("the stored keys differ from the specification's")
        }
        StateDifference::Balance { got, want, .. } => Cause::new(format!(
            "a stored balance is {} the specification's at the observed time",
            way(got > want)
        )),
    }
}

/// The error the specification gives for a misbuilt limiter.
pub(crate) fn expect_new_error(
    subject: Subject,
    policy: Policy,
    max_keys: usize,
    want: LimitError,
) -> Result<(), Failure> {
    match guarded(|| subject.build(policy, max_keys)) {
        Ok(Err(e)) if e == want => Ok(()),
        Ok(Err(e)) => Err(Failure::new(format!(
            "new({policy}, max_keys {max_keys}) returned \"{e}\"; the specification says \"{want}\""
        ))),
        Ok(Ok(_)) => {
            let failure = Failure::new(format!(
                "new({policy}, max_keys {max_keys}) built a limiter; the specification refuses with \"{want}\""
            ));
            // A limiter built with no room for a key can only be one without a key bound.
            Err(if want == LimitError::InvalidMaxKeys {
                failure.resembling(Mistake::UntrackedKeys)
            } else {
                failure
            })
        }
        Err(msg) => Err(Failure::new(format!(
            "new({policy}, max_keys {max_keys}) panicked: {msg}"
        ))
        .as_panic()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::oracle::difference::retry_note;
    use crate::Decision;

    fn decision(retry_after_nanos: u64) -> Decision {
        Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos,
        }
    }

    #[test]
    fn an_eviction_row_names_the_keys_removed_on_both_sides() {
        let policy = Policy::new(1, 10, 2).expect("valid");
        let mut probe =
            Probe::new::<crate::reference::TokenBucket>(policy, 8).expect("the reference builds");
        for (key, cost) in [("a", 10), ("b", 1), ("c", 1)] {
            probe.allow(key, cost, 0).expect("the reference agrees");
        }
        probe
            .evict_full(1_000_000_000)
            .expect("the reference agrees");
        let row = probe.rows.last().expect("a row");
        assert_eq!(row.expected, "evicted 2 (\"b\", \"c\")");
        assert_eq!(row.got, row.expected, "the reference shows its state");
        assert_eq!(removed_keys(std::iter::empty()), "");
        let many: Vec<String> = (0..7).map(|i| i.to_string()).collect();
        assert_eq!(
            removed_keys(many.iter()),
            " (\"0\", \"1\", \"2\", \"3\", \"4\", … 2 more)"
        );
    }

    #[test]
    fn a_retry_note_says_by_how_much_and_never_calls_a_capped_wait_too_late() {
        let early = retry_note(&decision(500), &decision(200));
        assert!(early.contains("too early by 300 ns"), "{early}");
        let late = retry_note(&decision(500), &decision(800));
        assert!(late.contains("too late by 300 ns"), "{late}");
        let capped = retry_note(&decision(crate::MAX_QUANTITY), &decision(u64::MAX));
        assert!(!capped.contains("too late"), "{capped}");
        assert!(capped.contains("the true wait exceeds both"), "{capped}");
    }

    #[test]
    fn a_snapshot_change_names_each_field_that_changed() {
        let policy = Policy::new(1, 10, 2).expect("valid");
        let bucket = |units, last_nanos| crate::BucketState { units, last_nanos };
        let before = Snapshot {
            policy,
            observed_nanos: 10,
            buckets: [
                ("k".to_owned(), bucket(5, 10)),
                ("gone".to_owned(), bucket(1, 0)),
            ]
            .into_iter()
            .collect(),
        };
        let mut after = before.clone();
        after.observed_nanos = 20;
        after.buckets.remove("gone");
        after.buckets.insert("k".to_owned(), bucket(4, 20));
        after.buckets.insert("new".to_owned(), bucket(9, 20));
        let text = snapshot_change(&before, Some(&after));
        for part in [
            "the observed time went from 10 ns to 20 ns",
            "\"k\" went from 5 units at 10 ns to 4 units at 20 ns",
            "\"new\" was added",
            "\"gone\" was removed",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
        assert_eq!(
            snapshot_change(&before, None),
            "the design stopped reporting a snapshot"
        );
    }
}
