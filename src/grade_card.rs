//! The grade card for a learner's own design, from an example of their crate:
//!
//! ```ignore
//! // examples/grade.rs
//! fn main() -> std::process::ExitCode {
//!     ratelimit_lab::grade_card::<my_limiter::MyLimiter>()
//! }
//! ```
//!
//! `cargo run --example grade` (add `--release` for a faster run; build it in the shuttle or
//! loom mode as the tests are built) runs the whole suite in suite order, diagnoses every
//! failure against the catalog, and prints the card: the score per requirement and per level,
//! the combined diagnosis and the first failure in full.
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use crate::suite::checks::table::CHECKS;
use crate::suite::core::env;
use crate::suite::report::results::Report;
use crate::suite::run::isolation::run_check;
use crate::Limiter;

/// Grades `L` with every check of the suite and prints its card on standard output. While
/// it runs, each check is reported on standard error as it finishes, when that is a
/// terminal. With [`env::REPORT_DIR`] set, the graded reports are written there too.
///
/// Returns success when every check passed, failure otherwise (so a script can tell).
pub fn grade_card<L: Limiter>() -> ExitCode {
    let name = std::any::type_name::<L>();
    let name = name.rsplit("::").next().unwrap_or(name);
    let progress = std::io::stderr().is_terminal();
    // The suite catches every panic of the design and reports its message in the check's
    // explanation: the default hook would print each one again, with a backtrace when
    // RUST_BACKTRACE is set, between the progress lines.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut report = Report::default();
    for (i, check) in CHECKS.iter().enumerate() {
        if progress {
            eprint!(
                "\r\x1b[K[{}/{}] {name}: {}",
                i + 1,
                CHECKS.len(),
                check.name
            );
            let _ = std::io::stderr().flush();
        }
        let result = run_check::<L>(check.name, crate::catalog::suspects());
        // Named as `cargo test` names it, so that the card's rerun command runs it.
        report.results.push((check.test_name(), result));
    }
    std::panic::set_hook(hook);
    if progress {
        eprint!("\r\x1b[K");
    }
    print!("{}", report.card(name));
    if let Some(dir) = std::env::var_os(env::REPORT_DIR) {
        let dir = std::path::PathBuf::from(dir);
        match report.write_to(&dir) {
            Ok(()) => println!("\nreports written to {}", dir.display()),
            Err(e) => eprintln!("could not write the reports to {}: {e}", dir.display()),
        }
    }
    if report.passed() == report.results.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
