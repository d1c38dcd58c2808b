//! The walkthrough format: a [`Walkthrough`] of [`Step`]s, the baselines it may run beside
//! the token bucket and their [`Answer`]s, and the rules of the format a parser cannot check.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::contention::{Contenders, MAX_CONTENDERS};
use crate::model::{Op, Outcome};
use crate::Policy;

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
    /// The seed's [`FixedWindow`](crate::reference::FixedWindow): at most `capacity` calls
    /// per one-second window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_window: Option<FixedWindowBaseline>,
    /// A [`SlidingLog`](crate::reference::SlidingLog): at most `capacity` calls in any
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
pub enum Answer {
    /// The call was admitted.
    Admitted,
    /// The call was refused for now.
    Rejected,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Answer::Admitted => "admitted",
            Answer::Rejected => "rejected",
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
    pub beside: BTreeMap<String, Answer>,
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
            match ratelimit_lab_catalog::find(name).map(|d| d.verdict) {
                Some(ratelimit_lab_catalog::Verdict::Wrong { mistake, .. })
                    if !mistake.is_race() => {}
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
}
