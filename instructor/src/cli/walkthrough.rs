//! `walkthrough`: the lesson replayed step by step, every step checked before it is shown.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::ValueEnum;
use ratelimit_lab::lesson::words::{describe_policy, state_after, step_outcome};
use ratelimit_lab::lesson::{self, CheckFailure, CheckedStep, Step, Walkthrough};
use ratelimit_lab::Policy;
use ratelimit_lab_model::{Op, Outcome};
use serde::Serialize;

use super::{fail, print_out, table, EXIT_FAILURE, EXIT_USAGE};

/// The widest line printed: tables wrap their cells to fit it.
const WIDTH: usize = 120;

/// Arguments of `walkthrough`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show only the walkthrough with this id (default: all).
    ///
    /// An unknown id is an error (exit status 2) that lists the valid ones.
    #[arg(long, value_name = "ID", conflicts_with = "file")]
    id: Option<String>,

    /// Replay an authored walkthrough file (the format of testdata/README.md) instead of the
    /// lesson's: a bad file or a wrong expectation is reported with its step (exit status 1).
    #[arg(long, value_name = "FILE")]
    file: Option<std::path::PathBuf>,

    /// How to print the checked walkthroughs.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Output formats of `walkthrough`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// One table per walkthrough: step | action | outcome | state after | invariant.
    Table,
    /// One JSON array with every walkthrough, each step with its checked outcome and state.
    Json,
}

/// Runs `walkthrough`: exit status `0` when every shown step agrees, `1` at the first
/// disagreement (reported on standard error), `2` for an unknown `--id`.
pub fn run(args: &Args) -> ExitCode {
    let loaded = match &args.file {
        Some(path) => ratelimit_lab::fixtures::source::read_file(path)
            .map(|s| vec![s.walkthrough])
            .map_err(|e| e.to_string()),
        None => lesson::walkthroughs().map_err(|e| e.to_string()),
    };
    let all = match loaded {
        Ok(all) => all,
        Err(e) => return fail(EXIT_FAILURE, &e),
    };
    let selected: Vec<&Walkthrough> = match &args.id {
        None => all.iter().collect(),
        Some(id) => match all.iter().find(|w| &w.id == id) {
            Some(w) => vec![w],
            None => {
                let ids: Vec<&str> = all.iter().map(|w| w.id.as_str()).collect();
                return fail(
                    EXIT_USAGE,
                    &format!(
                        "unknown walkthrough id {id:?}; valid ids are:\n  {}",
                        ids.join("\n  ")
                    ),
                );
            }
        },
    };
    let result = match args.format {
        Format::Table => print_tables(&selected),
        Format::Json => print_json(&selected),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(EXIT_FAILURE, &message),
    }
}

/// Prints each walkthrough's checked rows; at the first failure, prints the rows that passed,
/// then returns the failure.
fn print_tables(selected: &[&Walkthrough]) -> Result<(), String> {
    let mut total_steps = 0;
    for w in selected {
        let replay = w.replay();
        let rows: Vec<Vec<String>> = replay
            .steps
            .iter()
            .zip(&w.steps)
            .map(|(checked, step)| row(checked, step))
            .collect();
        let mut text = format!(
            "{}{}; max_keys {}\n{}\n",
            table::wrapped(&format!("{}: {}", w.id, w.title), WIDTH, "  "),
            describe_policy(&w.policy),
            w.max_keys,
            table::wrapped(&format!("the lesson's words: {}", w.seed), WIDTH, "  ")
        );
        text.push_str(&table::render_fitted(
            &["step", "action", "outcome", "state after", "invariant"],
            &rows,
            WIDTH,
            // The action and the state keep their lines while the prose columns can wrap.
            &[1, 3],
        ));
        if replay.failure.is_none() {
            text.push_str(&format!(
                "{} of {} steps checked: model == expected == reference\n\n",
                rows.len(),
                w.steps.len()
            ));
        }
        print_out(&text).map_err(|e| format!("cannot write to standard output: {e}"))?;
        if let Some(failure) = replay.failure {
            return Err(failure_message(w, &failure));
        }
        total_steps += rows.len();
    }
    print_out(&format!(
        "{} walkthroughs, {total_steps} steps: the model, the reference and the lesson agree on every one\n",
        selected.len()
    ))
    .map_err(|e| format!("cannot write to standard output: {e}"))
}

fn failure_message(w: &Walkthrough, failure: &CheckFailure) -> String {
    format!("walkthrough {} disagrees at {failure}", w.id)
}

/// One table row: step | action | outcome | state after | invariant.
fn row(checked: &CheckedStep, step: &Step) -> Vec<String> {
    vec![
        checked.number.to_string(),
        step.action.clone(),
        step_outcome(checked, step.seed_outcome.as_deref()),
        state_after(checked, &step.op),
        step.invariant.clone(),
    ]
}

/// One walkthrough in `--format json`.
#[derive(Serialize)]
struct JsonWalkthrough<'a> {
    id: &'a str,
    title: &'a str,
    seed: &'a str,
    policy: Policy,
    max_keys: usize,
    steps: Vec<JsonStep<'a>>,
}

/// One checked step in `--format json`.
#[derive(Serialize)]
struct JsonStep<'a> {
    step: usize,
    action: &'a str,
    op: &'a Op,
    outcome: &'a Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed_outcome: Option<&'a str>,
    state_after: String,
    at_nanos: u64,
    balances: &'a BTreeMap<String, u128>,
    invariant: &'a str,
}

/// Prints one JSON array once every walkthrough has passed; prints nothing on a failure.
fn print_json(selected: &[&Walkthrough]) -> Result<(), String> {
    let replays: Vec<Vec<CheckedStep>> = selected
        .iter()
        .map(|w| {
            let replay = w.replay();
            match replay.failure {
                None => Ok(replay.steps),
                Some(failure) => Err(failure_message(w, &failure)),
            }
        })
        .collect::<Result<_, _>>()?;
    let docs: Vec<JsonWalkthrough<'_>> = selected
        .iter()
        .zip(&replays)
        .map(|(w, checked)| JsonWalkthrough {
            id: &w.id,
            title: &w.title,
            seed: &w.seed,
            policy: w.policy,
            max_keys: w.max_keys,
            steps: checked
                .iter()
                .zip(&w.steps)
                .map(|(c, s)| JsonStep {
                    step: c.number,
                    action: &s.action,
                    op: &s.op,
                    outcome: &c.outcome,
                    seed_outcome: s.seed_outcome.as_deref(),
                    state_after: state_after(c, &s.op),
                    at_nanos: c.at_nanos,
                    balances: &c.balances,
                    invariant: &s.invariant,
                })
                .collect(),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&docs)
        .map_err(|e| format!("cannot encode the walkthroughs as JSON: {e}"))?;
    text.push('\n');
    print_out(&text).map_err(|e| format!("cannot write to standard output: {e}"))
}
