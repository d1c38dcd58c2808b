//! Paths the [`conformance_suite!`](crate::conformance_suite) expansion calls; no stability
//! promise.
use std::path::PathBuf;

use crate::suite::core::env;
use crate::suite::report::results::collect;
use crate::suite::report::results::rerun;
use crate::suite::run::isolation::run_check;
use crate::suite::run::marks::Running;
use crate::Limiter;

/// Runs one check on `L` for a generated test, records it for the graded reports, and fails
/// that test when the check did not pass: the full explanation goes to the test's output
/// (shown under its name, in suite order), and the test unwinds without the panic hook, so
/// no backtrace into the harness follows it even with `RUST_BACKTRACE` set.
pub fn run<L: Limiter>(check: &str, module_path: &str) {
    // `module_path!()` starts with the test crate's name, which test names do not, and ends
    // with the check's ordinal module (`c01`), which the design's report does not group by.
    let test_name = match module_path.split_once("::") {
        Some((_, inner)) => format!("{inner}::{check}"),
        None => check.to_string(),
    };
    let design_module = module_path
        .rsplit_once("::")
        .map_or(module_path, |(design, _)| design);
    let report_dir = std::env::var_os(env::REPORT_DIR).map(PathBuf::from);
    let running = Running::mark(report_dir.as_deref(), &test_name);
    let result = run_check::<L>(check, crate::catalog::suspects());
    let explanation = result.explain(&rerun(&test_name));
    let passed = result.passed();
    if let Err(e) = collect(design_module, test_name.clone(), result) {
        eprintln!("ratelimit-lab: could not write the graded report: {e}");
    }
    drop(running);
    if !passed {
        println!("\n{explanation}");
        std::panic::resume_unwind(Box::new(format!("{test_name} did not pass")));
    }
}
