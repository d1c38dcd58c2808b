//! The lesson's worked examples, trace table and contract checks as data, and a replay that
//! holds the specification and the reference to them step by step.
//!
//! Each walkthrough lives in one JSON file under `testdata/lesson/` (the format is described
//! in `testdata/README.md`) and is compiled into the crate, so [`walkthroughs`] needs no file
//! system. Every expected outcome in those files is written from the lesson's own numbers;
//! [`Walkthrough::replay`] then runs each step on the [`Model`] and on the reference
//! [`TokenBucket`] and reports the first step where the three disagree.
//!
//! [`Model`]: crate::model::Model
//! [`TokenBucket`]: crate::reference::TokenBucket
//!
//! # Example
//!
//! ```
//! let all = ratelimit_lab::lesson::walkthroughs()?;
//! let trace = all
//!     .iter()
//!     .find(|w| w.id == "burst_rejection_fractional_refill")
//!     .expect("the trace table is part of the lesson");
//! let replay = trace.replay();
//! assert!(replay.failure.is_none());
//! assert_eq!(replay.steps.len(), 4);
//! // After the third row the key holds exactly half a token.
//! assert_eq!(replay.steps[2].balances["k"], 500_000_000);
//! # Ok::<(), ratelimit_lab::lesson::LessonError>(())
//! ```

use std::collections::BTreeSet;

pub mod contention;
mod error;
mod walkthrough;
pub mod words;

// Declared after `walkthrough` so the documentation lists `Walkthrough::replay` after
// `validate_file` and `validate`.
mod replay;

pub use contention::{Contenders, MAX_CONTENDERS};
pub use error::{CheckFailure, LessonError};
pub use replay::{CheckedStep, Replay};
pub use walkthrough::{
    Answer, Baselines, FixedWindowBaseline, SlidingLogBaseline, Step, Walkthrough, FIXED_WINDOW,
    SLIDING_LOG,
};

/// Every lesson file, by file name, with its text compiled in.
macro_rules! lesson_files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../testdata/lesson/", $name)))),*]
    };
}

/// The lesson files in the order they are taught: the trace table, the two worked examples,
/// the change exercise, then one file per contract check.
const FILES: &[(&str, &str)] = lesson_files![
    "burst_rejection_fractional_refill.json",
    "worked_example_1_burst_then_retry.json",
    "worked_example_2_policy_cutover.json",
    "change_exercise_first_pass_at_333333334.json",
    "twenty_contenders_ten_pass.json",
    "fixed_point_boundaries_499999999_500000000.json",
    "evict_full_equivalence.json",
    "evict_full_keeps_depleted_and_partial_buckets.json",
    "key_capacity_error.json",
    "stale_version_rejected.json",
    "clamp_on_capacity_decrease.json",
    "no_top_up_on_capacity_increase.json",
    "new_keys_after_cutover_start_at_new_capacity.json",
    "time_reversal_rejected.json",
    "input_is_validated_before_anything_changes.json",
    "token_bucket_beside_fixed_window_and_sliding_log.json",
    "extremes_max_quantity_and_last_nanosecond.json",
];

/// Every walkthrough of the lesson, in teaching order.
///
/// # Errors
///
/// [`LessonError::Parse`] when a file is not a [`Walkthrough`] in JSON;
/// [`LessonError::Invalid`] when its `id` differs from its file name, an `id` repeats, or it
/// breaks a rule of [`Walkthrough::validate`].
pub fn walkthroughs() -> Result<Vec<Walkthrough>, LessonError> {
    let mut seen = BTreeSet::new();
    let mut all = Vec::with_capacity(FILES.len());
    for &(file, text) in FILES {
        let w: Walkthrough = serde_json::from_str(text).map_err(|e| LessonError::Parse {
            file,
            message: e.to_string(),
        })?;
        let invalid = |reason: String| LessonError::Invalid { file, reason };
        w.validate_file(file).map_err(invalid)?;
        if !seen.insert(w.id.clone()) {
            return Err(invalid(format!("id {:?} is used twice", w.id)));
        }
        all.push(w);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, Outcome};

    #[test]
    fn every_lesson_file_parses_and_is_listed() {
        let all = walkthroughs().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(all.len(), FILES.len());
        let on_disk: BTreeSet<String> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/lesson"))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|name| name.ends_with(".json") && name != "order.json")
                .collect();
        let listed: BTreeSet<String> = FILES.iter().map(|(f, _)| (*f).to_owned()).collect();
        assert_eq!(
            on_disk, listed,
            "every testdata/lesson/*.json file must be in FILES"
        );
    }

    #[test]
    fn the_order_file_gives_the_teaching_order() {
        let text = include_str!("../../testdata/lesson/order.json");
        let order: Vec<String> = serde_json::from_str(text).unwrap();
        let ids: Vec<String> = walkthroughs().unwrap().into_iter().map(|w| w.id).collect();
        assert_eq!(
            order, ids,
            "testdata/lesson/order.json must list FILES in order"
        );
    }

    #[test]
    fn every_walkthrough_replays_without_disagreement() {
        for w in walkthroughs().unwrap() {
            let replay = w.replay();
            assert_eq!(replay.failure, None, "{}", w.id);
            assert_eq!(replay.steps.len(), w.steps.len(), "{}", w.id);
        }
    }

    #[test]
    fn the_lesson_carries_every_seed_number() {
        let all = walkthroughs().unwrap();
        let outcomes: Vec<(&Op, &Outcome)> = all
            .iter()
            .flat_map(|w| w.steps.iter().map(|s| (&s.op, &s.expect)))
            .collect();
        let decision = |pred: &dyn Fn(&Op, &crate::Decision) -> bool| {
            outcomes.iter().any(|(op, o)| match o {
                Outcome::Decision(d) => pred(op, d),
                _ => false,
            })
        };
        let at = |op: &Op, t: u64| op.now() == Some(t);
        // Worked example 1 and the trace table: retry 500000000 after the burst.
        assert!(decision(
            &|_, d| !d.allowed && d.retry_after_nanos == 500_000_000
        ));
        // The change exercise: refused at 333333333 ns, admitted at 333333334 ns.
        assert!(decision(&|op, d| at(op, 333_333_333) && !d.allowed));
        assert!(decision(&|op, d| at(op, 333_333_334) && d.allowed));
        // The boundaries: 499999999 ns is not a token at rate 2; 500000000 ns is.
        assert!(decision(&|op, d| at(op, 499_999_999) && !d.allowed));
        // Worked example 2: one token at cutover, then one more by 0.75 s.
        assert!(decision(&|op, d| at(op, 500_000_000)
            && !d.allowed
            && d.whole_tokens == 1));
        assert!(decision(&|op, d| at(op, 750_000_000) && d.allowed));
        // Errors the seed names: time reversal, key capacity, stale version.
        let error = |f: &dyn Fn(&crate::LimitError) -> bool| {
            outcomes
                .iter()
                .any(|(_, o)| matches!(o, Outcome::Error(e) if f(e)))
        };
        assert!(error(&|e| matches!(
            e,
            crate::LimitError::TimeWentBackwards { .. }
        )));
        assert!(error(&|e| matches!(
            e,
            crate::LimitError::KeyCapacityReached { .. }
        )));
        assert!(error(&|e| matches!(
            e,
            crate::LimitError::StalePolicyVersion { .. }
        )));
        // evict_full at 0.5 s keeps depleted keys; at 5.5 s removes full ones.
        assert!(outcomes.iter().any(|(op, o)| at(op, 5_500_000_000)
            && matches!(o, Outcome::Evicted { removed } if *removed > 0)));
    }

    #[test]
    fn a_wrong_expectation_is_reported_with_both_outcomes() {
        let mut w = walkthroughs()
            .unwrap()
            .into_iter()
            .find(|w| w.id == "worked_example_1_burst_then_retry")
            .unwrap();
        let wrong = Outcome::Decision(crate::Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos: 499_999_999,
        });
        w.steps[1].expect = wrong.clone();
        let replay = w.replay();
        assert_eq!(replay.steps.len(), 1);
        let right = Outcome::Decision(crate::Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos: 500_000_000,
        });
        match replay.failure {
            Some(CheckFailure::Outcome {
                step,
                expected,
                model,
                reference,
                ..
            }) => {
                assert_eq!(step, 2);
                assert_eq!(expected, wrong);
                assert_eq!((model, reference), (right.clone(), right));
            }
            other => panic!("expected an outcome disagreement, got {other:?}"),
        }
    }

    #[test]
    fn unknown_fields_and_bad_policies_do_not_parse() {
        let base = r#"{"id":"x","title":"t","seed":"s","policy":{"version":1,"capacity":10,"tokens_per_second":2},"max_keys":1,"steps":[]"#;
        assert!(serde_json::from_str::<Walkthrough>(&format!("{base}}}")).is_ok());
        assert!(serde_json::from_str::<Walkthrough>(&format!("{base},\"extra\":1}}")).is_err());
        let bad = base.replace("\"capacity\":10", "\"capacity\":0");
        assert!(serde_json::from_str::<Walkthrough>(&format!("{bad}}}")).is_err());
    }
}
