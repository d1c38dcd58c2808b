//! Command-line interface: one [`Command`] variant per subcommand, one module per variant.

mod table;
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
    }
}

/// Writes `text` to standard output; a closed pipe (for example `| head`) is not an error.
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
