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
/// that test when the check did not pass. The first failure of a cause in suite order (among
/// the checks this process runs) prints the full explanation, shown under its test's name,
/// followed by one line per later check that failed for the same cause; those later tests
/// print nothing, so libtest lists them as failed without an output section of their own.
/// The test unwinds without the panic hook, so no backtrace into the harness follows it even
/// with `RUST_BACKTRACE` set.
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
        let selection = Selection::of_this_process();
        // A later failure of an explained cause prints nothing: libtest then shows no output
        // section for it, and the explanation of the first failure lists it.
        if tests
            .same_cause_before::<L>(&result, suspects, &selection)
            .is_none()
        {
            let later = tests.same_cause_after::<L>(&result, suspects, &selection);
            print!("{explanation}{}", same_cause_list(&test_name, &later));
        }
        std::panic::resume_unwind(Box::new(format!("{test_name} did not pass")));
    }
}

/// The lines after a first failure's explanation naming the later failed checks with the
/// same cause, one line each (test name and what it checks, cut to fit 120 columns); empty
/// when there are none.
fn same_cause_list(first: &str, later: &[(String, &str)]) -> String {
    if later.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\nsame cause as {first}, so no output of their own: {} more failed check{}\n",
        later.len(),
        if later.len() == 1 { "" } else { "s" }
    );
    for (name, guards) in later {
        out.push_str(&crate::suite::core::failure::cut(
            &format!("  {name}: {guards}"),
            crate::suite::core::failure::LINE_WIDTH,
        ));
        out.push('\n');
    }
    out
}
