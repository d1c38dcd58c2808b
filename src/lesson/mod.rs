//! The lesson's worked examples, trace table and contract checks as data, and a replay that
//! holds the specification and the reference to them step by step.
//!
//! Each walkthrough lives in one JSON file under `testdata/lesson/` (the format is described
//! in `testdata/README.md`) and is compiled into the crate, so [`walkthroughs`] needs no file
//! system. Every expected outcome in those files is written from the lesson's own numbers;
//! [`Walkthrough::replay`] then runs each step on the [`Model`] and on the reference
//! [`TokenBucket`] and reports the first step where the three disagree.
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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

pub mod contention;
pub mod words;

pub use contention::{Contenders, MAX_CONTENDERS};

use crate::model::{Model, Op, Outcome};
use crate::reference::{FixedWindow, SlidingLog, TokenBucket};
use crate::{LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN};

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

/// One worked example, trace or contract check of the lesson: a limiter configuration and the
/// steps applied to it, each with the outcome the lesson states.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Walkthrough {
    /// Stable identifier, equal to the file name without `.json` (for example
    /// `burst_rejection_fractional_refill`).
    pub id: String,
    /// A one-line human title.
    pub title: String,
    /// The lesson sentence(s) this walkthrough comes from, quoted verbatim.
    pub seed: String,
    /// The policy the limiter starts with.
    pub policy: Policy,
    /// The bound on tracked keys; at least `1`.
    pub max_keys: usize,
    /// Designs with another contract that take the same calls beside the token bucket (the
    /// seed's fixed-window and sliding-log comparison); each step then states their verdicts
    /// in [`Step::beside`].
    #[serde(default, skip_serializing_if = "Baselines::is_empty")]
    pub baselines: Baselines,
    /// Catalogued wrong designs (names as `ratelimit-lab grade` lists them)
    /// that take the same steps, to show each one's mistake as the wrong outcome it gives
    /// next to the right one; see [`Step::contrast`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contrast: Vec<String>,
    /// The steps, applied in order to one limiter; never empty.
    pub steps: Vec<Step>,
}

/// The baselines a [`Walkthrough`] runs beside the token bucket. Each admits unit calls on
/// one key, so a walkthrough with a baseline has only `allow` steps of cost `1` on one key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baselines {
    /// The seed's [`FixedWindow`]: at most `capacity` calls
    /// per one-second window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_window: Option<FixedWindowBaseline>,
    /// A [`SlidingLog`]: at most `capacity` calls in any
    /// window of `window_nanos`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_log: Option<SlidingLogBaseline>,
}

impl Baselines {
    /// Whether no baseline is configured.
    pub fn is_empty(&self) -> bool {
        self.fixed_window.is_none() && self.sliding_log.is_none()
    }

    /// The configured baselines' names, in a fixed order (`fixed_window`, `sliding_log`).
    pub fn names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.fixed_window.is_some() {
            names.push(FIXED_WINDOW);
        }
        if self.sliding_log.is_some() {
            names.push(SLIDING_LOG);
        }
        names
    }
}

/// The name of the fixed-window baseline in [`Step::beside`].
pub const FIXED_WINDOW: &str = "fixed_window";
/// The name of the sliding-log baseline in [`Step::beside`].
pub const SLIDING_LOG: &str = "sliding_log";

/// The configuration of the fixed-window baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedWindowBaseline {
    /// Calls admitted per one-second window, in `1..=MAX_QUANTITY`.
    pub capacity: u64,
}

/// The configuration of the sliding-log baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlidingLogBaseline {
    /// Calls admitted in any window, in `1..=MAX_QUANTITY`.
    pub capacity: u64,
    /// The window's length in nanoseconds; at least `1`.
    pub window_nanos: u64,
}

/// A baseline's answer to one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The call was admitted.
    Admitted,
    /// The call was refused for now.
    Rejected,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Admitted => "admitted",
            Verdict::Rejected => "rejected",
        })
    }
}

/// One step of a [`Walkthrough`]: an operation and the outcome the lesson expects of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the step does, in words (for the trace table, the lesson's own "Action" text).
    pub action: String,
    /// The operation to run.
    pub op: Op,
    /// The outcome the lesson's numbers give; a replay fails unless both the model and the
    /// reference return exactly this.
    pub expect: Outcome,
    /// The lesson's own words for the outcome, quoted verbatim, where it states one in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_outcome: Option<String>,
    /// The requirement or invariant the step demonstrates.
    pub invariant: String,
    /// Each configured baseline's verdict on the same call, by name ([`FIXED_WINDOW`],
    /// [`SLIDING_LOG`]); exactly the walkthrough's baselines, or empty when it has none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub beside: BTreeMap<String, Verdict>,
    /// For each contrasted design (see [`Walkthrough::contrast`]) whose outcome differs from
    /// [`expect`](Step::expect) at this step, that wrong outcome; a design not named here
    /// must return `expect`. Checked like `expect` on every replay.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub contrast: BTreeMap<String, Outcome>,
    /// When set, `op` (an `allow`) is made by this many callers at once, and the counts say
    /// how many are allowed and rejected; [`expect`](Step::expect) is then the outcome of the
    /// call that comes last (the same in every order, since the calls are identical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contenders: Option<Contenders>,
}

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

/// A step that passed: the model, the reference and the lesson agree on its outcome, and the
/// model and the reference hold the same state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedStep {
    /// The step's position, from `1`.
    pub number: usize,
    /// The outcome all three agree on.
    pub outcome: Outcome,
    /// The model's observed time after the step: the instant `balances` refer to.
    pub at_nanos: u64,
    /// The model's exact balance, in units, of every tracked key at `at_nanos` (refilled to
    /// that instant, not merely as last stored).
    pub balances: BTreeMap<String, u128>,
    /// The state after the step, identical in the model and the reference.
    pub snapshot: Snapshot,
    /// Each baseline's verdict on the step, as stated and as the baseline returned.
    pub beside: BTreeMap<String, Verdict>,
    /// Each contrasted design's outcome where it differs from the right one.
    pub contrast: BTreeMap<String, Outcome>,
    /// For a step of many callers, the counts the specification and the reference agree on.
    pub contenders: Option<Contenders>,
}

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
        expected: Verdict,
        /// What the baseline returned: a verdict, or the error it refused the call with.
        actual: Result<Verdict, LimitError>,
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

/// The result of [`Walkthrough::replay`]: every step that passed, in order, and the failure
/// that stopped it, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The steps that passed, in order; all of them when `failure` is `None`.
    pub steps: Vec<CheckedStep>,
    /// The first disagreement; `None` when every step passed.
    pub failure: Option<CheckFailure>,
}

impl Walkthrough {
    /// [`Walkthrough::validate`] for the walkthrough of the file called `file`, whose name
    /// without `.json` must be its `id`.
    ///
    /// # Errors
    ///
    /// The first rule broken, in words.
    pub fn validate_file(&self, file: &str) -> Result<(), String> {
        if file.strip_suffix(".json") != Some(self.id.as_str()) {
            return Err(format!(
                "id {:?} must equal the file name without .json",
                self.id
            ));
        }
        self.validate()
    }

    /// Checks the rules of the format a parser cannot: `steps` is not empty, `max_keys` is
    /// at least `1`; with baselines, every step is an `allow` of cost `1` on one key, states
    /// exactly the configured baselines' verdicts and the baselines' parameters are in range;
    /// without, no step states a verdict.
    ///
    /// # Errors
    ///
    /// The first rule broken, in words naming the step (from `1`).
    pub fn validate(&self) -> Result<(), String> {
        if self.steps.is_empty() {
            return Err("steps must not be empty".to_owned());
        }
        if self.max_keys == 0 {
            return Err("max_keys must be at least 1".to_owned());
        }
        if let Some(fw) = self.baselines.fixed_window {
            if fw.capacity == 0 || fw.capacity > crate::MAX_QUANTITY {
                return Err(format!(
                    "baselines.fixed_window.capacity must be in 1..={}",
                    crate::MAX_QUANTITY
                ));
            }
        }
        if let Some(sl) = self.baselines.sliding_log {
            if sl.capacity == 0 || sl.capacity > crate::MAX_QUANTITY || sl.window_nanos == 0 {
                return Err(format!(
                    "baselines.sliding_log needs capacity in 1..={} and window_nanos of at least 1",
                    crate::MAX_QUANTITY
                ));
            }
        }
        let mut contrasted = BTreeSet::new();
        for name in &self.contrast {
            match crate::catalog::find(name).map(|d| d.verdict) {
                Some(crate::catalog::Verdict::Wrong { mistake, .. }) if !mistake.is_race() => {}
                Some(_) => {
                    return Err(format!(
                        "contrast: {name:?} is not a catalogued design with a sequential mistake"
                    ))
                }
                None => {
                    return Err(format!(
                        "contrast: {name:?} is not a catalogued design (see `ratelimit-lab grade`)"
                    ))
                }
            }
            if !contrasted.insert(name.as_str()) {
                return Err(format!("contrast: {name:?} is named twice"));
            }
        }
        for (index, step) in self.steps.iter().enumerate() {
            if let Some((name, _)) = step.contrast.iter().find(|(_, o)| **o == step.expect) {
                return Err(format!(
                    "step {}: contrast states {name:?} returns the expected outcome; name a design only where it goes wrong",
                    index + 1
                ));
            }
            if let Some(name) = step
                .contrast
                .keys()
                .find(|n| !contrasted.contains(n.as_str()))
            {
                return Err(format!(
                    "step {}: contrast names {name:?}, which the walkthrough's contrast list does not",
                    index + 1
                ));
            }
        }
        for (index, step) in self.steps.iter().enumerate() {
            let Some(c) = step.contenders else { continue };
            let number = index + 1;
            if !matches!(step.op, Op::Allow { .. }) {
                return Err(format!("step {number}: only an allow can have contenders"));
            }
            if !(2..=MAX_CONTENDERS).contains(&c.threads) || c.allowed + c.rejected != c.threads {
                return Err(format!(
                    "step {number}: contenders needs threads in 2..={MAX_CONTENDERS} and allowed + rejected == threads"
                ));
            }
            if !self.baselines.is_empty() {
                return Err(format!(
                    "step {number}: a walkthrough with baselines has no contended steps"
                ));
            }
        }
        let names = self.baselines.names();
        let mut key_seen: Option<&str> = None;
        for (index, step) in self.steps.iter().enumerate() {
            let number = index + 1;
            let stated: Vec<&str> = step.beside.keys().map(String::as_str).collect();
            if stated != names {
                return Err(format!(
                    "step {number}: beside must name exactly the walkthrough's baselines {names:?}, not {stated:?}"
                ));
            }
            if names.is_empty() {
                continue;
            }
            match &step.op {
                Op::Allow { key, cost: 1, .. } => match key_seen {
                    Some(first) if first != key => {
                        return Err(format!(
                            "step {number}: a walkthrough with baselines uses one key ({first:?}), not {key:?}"
                        ))
                    }
                    _ => key_seen = Some(key),
                },
                _ => {
                    return Err(format!(
                        "step {number}: a walkthrough with baselines has only allow steps of cost 1"
                    ))
                }
            }
        }
        Ok(())
    }

    /// Runs every step on a fresh [`Model`] and a fresh reference [`TokenBucket`], in
    /// order, and stops at the first step where the model's outcome, the reference's outcome
    /// and [`Step::expect`] are not all equal, where the two states differ afterwards, or
    /// where the state breaks I1 (`0 <= units <= capacity × UNITS_PER_TOKEN`) or I3 (at most
    /// `max_keys` keys).
    pub fn replay(&self) -> Replay {
        let mut steps = Vec::with_capacity(self.steps.len());
        let built = Model::new(self.policy, self.max_keys)
            .and_then(|m| TokenBucket::new(self.policy, self.max_keys).map(|r| (m, r)));
        let built = built.and_then(|pair| {
            let mut contrast = Vec::new();
            for name in &self.contrast {
                if let Some(design) = crate::catalog::find(name) {
                    contrast.push((name.clone(), (design.build)(self.policy, self.max_keys)?));
                }
            }
            Ok((pair, Beside::new(&self.baselines)?, contrast))
        });
        let ((mut model, reference), beside, contrast) = match built {
            Ok(all) => all,
            Err(error) => {
                return Replay {
                    steps,
                    failure: Some(CheckFailure::Setup { error }),
                }
            }
        };
        for (index, step) in self.steps.iter().enumerate() {
            match check_step(index + 1, step, &mut model, &reference, &beside, &contrast) {
                Ok(checked) => steps.push(checked),
                Err(failure) => {
                    return Replay {
                        steps,
                        failure: Some(*failure),
                    }
                }
            }
        }
        if let Some((design, _)) = contrast.iter().find(|(name, _)| {
            steps
                .iter()
                .all(|s: &CheckedStep| !s.contrast.contains_key(name))
        }) {
            return Replay {
                steps,
                failure: Some(CheckFailure::ContrastShowsNothing {
                    design: design.clone(),
                }),
            };
        }
        Replay {
            steps,
            failure: None,
        }
    }
}

/// The baselines of one replay, built from a walkthrough's [`Baselines`].
struct Beside {
    fixed_window: Option<FixedWindow>,
    sliding_log: Option<SlidingLog>,
}

impl Beside {
    fn new(b: &Baselines) -> Result<Self, LimitError> {
        Ok(Beside {
            fixed_window: b
                .fixed_window
                .map(|c| FixedWindow::new(c.capacity))
                .transpose()?,
            sliding_log: b
                .sliding_log
                .map(|c| SlidingLog::new(c.capacity, c.window_nanos))
                .transpose()?,
        })
    }

    /// Every configured baseline's verdict on a call at `now`.
    fn verdicts(&self, now: u64) -> Vec<(&'static str, Result<Verdict, LimitError>)> {
        let verdict = |admitted: bool| {
            if admitted {
                Verdict::Admitted
            } else {
                Verdict::Rejected
            }
        };
        let mut all = Vec::new();
        if let Some(fw) = &self.fixed_window {
            all.push((FIXED_WINDOW, fw.allow(now).map(verdict)));
        }
        if let Some(sl) = &self.sliding_log {
            all.push((SLIDING_LOG, sl.allow(now).map(verdict)));
        }
        all
    }
}

fn check_step(
    number: usize,
    step: &Step,
    model: &mut Model,
    reference: &TokenBucket,
    baselines: &Beside,
    contrasted: &[(String, Box<dyn Limiter>)],
) -> Result<CheckedStep, Box<CheckFailure>> {
    let (by_model, by_reference) = match step.contenders {
        None => (model.apply(&step.op), step.op.run_on(reference)),
        Some(stated) => {
            let on_model = contention::on_model(model, &step.op, stated.threads);
            let on_reference = contention::on_threads(reference, &step.op, stated.threads);
            let (m, r) = (Contenders::of(&on_model), Contenders::of(&on_reference));
            if m != stated || r != stated || !contention::same_multiset(&on_model, &on_reference) {
                return Err(Box::new(CheckFailure::Contention {
                    step: number,
                    action: step.action.clone(),
                    expected: stated,
                    model: m,
                    reference: r,
                }));
            }
            // The same outcomes in some order: the last in the model's order is the one any
            // order ends with.
            let last = on_model.last().cloned().unwrap_or(Outcome::Replaced);
            (last.clone(), last)
        }
    };
    if by_model != step.expect || by_reference != step.expect {
        return Err(Box::new(CheckFailure::Outcome {
            step: number,
            action: step.action.clone(),
            expected: step.expect.clone(),
            model: by_model,
            reference: by_reference,
        }));
    }
    let mut beside = BTreeMap::new();
    if let (Some(now), false) = (step.op.now(), step.beside.is_empty()) {
        for (name, actual) in baselines.verdicts(now) {
            let expected = step.beside.get(name).copied();
            match (expected, actual) {
                (Some(expected), Ok(actual)) if expected == actual => {
                    beside.insert(name.to_owned(), actual);
                }
                (expected, actual) => {
                    return Err(Box::new(CheckFailure::Baseline {
                        step: number,
                        action: step.action.clone(),
                        baseline: name.to_owned(),
                        // `validate` makes every step name every baseline; a step that does
                        // not is reported as expecting an admission.
                        expected: expected.unwrap_or(Verdict::Admitted),
                        actual,
                    }));
                }
            }
        }
    }
    let mut contrast = BTreeMap::new();
    for (name, design) in contrasted {
        let n = step.contenders.map_or(1, |c| c.threads);
        let actual = contention::on_design(design.as_ref(), &step.op, n)
            .pop()
            .unwrap_or(Outcome::Replaced);
        let stated = step.contrast.get(name).unwrap_or(&step.expect);
        if actual != *stated {
            return Err(Box::new(CheckFailure::Contrast {
                step: number,
                action: step.action.clone(),
                design: name.clone(),
                stated: stated.clone(),
                actual,
            }));
        }
        if actual != step.expect {
            contrast.insert(name.clone(), actual);
        }
    }
    let snapshot = model.snapshot();
    let reference_snapshot = reference.snapshot();
    if !reference_snapshot
        .as_ref()
        .is_some_and(|r| crate::suite::oracle::same_state::same(r, &snapshot))
    {
        return Err(Box::new(CheckFailure::State {
            step: number,
            action: step.action.clone(),
            model: snapshot,
            reference: reference_snapshot,
        }));
    }
    let invariant = |detail: String| {
        Box::new(CheckFailure::Invariant {
            step: number,
            action: step.action.clone(),
            detail,
        })
    };
    if snapshot.buckets.len() > model.max_keys() {
        return Err(invariant(format!(
            "I3 broken: {} keys tracked, max_keys is {}",
            snapshot.buckets.len(),
            model.max_keys()
        )));
    }
    let ceiling = u128::from(snapshot.policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    let at_nanos = model.observed();
    let mut balances = BTreeMap::new();
    for key in snapshot.buckets.keys() {
        let balance = model
            .balance_at(key, at_nanos)
            .and_then(|units| u128::try_from(&units).ok())
            .filter(|&units| units <= ceiling)
            .ok_or_else(|| {
                invariant(format!(
                    "I1 broken: the balance of {key:?} at {at_nanos} ns is outside 0..={ceiling} units"
                ))
            })?;
        balances.insert(key.clone(), balance);
    }
    Ok(CheckedStep {
        number,
        outcome: by_model,
        at_nanos,
        balances,
        snapshot,
        beside,
        contrast,
        contenders: step.contenders,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
