//! What a learner reads in plain `cargo test`: one slip of a design, one explanation.
//!
//! The course crate is the learner template holding the correct design with one planted
//! slip, a retry estimate one nanosecond early; it fails many checks for that one reason.
mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{course, design_source, learner_target, text};

/// `cargo test` in the course crate `dir`, with `args` after `--`.
fn cargo_test(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO"))
        .arg("test")
        .arg("--")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", learner_target())
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove(ratelimit_lab::suite::env::REPORT_DIR)
        .output()
        .expect("cargo runs")
}

/// The number of failed tests libtest reports.
fn failed_tests(stdout: &str) -> usize {
    stdout
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("test result: FAILED. ")?;
            let (_, after) = rest.split_once(" passed; ")?;
            after.split_once(" failed")?.0.parse().ok()
        })
        .unwrap_or(0)
}

#[test]
fn one_slip_is_explained_once_and_every_other_failure_points_at_it() {
    let dir = course("one_slip");
    let correct = design_source();
    let slip = correct.replace(
        "(need - balance).div_ceil(u128::from(policy.tokens_per_second()))",
        "(need - balance).div_ceil(u128::from(policy.tokens_per_second())) - 1",
    );
    assert_ne!(slip, correct, "the slip is planted");
    std::fs::write(
        dir.join("src/lib.rs"),
        format!("{slip}\n\n/// The graded design.\npub type MyLimiter = Design;\n"),
    )
    .expect("write the design");

    let output = cargo_test(&dir, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{}", text(&output));
    let failed = failed_tests(&stdout);
    assert!(failed > 10, "the slip fails many checks\n{stdout}");
    // One full explanation, of the first failure in suite order, with a trace shrunk to the
    // two calls that show the early retry; the invariant is not named, since a retry
    // estimate is an answer, not a stored state.
    assert_eq!(stdout.matches("to rerun it:").count(), 1, "{stdout}");
    assert!(
        stdout.contains("seed_trace_table (R1): FAILED\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("step 2: allow(\"k\", cost 1, at 0 ns)") && !stdout.contains("step 3:"),
        "{stdout}"
    );
    assert!(!stdout.contains("  I1: "), "{stdout}");
    // Every other failure prints nothing of its own (libtest shows no output section for
    // it) and is listed, one line each, after the explanation.
    assert_eq!(stdout.matches(" stdout ----").count(), 1, "{stdout}");
    let list = stdout
        .split("same cause as c01::seed_trace_table, so no output of their own: ")
        .nth(1)
        .unwrap_or_default();
    assert!(
        list.starts_with(&format!("{} more failed checks\n", failed - 1)),
        "{stdout}"
    );
    let listed = list
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  c"))
        .count();
    assert_eq!(listed, failed - 1, "{stdout}");
    // What a person reads: at most 150 lines, none wider than 120 columns.
    let lines = stdout.lines().count();
    assert!(lines <= 150, "{lines} lines\n{stdout}");
    for line in stdout.lines() {
        assert!(line.chars().count() <= 120, "too wide: {line}");
    }

    // A run of one check alone explains that check in full.
    let alone = cargo_test(&dir, &["r1_retry_after_is_a_ceiling"]);
    let stdout = String::from_utf8_lossy(&alone.stdout);
    assert_eq!(failed_tests(&stdout), 1, "{stdout}");
    assert_eq!(stdout.matches("to rerun it:").count(), 1, "{stdout}");
    assert!(!stdout.contains("same cause as"), "{stdout}");
}
