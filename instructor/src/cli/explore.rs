//! `explore`: the suite's concurrency checks on one catalogued design, each failure with its
//! counterexample, and the replay of a saved counterexample.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalog::{self, DESIGNS};
use ratelimit_lab::suite::backend::Backend;
use ratelimit_lab::suite::counterexample::{self, Counterexample};
use ratelimit_lab::suite::env;

use super::{fail, print_out, this_tool, EXIT_FAILURE, EXIT_USAGE};

/// Arguments of `explore`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The catalogued design to explore (case-insensitive). An unknown name is an error
    /// (exit status 2) that lists the valid ones.
    #[arg(long = "design", value_name = "NAME")]
    design: String,

    /// Replay a counterexample file a failed check saved: its check explores only that
    /// scenario (the same as setting RATELIMIT_LAB_REPLAY). Build in the mode it was found
    /// in.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
}

/// Runs the concurrency checks and prints each result; exit status 1 when one failed.
pub fn run(args: &Args) -> ExitCode {
    let Some(design) = catalog::find(&args.design) else {
        let known: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
        return fail(
            EXIT_USAGE,
            &format!(
                "no catalogued design is called {:?}; the designs are:\n  {}",
                args.design,
                known.join("\n  ")
            ),
        );
    };
    // A failure's replay line is this command's, not a test run's.
    counterexample::replay_with(this_tool(&format!(
        "explore --design {} --replay",
        design.name
    )));
    let rerun = this_tool(&format!("explore --design {}", design.name));
    if let Some(file) = &args.replay {
        // Read it here first, so that a bad file is one clear error, not one per check.
        if let Err(failure) = Counterexample::load(file) {
            return fail(EXIT_USAGE, &failure.summary);
        }
        // Set before any check's thread starts; the checks read it.
        std::env::set_var(env::REPLAY, file);
    }
    let mode = match Backend::current() {
        Backend::Std => "std (real threads: a race shows in some runs)",
        Backend::Shuttle => "shuttle (seeded random, PCT at depths 2 and 3, bounded DFS)",
        Backend::Loom => "loom (every interleaving within the preemption bound)",
    };
    let mut report = design.explore();
    report.rerun_command = Some(rerun);
    let text = format!(
        "{}: the concurrency checks, mode {mode}\n{}",
        design.name,
        report.explanations()
    );
    if let Err(e) = print_out(&text) {
        return fail(EXIT_FAILURE, &format!("cannot write the report: {e}"));
    }
    if report.results.iter().all(|(_, r)| r.passed()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}
