//! What can go wrong: a lesson file that does not load ([`LessonError`]) and the first
//! disagreement of a replay ([`CheckFailure`]), each with its message.

use std::fmt;

use serde::Serialize;

use super::contention::Contenders;
use super::walkthrough::Answer;
#[cfg(doc)]
use super::walkthrough::{Walkthrough, FIXED_WINDOW, SLIDING_LOG};
use crate::model::Outcome;
use crate::{LimitError, Snapshot};

/// Why the lesson data could not be loaded. Only a broken build can produce one: the data is
/// compiled in, and a unit test loads all of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LessonError {
    /// A file is not valid JSON of the [`Walkthrough`] shape.
    Parse {
        /// The file name under `testdata/lesson/`.
        file: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A file parsed but breaks a rule of the format.
    Invalid {
        /// The file name under `testdata/lesson/`.
        file: &'static str,
        /// The rule it breaks.
        reason: String,
    },
}

impl fmt::Display for LessonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LessonError::Parse { file, message } => {
                write!(
                    f,
                    "lesson file testdata/lesson/{file} does not parse: {message}"
                )
            }
            LessonError::Invalid { file, reason } => {
                write!(f, "lesson file testdata/lesson/{file} is invalid: {reason}")
            }
        }
    }
}

impl std::error::Error for LessonError {}

/// The first point at which a replay stopped agreeing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckFailure {
    /// The walkthrough's configuration built no limiter.
    Setup {
        /// Why the limiter could not be built.
        error: LimitError,
    },
    /// The model, the reference and the lesson do not all give the same outcome.
    Outcome {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// What the lesson says.
        expected: Outcome,
        /// What the model returned.
        model: Outcome,
        /// What the reference returned.
        reference: Outcome,
    },
    /// The outcomes agree but the model and the reference hold different states afterwards.
    State {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// The model's state.
        model: Snapshot,
        /// The reference's state (`None` if it reported none).
        reference: Option<Snapshot>,
    },
    /// A baseline's verdict differs from the one the step states.
    Baseline {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// The baseline's name ([`FIXED_WINDOW`] or [`SLIDING_LOG`]).
        baseline: String,
        /// The verdict the walkthrough states.
        expected: Answer,
        /// What the baseline returned: a verdict, or the error it refused the call with.
        actual: Result<Answer, LimitError>,
    },
    /// A contrasted design's outcome is not the one the step states (a wrong outcome it
    /// does not give, or the right outcome where the step says it goes wrong).
    Contrast {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// The catalogued design.
        design: String,
        /// What the step states it returns.
        stated: Outcome,
        /// What it returned.
        actual: Outcome,
    },
    /// A step of many callers: the counts stated, the specification's and the reference's
    /// (on real threads) are not all the same, or the two returned different outcomes.
    Contention {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// The counts the step states.
        expected: Contenders,
        /// The specification's counts.
        model: Contenders,
        /// The reference's counts.
        reference: Contenders,
    },
    /// A contrasted design gives the right outcome at every step: it shows no mistake here.
    ContrastShowsNothing {
        /// The catalogued design.
        design: String,
    },
    /// The shared state after the step breaks invariant I1 or I3.
    Invariant {
        /// The step's position, from `1`.
        step: usize,
        /// The step's action text.
        action: String,
        /// Which invariant, and how.
        detail: String,
    },
}

fn json<T: Serialize + fmt::Debug>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckFailure::Setup { error } => write!(f, "no limiter could be built: {error}"),
            CheckFailure::Outcome {
                step,
                action,
                expected,
                model,
                reference,
            } => write!(
                f,
                "step {step} ({action}): outcomes disagree\n  expected:  {}\n  model:     {}\n  reference: {}",
                json(expected),
                json(model),
                json(reference)
            ),
            CheckFailure::State {
                step,
                action,
                model,
                reference,
            } => write!(
                f,
                "step {step} ({action}): states disagree\n  model:     {}\n  reference: {}",
                json(model),
                reference
                    .as_ref()
                    .map_or_else(|| "no snapshot".to_owned(), json)
            ),
            CheckFailure::Baseline {
                step,
                action,
                baseline,
                expected,
                actual,
            } => write!(
                f,
                "step {step} ({action}): the {baseline} baseline disagrees\n  expected:  {expected}\n  {baseline}: {}",
                match actual {
                    Ok(verdict) => verdict.to_string(),
                    Err(e) => format!("error: {e}"),
                }
            ),
            CheckFailure::Contrast {
                step,
                action,
                design,
                stated,
                actual,
            } => write!(
                f,
                "step {step} ({action}): the contrasted design {design} answers otherwise\n  stated:  {}\n  {design}: {}",
                json(stated),
                json(actual)
            ),
            CheckFailure::Contention {
                step,
                action,
                expected,
                model,
                reference,
            } => write!(
                f,
                "step {step} ({action}): {} callers at once\n  expected:  {} allowed, {} rejected\n  model:     {} allowed, {} rejected\n  reference: {} allowed, {} rejected{}",
                expected.threads,
                expected.allowed,
                expected.rejected,
                model.allowed,
                model.rejected,
                reference.allowed,
                reference.rejected,
                if model == reference && model == expected {
                    " (the same counts, but not the same outcomes)"
                } else {
                    ""
                }
            ),
            CheckFailure::ContrastShowsNothing { design } => write!(
                f,
                "the contrasted design {design} gives the right outcome at every step: it shows no mistake here"
            ),
            CheckFailure::Invariant {
                step,
                action,
                detail,
            } => write!(f, "step {step} ({action}): {detail}"),
        }
    }
}

impl std::error::Error for CheckFailure {}
