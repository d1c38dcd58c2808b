//! Command-line interface: one [`Command`] variant per subcommand, one module per variant.

mod course;
mod explore;
mod fixtures;
mod grade;
mod outcomes;
mod replay;
mod submission;
mod table;
mod timings;
mod walkthrough;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit status when a check failed (a disagreement, or lesson data that does not load).
const EXIT_FAILURE: u8 = 1;
/// Exit status for bad arguments, as clap uses for its own usage errors.
const EXIT_USAGE: u8 = 2;

/// ratelimit-lab: an exact token-bucket rate limiter, its executable specification, and the
/// Rate Limiter lesson replayed against both.
#[derive(Debug, Parser)]
#[command(name = "ratelimit-lab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Print the lesson's worked examples and trace table, every step checked.
    ///
    /// Each walkthrough (the trace table, the worked examples, the change exercise and one
    /// per contract check) is replayed on the executable specification and on the reference
    /// limiter. A row is printed only after both have returned exactly the outcome the lesson
    /// states and hold the same state; at the first disagreement the step, the expected
    /// outcome and both actual ones are reported and the exit status is 1.
    Walkthrough(walkthrough::Args),
    /// Build verified walkthrough fixtures (JSON, SVG pictures, an index and a page) from
    /// authored walkthrough files, or check a fixture directory against a fresh build.
    Fixtures(fixtures::Args),
    /// Grade the reference and every catalogued design, and print a report card.
    ///
    /// Each design runs the whole conformance suite, one check after another. The card shows
    /// per design its role in the catalog, checks passed, points, the first failure with the
    /// requirement it guards, the seed mistake matched, and the wall time, then the total and
    /// the slowest design against the 20 s budget. A design whose outcome contradicts its
    /// role (a correct design that fails a check; a wrong one that passes, or fails first on
    /// another requirement, or is diagnosed with another mistake) is listed after the card
    /// and makes the exit status 1.
    Grade(grade::Args),
    /// Run operation traces (JSON) on a design and print what every call returned.
    ///
    /// The input is a scenario, `{"policy": {"version": 1, "capacity": 10,
    /// "tokens_per_second": 2}, "max_keys": 100, "ops": [{"op": "allow", "key": "k",
    /// "cost": 1, "now": 0}, …]}`, or an array of them; operations are `allow`, `evict_full`,
    /// `replace_policy` (`next`, `expected_version`, `now`) and `key_count`. The output has
    /// the same shape, each scenario as `{"outcomes": […]}` (or `{"error": …}` when the
    /// limiter cannot be built). With `--check` the specification runs too and the first
    /// difference is reported with exit status 1.
    Replay(replay::Args),
    /// Explore one catalogued design's concurrency: the suite's concurrency checks, each
    /// failure with a shrunk counterexample a person can read and a file that replays it.
    ///
    /// Built with `--features shuttle` or `RUSTFLAGS="--cfg loom"` (each in its own target
    /// directory), every check explores its scenarios' schedules deterministically; the
    /// default build runs stress rounds on real threads. `--replay FILE` runs a saved
    /// counterexample again. Exit status 1 when a check failed, 2 for bad arguments.
    Explore(explore::Args),
    /// Build a learner's crate and grade it within time limits, always leaving valid
    /// `results.json` (Exercism, version 3), `gradescope.json`, `junit.xml` and
    /// `classroom.json` reports.
    ///
    /// A crate that does not build is graded `error` with the compiler's first errors. The
    /// checks run with their results written as each finishes; when the run is stopped at
    /// `--test-limit-secs`, or the process ends by itself midway (`std::process::exit` or an
    /// abort in the design), the reports keep what finished and list every other check as
    /// an error: "did not finish" for the check that was running, "not run" for the rest.
    /// Exit status 0 whenever both reports were written.
    Submission(submission::Args),
}

/// Parses the command line, runs the subcommand and returns its exit status: `0` on success,
/// `1` when a check failed, `2` for bad arguments.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Prints the help, the version or the usage error, and exits 0 or 2 as clap decides.
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Walkthrough(args) => walkthrough::run(&args),
        Command::Fixtures(args) => fixtures::run(&args),
        Command::Grade(args) => grade::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Explore(args) => explore::run(&args),
        Command::Submission(args) => submission::run(&args),
    }
}

/// Writes `text` to standard output; a closed pipe (for example `| head`) is not an error.
/// `cargo run --release -- <args>` in the current mode (with its features or flags), the
/// command that runs this tool again with `args`.
fn this_tool(args: &str) -> String {
    let cargo =
        ratelimit_lab::suite::cargo_in_this_mode("run").replace("cargo run --release", "cargo run");
    format!("{cargo} --release -- {args}")
}

fn print_out(text: &str) -> Result<(), io::Error> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Writes `message` to standard error and returns `code`.
fn fail(code: u8, message: &str) -> ExitCode {
    // Nothing more can be reported if standard error itself is gone.
    let _ = writeln!(io::stderr().lock(), "error: {message}");
    ExitCode::from(code)
}
