//! Paths the [`conformance_suite!`](crate::conformance_suite) expansion calls; no stability
//! promise.
use std::path::PathBuf;

use crate::suite::core::env;
use crate::suite::report::results::collect;
use crate::suite::report::results::rerun;
use crate::suite::run::marks::Running;
use crate::suite::run::selection::Selection;
use crate::suite::run::settled::Tests;
use crate::Limiter;

/// Runs one check on `L` for a generated test, records it for the graded reports, and fails
/// that test when the check did not pass: the full explanation goes to the test's output
/// (shown under its name, in suite order), unless an earlier check that runs in this process
/// failed for the same cause, in which case two lines say what this check checks and which
/// check explains the cause. The test unwinds without the panic hook, so no backtrace into
/// the harness follows it even with `RUST_BACKTRACE` set.
pub fn run<L: Limiter>(check: &str, module_path: &str) {
    // `module_path!()` starts with the test crate's name, which test names do not, and ends
    // with the check's ordinal module (`c01`), which the design's report does not group by.
    let inner = module_path
        .split_once("::")
        .map_or(module_path, |(_, inner)| inner);
    let test_name = format!("{inner}::{check}");
    let prefix = inner
        .rsplit_once("::")
        .map(|(design, _)| format!("{design}::"))
        .unwrap_or_default();
    let design_module = module_path
        .rsplit_once("::")
        .map_or(module_path, |(design, _)| design);
    let report_dir = std::env::var_os(env::REPORT_DIR).map(PathBuf::from);
    let tests = Tests {
        design: format!("{design_module} {}", std::any::type_name::<L>()),
        prefix,
        report_dir: report_dir.as_deref(),
    };
    let suspects = crate::catalog::suspects();
    let running = Running::mark(report_dir.as_deref(), &test_name);
    let result = tests.settle::<L>(check, suspects, false);
    let passed = result.passed();
    let explanation = result.explain(&rerun(&test_name));
    if let Err(e) = collect(design_module, test_name.clone(), result.clone()) {
        eprintln!("ratelimit-lab: could not write the graded report: {e}");
    }
    drop(running);
    if !passed {
        match tests.same_cause_before::<L>(&result, suspects, &Selection::of_this_process()) {
            Some(earlier) => println!("\n{}", result.same_cause_as(&earlier)),
            None => println!("\n{explanation}"),
        }
        std::panic::resume_unwind(Box::new(format!("{test_name} did not pass")));
    }
}
