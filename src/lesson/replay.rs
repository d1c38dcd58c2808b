//! The replay of a walkthrough: every step run on the specification ([`Model`]), the
//! reference [`TokenBucket`], the baselines and the contrasted designs, and checked against
//! the outcome the lesson states.

use std::collections::BTreeMap;

use super::contention::{self, Contenders};
use super::error::CheckFailure;
use super::walkthrough::{Answer, Baselines, Step, Walkthrough, FIXED_WINDOW, SLIDING_LOG};
use crate::model::{Model, Outcome};
use crate::reference::{FixedWindow, SlidingLog, TokenBucket};
use crate::{LimitError, Limiter, Snapshot, UNITS_PER_TOKEN};

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
    pub beside: BTreeMap<String, Answer>,
    /// Each contrasted design's outcome where it differs from the right one.
    pub contrast: BTreeMap<String, Outcome>,
    /// For a step of many callers, the counts the specification and the reference agree on.
    pub contenders: Option<Contenders>,
}

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
                if let Some(design) = ratelimit_lab_catalog::find(name) {
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
    fn answers(&self, now: u64) -> Vec<(&'static str, Result<Answer, LimitError>)> {
        let verdict = |admitted: bool| {
            if admitted {
                Answer::Admitted
            } else {
                Answer::Rejected
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
        for (name, actual) in baselines.answers(now) {
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
                        expected: expected.unwrap_or(Answer::Admitted),
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
        .is_some_and(|r| crate::model::same_state::same(r, &snapshot))
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
