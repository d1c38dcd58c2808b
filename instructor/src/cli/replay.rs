//! `replay`: operation traces, as JSON, run on a catalogued design; what every call returned,
//! as JSON, optionally held against the specification.
//!
//! The input is one [`Trace`] (`{"policy": …, "max_keys": …, "ops": […]}`) or an array of
//! them. The output has the same shape: for each trace `{"outcomes": […]}`, or
//! `{"error": …}` when the limiter itself could not be built.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalog;
use ratelimit_lab::LimitError;
use ratelimit_lab_model::{Outcome, Trace};
use serde::Serialize;

use super::{fail, print_out, EXIT_FAILURE, EXIT_USAGE};

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace file: one trace or an array of them, as JSON; `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// The catalogued design that runs the trace (case-insensitive).
    #[arg(long, value_name = "NAME", default_value = "TokenBucket")]
    design: String,

    /// Also run the specification, and exit with status 1 at the first call whose outcome
    /// differs (reported on standard error with both outcomes).
    #[arg(long)]
    check: bool,
}

/// What one trace gave.
#[derive(Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Replayed {
    /// Every call's outcome, in order.
    Outcomes(Vec<Outcome>),
    /// The limiter could not be built (for example `max_keys` 0).
    Error(LimitError),
}

/// Runs `replay`: exit status `0` when the trace ran (and, with `--check`, agreed), `1` on a
/// disagreement or unreadable input, `2` for an unknown design.
pub fn run(args: &Args) -> ExitCode {
    let Some(design) = catalog::find(&args.design) else {
        let names: Vec<&str> = catalog::DESIGNS.iter().map(|d| d.name).collect();
        return fail(
            EXIT_USAGE,
            &format!(
                "unknown design {:?}; the designs are: {}",
                args.design,
                names.join(", ")
            ),
        );
    };
    let text = match read(&args.file) {
        Ok(text) => text,
        Err(e) => {
            return fail(
                EXIT_FAILURE,
                &format!("cannot read {}: {e}", args.file.display()),
            )
        }
    };
    // An array is several traces, anything else one: parsed as what it claims to be, so
    // serde's error names the line, the column and the field at fault.
    let single = !text.trim_start().starts_with('[');
    let parsed = if single {
        serde_json::from_str::<Trace>(&text).map(|s| vec![s])
    } else {
        serde_json::from_str::<Vec<Trace>>(&text)
    };
    let traces = match parsed {
        Ok(traces) => traces,
        Err(e) => {
            return fail(
                EXIT_FAILURE,
                &format!(
                    "{} is not a trace or an array of traces ({{\"policy\": …, \"max_keys\": …, \"ops\": […]}}): {e}",
                    args.file.display()
                ),
            )
        }
    };
    let mut results = Vec::with_capacity(traces.len());
    for (i, trace) in traces.iter().enumerate() {
        let got = match design.build(trace.policy, trace.max_keys) {
            Ok(limiter) => Replayed::Outcomes(trace.run_on(limiter.as_ref())),
            Err(e) => Replayed::Error(e),
        };
        if args.check {
            let want = match trace.expected() {
                Ok(outcomes) => Replayed::Outcomes(outcomes),
                Err(e) => Replayed::Error(e),
            };
            if let Some(message) = disagreement(i, trace, &want, &got) {
                return fail(EXIT_FAILURE, &message);
            }
        }
        results.push(got);
    }
    let json = if single {
        serde_json::to_string_pretty(&results[0])
    } else {
        serde_json::to_string_pretty(&results)
    };
    match json {
        Ok(json) => match print_out(&format!("{json}\n")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(EXIT_FAILURE, &format!("cannot write the outcomes: {e}")),
        },
        Err(e) => fail(EXIT_FAILURE, &format!("cannot encode the outcomes: {e}")),
    }
}

fn read(path: &PathBuf) -> std::io::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

/// Where the design and the specification first part ways, in words.
fn disagreement(index: usize, trace: &Trace, want: &Replayed, got: &Replayed) -> Option<String> {
    match (want, got) {
        (Replayed::Outcomes(w), Replayed::Outcomes(g)) => {
            let step = w.iter().zip(g).position(|(a, b)| a != b)?;
            Some(format!(
                "trace {index}, step {}: {} returned \"{}\"; the specification says \"{}\"",
                step + 1,
                trace.ops[step],
                g[step],
                w[step]
            ))
        }
        (Replayed::Error(w), Replayed::Error(g)) if w == g => None,
        (Replayed::Error(w), _) => Some(format!(
            "trace {index}: the specification refuses to build the limiter ({w}), the design built it"
        )),
        (_, Replayed::Error(g)) => Some(format!(
            "trace {index}: the design refused to build the limiter ({g}), the specification builds it"
        )),
    }
}
