//! Concurrency counterexamples as fixtures: the shrunk scenario of a racy catalogued design,
//! the interleaving of the execution that broke it, and the verdict on why no sequential
//! order explains it.
//!
//! The source is the file a failed concurrency check saves under shuttle or loom
//! ([`Counterexample`], with the recorded history), kept in `counterexamples/<Design>.json`
//! of a walkthrough directory. A build judges the recorded history again with the
//! linearizability checker and writes the fixture only when the verdict is the one recorded;
//! the same file replays the search that found it (`explore --design D --replay FILE`, built
//! in the mode it names).
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use ratelimit_lab::suite::backend::Backend;
use ratelimit_lab::suite::counterexample::Counterexample;
use ratelimit_lab::suite::explore::{judge, Execution};
use ratelimit_lab::Mistake;

use ratelimit_lab::fixtures::mistake_name;
use ratelimit_lab::fixtures::numbers::encode;
use ratelimit_lab::fixtures::source::io;
use ratelimit_lab::fixtures::FixtureError;

/// The directory, inside a walkthrough directory and inside the output directory, that
/// holds the counterexamples.
pub const COUNTEREXAMPLES_DIR: &str = "counterexamples";
/// The `schema` of a counterexample fixture.
pub const RACE_SCHEMA: &str = "ratelimit-lab/counterexample-fixture";

/// One saved counterexample of a catalogued racy design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceSource {
    /// The file's name, `<Design>.json`.
    pub file: String,
    /// The catalogued design it breaks (the file's name without `.json`).
    pub design: String,
    /// The race the design makes.
    pub mistake: Mistake,
    /// The requirement it breaks.
    pub breaks: ratelimit_lab::Requirement,
    /// What the check saved.
    pub counterexample: Counterexample,
}

/// A counterexample fixture (`counterexamples/<Design>.json` under the output directory).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaceFixture {
    /// Always [`RACE_SCHEMA`].
    pub schema: String,
    /// Always [`FORMAT_VERSION`](ratelimit_lab::fixtures::FORMAT_VERSION).
    pub format_version: u32,
    /// The catalogued design.
    pub design: String,
    /// The seed mistake it makes (`double_spend`, `split_cutover`, ...).
    pub mistake: String,
    /// The requirement it breaks (`R2`).
    pub requirement: String,
    /// The seed's words for the mistake.
    pub seed_text: String,
    /// The check that found it.
    pub check: String,
    /// The mode it was found in (`shuttle` or `loom`) and must be replayed in.
    pub backend: String,
    /// The search and the execution's number within it.
    pub search: String,
    /// The execution's number within its search, from 1.
    pub execution: usize,
    /// The scenario (policy, `max_keys`, init calls, each thread's calls, post calls),
    /// quantities as digits.
    pub scenario: Value,
    /// The interleaving: every call with its thread (`0` for the init and post calls), its
    /// outcome and the logical times it was invoked and returned, quantities as digits.
    pub history: Value,
    /// Why no sequential order explains the history, in words.
    pub verdict: String,
    /// The command that replays the search that found it, from the repository's root (`DIR`
    /// is the walkthrough directory it was built from).
    pub replay: String,
}

/// Reads every `counterexamples/*.json` of `dir` (none when there is no such directory), in
/// file-name order.
///
/// # Errors
///
/// [`FixtureError::Io`] when a file cannot be read; [`FixtureError::Parse`] when one is not
/// a saved counterexample; [`FixtureError::Invalid`] when its name is not a catalogued
/// design whose mistake is a race, or it holds no recorded history.
pub fn read_races(dir: &Path) -> Result<Vec<RaceSource>, FixtureError> {
    let dir = dir.join(COUNTEREXAMPLES_DIR);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io(&dir, &e))?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "json") {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|p| read_race(p)).collect()
}

fn read_race(path: &Path) -> Result<RaceSource, FixtureError> {
    let file = format!(
        "{COUNTEREXAMPLES_DIR}/{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    let invalid = |reason: String| FixtureError::Invalid {
        file: file.clone(),
        reason,
    };
    let text = fs::read_to_string(path).map_err(|e| io(path, &e))?;
    let counterexample: Counterexample =
        serde_json::from_str(&text).map_err(|e| FixtureError::Parse {
            file: file.clone(),
            message: e.to_string(),
        })?;
    let design = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (breaks, mistake) = match super::catalogued_wrong(&design) {
        Some((breaks, mistake)) if mistake.is_race() => (breaks, mistake),
        _ => {
            return Err(invalid(format!(
                "{design:?} (the file's name) is not a catalogued design with a race"
            )))
        }
    };
    if counterexample.history.is_empty() {
        return Err(invalid(
            "no recorded history: save the counterexample again with this version".to_owned(),
        ));
    }
    Ok(RaceSource {
        file,
        design,
        mistake,
        breaks,
        counterexample,
    })
}

/// Judges the recorded history again and builds the fixture.
///
/// # Errors
///
/// [`FixtureError::Invalid`] when the history now has a legal order, or the verdict differs
/// from the recorded one.
pub fn race_fixture(source: &RaceSource) -> Result<RaceFixture, FixtureError> {
    let cx = &source.counterexample;
    let execution = Execution {
        history: cx.history.clone(),
        snapshot: cx.snapshot.clone(),
    };
    let invalid = |reason: String| FixtureError::Invalid {
        file: source.file.clone(),
        reason,
    };
    let verdict = match judge(&cx.scenario, &execution) {
        Ok(()) => {
            return Err(invalid(
                "its history has a legal order: it is no counterexample".to_owned(),
            ))
        }
        Err(verdict) => verdict,
    };
    if verdict != cx.verdict {
        return Err(invalid(format!(
            "the verdict differs from the recorded one\n  recorded: {}\n  now:      {verdict}",
            cx.verdict
        )));
    }
    // Saved only under a controlled scheduler; shuttle's when the name is not known.
    let backend = cx.backend.parse().unwrap_or(Backend::Shuttle);
    let mode = backend.cargo("run");
    Ok(RaceFixture {
        schema: RACE_SCHEMA.to_owned(),
        format_version: ratelimit_lab::fixtures::FORMAT_VERSION,
        design: source.design.clone(),
        mistake: mistake_name(source.mistake),
        requirement: source.breaks.to_string(),
        seed_text: source.mistake.seed_text().to_owned(),
        check: cx.check.clone(),
        backend: cx.backend.clone(),
        search: cx.search.clone(),
        execution: cx.execution,
        scenario: encode(serde_json::to_value(&cx.scenario).unwrap_or(Value::Null)),
        history: encode(serde_json::to_value(&cx.history).unwrap_or(Value::Null)),
        verdict,
        replay: format!(
            "{mode} -- explore --design {} --replay DIR/{}",
            source.design, source.file
        ),
    })
}
