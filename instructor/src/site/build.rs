//! From authored walkthroughs to the files of a fixture directory: verify every step, then
//! render every file in memory, then write (or compare with what is on disk).
//!
//! Nothing is written unless every walkthrough verified: a wrong expectation leaves the
//! output directory as it was.
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use ratelimit_lab::lesson::words::state_after;
use ratelimit_lab::lesson::CheckedStep;
use ratelimit_lab::UNITS_PER_TOKEN;

use super::race::{race_fixture, RaceSource, COUNTEREXAMPLES_DIR};
use super::{page, picture, race_picture};
use ratelimit_lab::fixtures::numbers::encode;
use ratelimit_lab::fixtures::source::{io, Source};
use ratelimit_lab::fixtures::FixtureError;
use ratelimit_lab::fixtures::{
    mistake_name, ContrastedDesign, FixtureStep, Index, IndexEntry, RaceEntry, WalkthroughFixture,
    FORMAT_VERSION, INDEX_SCHEMA, WALKTHROUGH_SCHEMA,
};

/// The directory, under the output directory, that holds one fixture and one picture per
/// walkthrough.
pub const WALKTHROUGHS_DIR: &str = "walkthroughs";
/// The index's file name.
pub const INDEX_FILE: &str = "index.json";
/// The page's file name.
pub const PAGE_FILE: &str = "index.html";

/// One file of a fixture directory, rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Its path relative to the output directory, `/`-separated.
    pub path: String,
    /// Its whole text.
    pub text: String,
}

/// A walkthrough whose every step verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Where it came from.
    pub source: Source,
    /// Every step, checked.
    pub steps: Vec<CheckedStep>,
}

/// Replays `source` on the specification, the reference and its baselines.
///
/// # Errors
///
/// [`FixtureError::Disagreement`] at the first step where they and the expectation are not
/// all the same.
pub fn verify(source: &Source) -> Result<Verified, FixtureError> {
    let replay = source.walkthrough.replay();
    match replay.failure {
        None => Ok(Verified {
            source: source.clone(),
            steps: replay.steps,
        }),
        Some(failure) => Err(FixtureError::Disagreement {
            file: source.file.clone(),
            failure: Box::new(failure),
        }),
    }
}

/// The fixture of one verified walkthrough.
pub fn fixture(verified: &Verified) -> WalkthroughFixture {
    let w = &verified.source.walkthrough;
    WalkthroughFixture {
        schema: WALKTHROUGH_SCHEMA.to_owned(),
        format_version: FORMAT_VERSION,
        id: w.id.clone(),
        title: w.title.clone(),
        seed: w.seed.clone(),
        source: verified.source.file.clone(),
        units_per_token: UNITS_PER_TOKEN.to_string(),
        policy: digits(&w.policy),
        max_keys: w.max_keys.to_string(),
        baselines: (!w.baselines.is_empty()).then(|| digits(&w.baselines)),
        contrast: w
            .contrast
            .iter()
            .filter_map(|name| {
                let (breaks, mistake) = super::catalogued_wrong(name)?;
                Some(ContrastedDesign {
                    design: name.clone(),
                    mistake: mistake_name(mistake),
                    requirement: breaks.to_string(),
                    seed_text: mistake.seed_text().to_owned(),
                })
            })
            .collect(),
        steps: verified
            .steps
            .iter()
            .zip(&w.steps)
            .map(|(checked, step)| FixtureStep {
                step: checked.number,
                action: step.action.clone(),
                op: digits(&step.op),
                outcome: digits(&checked.outcome),
                seed_outcome: step.seed_outcome.clone(),
                invariant: step.invariant.clone(),
                state_after: state_after(checked, &step.op),
                at_nanos: checked.at_nanos.to_string(),
                policy: digits(&checked.snapshot.policy),
                balances: checked
                    .balances
                    .iter()
                    .map(|(key, units)| (key.clone(), units.to_string()))
                    .collect(),
                beside: checked
                    .beside
                    .iter()
                    .map(|(name, verdict)| (name.clone(), verdict.to_string()))
                    .collect(),
                contrast: checked
                    .contrast
                    .iter()
                    .map(|(name, outcome)| (name.clone(), digits(outcome)))
                    .collect(),
                contenders: checked.contenders.as_ref().map(digits),
            })
            .collect(),
    }
}

/// `value` in JSON with every number as digits.
fn digits<T: Serialize>(value: &T) -> Value {
    // The vocabulary's types serialize to JSON without fail (no maps with non-text keys).
    encode(serde_json::to_value(value).unwrap_or(Value::Null))
}

fn pretty<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Verifies every source, then renders every file of the fixture directory: per walkthrough
/// `walkthroughs/<id>.json` and `walkthroughs/<id>.svg`, per counterexample
/// `counterexamples/<Design>.json` and `.svg`, then `index.json` and the page `index.html`,
/// in that order. The same sources give the same bytes on every machine.
///
/// # Errors
///
/// The first source's [`verify`] error, in order, then the first counterexample's
/// [`race_fixture`] error; nothing is rendered.
pub fn render(sources: &[Source], races: &[RaceSource]) -> Result<Vec<Artifact>, FixtureError> {
    let verified = sources.iter().map(verify).collect::<Result<Vec<_>, _>>()?;
    let race_fixtures = races
        .iter()
        .map(race_fixture)
        .collect::<Result<Vec<_>, _>>()?;
    let fixtures: Vec<WalkthroughFixture> = verified.iter().map(fixture).collect();
    let pictures: Vec<String> = verified.iter().map(picture::draw).collect();
    let race_pictures: Vec<String> = races.iter().map(race_picture::draw).collect();
    let mut artifacts = Vec::new();
    let mut entries = Vec::new();
    for ((v, f), svg) in verified.iter().zip(&fixtures).zip(&pictures) {
        let id = &v.source.walkthrough.id;
        let json_path = format!("{WALKTHROUGHS_DIR}/{id}.json");
        let svg_path = format!("{WALKTHROUGHS_DIR}/{id}.svg");
        artifacts.push(Artifact {
            path: json_path.clone(),
            text: pretty(f),
        });
        artifacts.push(Artifact {
            path: svg_path.clone(),
            text: svg.clone(),
        });
        entries.push(IndexEntry {
            id: id.clone(),
            title: v.source.walkthrough.title.clone(),
            fixture: json_path,
            picture: svg_path,
            steps: v.steps.len(),
        });
    }
    let mut race_entries = Vec::new();
    for ((source, fixture), svg) in races.iter().zip(&race_fixtures).zip(&race_pictures) {
        let json_path = format!("{COUNTEREXAMPLES_DIR}/{}.json", source.design);
        let svg_path = format!("{COUNTEREXAMPLES_DIR}/{}.svg", source.design);
        artifacts.push(Artifact {
            path: json_path.clone(),
            text: pretty(fixture),
        });
        artifacts.push(Artifact {
            path: svg_path.clone(),
            text: svg.clone(),
        });
        race_entries.push(RaceEntry {
            design: source.design.clone(),
            mistake: fixture.mistake.clone(),
            fixture: json_path,
            picture: svg_path,
        });
    }
    artifacts.push(Artifact {
        path: INDEX_FILE.to_owned(),
        text: pretty(&Index {
            schema: INDEX_SCHEMA.to_owned(),
            format_version: FORMAT_VERSION,
            walkthroughs: entries,
            counterexamples: race_entries,
        }),
    });
    artifacts.push(Artifact {
        path: PAGE_FILE.to_owned(),
        text: page::render(
            &verified
                .iter()
                .zip(&fixtures)
                .zip(&pictures)
                .map(|((v, f), svg)| (v, f, svg.as_str()))
                .collect::<Vec<_>>(),
            &race_fixtures
                .iter()
                .zip(&race_pictures)
                .zip(races.iter())
                .map(|((f, svg), source)| {
                    (f, svg.as_str(), source.counterexample.scenario.in_words())
                })
                .collect::<Vec<_>>(),
        ),
    });
    Ok(artifacts)
}

/// What [`write()`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Files whose bytes changed or that are new.
    pub changed: Vec<String>,
    /// Files left as they were (already identical).
    pub unchanged: usize,
    /// Fixtures or pictures of walkthroughs no longer built, removed.
    pub removed: Vec<String>,
}

/// Writes `artifacts` under `out` (creating it), each file only if its bytes change, and
/// removes `*.json` and `*.svg` files of `out/walkthroughs/` and `out/counterexamples/` that
/// no artifact names, so the directory holds exactly the fixtures of the sources built.
///
/// # Errors
///
/// [`FixtureError::Io`] at the first file that cannot be written or removed.
pub fn write(out: &Path, artifacts: &[Artifact]) -> Result<Written, FixtureError> {
    for sub in [WALKTHROUGHS_DIR, COUNTEREXAMPLES_DIR] {
        if artifacts
            .iter()
            .any(|a| a.path.starts_with(&format!("{sub}/")))
        {
            let dir = out.join(sub);
            fs::create_dir_all(&dir).map_err(|e| io(&dir, &e))?;
        }
    }
    let mut written = Written::default();
    for a in artifacts {
        let path = out.join(&a.path);
        if fs::read_to_string(&path).is_ok_and(|old| old == a.text) {
            written.unchanged += 1;
            continue;
        }
        fs::write(&path, &a.text).map_err(|e| io(&path, &e))?;
        written.changed.push(a.path.clone());
    }
    for leftover in leftovers(out, artifacts)? {
        let path = out.join(&leftover);
        fs::remove_file(&path).map_err(|e| io(&path, &e))?;
        written.removed.push(leftover);
    }
    Ok(written)
}

/// `*.json` and `*.svg` files of `out/walkthroughs/` and `out/counterexamples/` that no
/// artifact names.
fn leftovers(out: &Path, artifacts: &[Artifact]) -> Result<Vec<String>, FixtureError> {
    let mut found = Vec::new();
    for sub in [WALKTHROUGHS_DIR, COUNTEREXAMPLES_DIR] {
        let dir = out.join(sub);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let name = entry.map_err(|e| io(&dir, &e))?.file_name();
            let name = name.to_string_lossy();
            let path = format!("{sub}/{name}");
            if (name.ends_with(".json") || name.ends_with(".svg"))
                && !artifacts.iter().any(|a| a.path == path)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// One difference between the files on disk and freshly rendered ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drift {
    /// The file, relative to the output directory.
    pub path: String,
    /// The first step that differs, when the file is a walkthrough fixture and one does.
    pub step: Option<usize>,
    /// What differs, in words.
    pub detail: String,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            Some(step) => write!(f, "{} step {}: {}", self.path, step, self.detail),
            None => write!(f, "{}: {}", self.path, self.detail),
        }
    }
}

/// Every file under `out` that differs by a byte from its artifact (or is missing), and every
/// leftover fixture or picture; a fixture that differs names its first differing step.
pub fn drift(out: &Path, artifacts: &[Artifact]) -> Vec<Drift> {
    let mut drifts = Vec::new();
    for a in artifacts {
        let path = out.join(&a.path);
        match fs::read_to_string(&path) {
            Err(e) => drifts.push(Drift {
                path: a.path.clone(),
                step: None,
                detail: format!("cannot be read ({e}); the build writes it"),
            }),
            Ok(old) if old == a.text => {}
            Ok(old) => drifts.push(explain(&a.path, &old, &a.text)),
        }
    }
    match leftovers(out, artifacts) {
        Ok(extra) => drifts.extend(extra.into_iter().map(|path| Drift {
            path,
            step: None,
            detail: "no walkthrough builds it; the build removes it".to_owned(),
        })),
        Err(e) => drifts.push(Drift {
            path: WALKTHROUGHS_DIR.to_owned(),
            step: None,
            detail: e.to_string(),
        }),
    }
    drifts
}

/// Where `old` (on disk) differs from `new` (rendered): the first step of a fixture that
/// differs, or the first line.
fn explain(path: &str, old: &str, new: &str) -> Drift {
    let fixtures = (
        serde_json::from_str::<WalkthroughFixture>(old),
        serde_json::from_str::<WalkthroughFixture>(new),
    );
    if let (Ok(o), Ok(n)) = &fixtures {
        let steps = o.steps.iter().map(Some).chain(std::iter::repeat(None));
        for (index, (was, is)) in steps.zip(n.steps.iter()).enumerate() {
            if was != Some(is) {
                let detail = match was {
                    None => "missing from the file".to_owned(),
                    Some(was) => field_difference(was, is),
                };
                return Drift {
                    path: path.to_owned(),
                    step: Some(index + 1),
                    detail,
                };
            }
        }
    }
    let line = old
        .lines()
        .zip(new.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| old.lines().count().min(new.lines().count()));
    Drift {
        path: path.to_owned(),
        step: None,
        detail: format!(
            "differs from line {}: {:?} on disk, {:?} built",
            line + 1,
            old.lines().nth(line).unwrap_or(""),
            new.lines().nth(line).unwrap_or("")
        ),
    }
}

/// The first field of a step that differs, with both values.
fn field_difference(was: &FixtureStep, is: &FixtureStep) -> String {
    let was = serde_json::to_value(was).unwrap_or(Value::Null);
    let is = serde_json::to_value(is).unwrap_or(Value::Null);
    let (Some(was), Some(is)) = (was.as_object(), is.as_object()) else {
        return "differs".to_owned();
    };
    let names: BTreeMap<&String, ()> = was.keys().chain(is.keys()).map(|k| (k, ())).collect();
    for name in names.keys() {
        let (a, b) = (was.get(*name), is.get(*name));
        if a != b {
            let show = |v: Option<&Value>| v.map_or_else(|| "absent".to_owned(), Value::to_string);
            return format!("{name} is {} on disk, {} built", show(a), show(b));
        }
    }
    "differs".to_owned()
}
