//! The `ratelimit-lab` command: see `ratelimit-lab --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    ratelimit_lab_instructor::run()
}
