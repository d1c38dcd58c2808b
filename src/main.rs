//! The `ratelimit-lab` command: see `ratelimit-lab --help`.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
