//! `fixtures`: build verified walkthrough fixtures from authored files, or check that a
//! fixture directory is what a fresh build gives.
use std::path::PathBuf;
use std::process::ExitCode;

use crate::site;

use super::{fail, print_out, EXIT_FAILURE};

/// Arguments of `fixtures`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Verify every walkthrough file of DIR, then write its fixture, picture, the index and
    /// the page under --out.
    ///
    /// DIR holds one walkthrough per `*.json` file (the format of testdata/README.md) and,
    /// optionally, `order.json`: an array of their ids in teaching order. Every step runs on
    /// the executable specification, the reference and the walkthrough's baselines; at the
    /// first disagreement nothing is written and the file, the step, the expected outcome
    /// and both actual ones are reported (exit status 1).
    Build(Paths),
    /// Like build, but write nothing: list every file under --out that differs from a fresh
    /// build (exit status 1 if any does), naming a fixture's first differing step.
    Check(Paths),
}

#[derive(Debug, clap::Args)]
struct Paths {
    /// The directory of authored walkthrough files.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The fixture directory.
    #[arg(long, value_name = "OUT", default_value = "fixtures")]
    out: PathBuf,
}

/// Runs `fixtures`: exit status `0` on success, `1` when a walkthrough does not verify, a file
/// cannot be read or written, or (`check`) the directory is stale; `2` for bad arguments.
pub fn run(args: &Args) -> ExitCode {
    let result = match &args.action {
        Action::Build(p) => build(p),
        Action::Check(p) => check(p),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(EXIT_FAILURE, &message),
    }
}

fn build(p: &Paths) -> Result<(), String> {
    let written = site::build(&p.dir, &p.out).map_err(|e| e.to_string())?;
    let mut text = String::new();
    for path in &written.changed {
        text.push_str(&format!("wrote {}\n", p.out.join(path).display()));
    }
    for path in &written.removed {
        text.push_str(&format!("removed {}\n", p.out.join(path).display()));
    }
    text.push_str(&format!(
        "{} verified; {} files written, {} unchanged, {} removed\n",
        p.dir.display(),
        written.changed.len(),
        written.unchanged,
        written.removed.len()
    ));
    print_out(&text).map_err(|e| format!("cannot write to standard output: {e}"))
}

fn check(p: &Paths) -> Result<(), String> {
    let drifts = site::check(&p.dir, &p.out).map_err(|e| e.to_string())?;
    if drifts.is_empty() {
        return print_out(&format!(
            "{} is what a fresh build of {} gives\n",
            p.out.display(),
            p.dir.display()
        ))
        .map_err(|e| format!("cannot write to standard output: {e}"));
    }
    let lines: Vec<String> = drifts.iter().map(|d| format!("  {d}")).collect();
    Err(format!(
        "{} differs from a fresh build of {}:\n{}\nrebuild with `ratelimit-lab fixtures build {} --out {}`, review the difference and commit it",
        p.out.display(),
        p.dir.display(),
        lines.join("\n"),
        p.dir.display(),
        p.out.display()
    ))
}
