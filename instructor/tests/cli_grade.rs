//! `ratelimit-lab grade`, run as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod support;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .args(args)
        // A report directory set in the caller's environment must not leak into these runs.
        .env_remove(ratelimit_lab::suite::env::REPORT_DIR)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("output is UTF-8")
}

/// A fresh directory under the target directory's temporary area, named for this process so
/// that two runs sharing a target directory cannot collide, removed first if a previous run
/// left it behind.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()))
}

#[test]
fn grade_reports_a_correct_and_a_wrong_design_as_catalogued() {
    let out = run(&[
        "grade",
        "--design",
        "TokenBucket",
        "--design",
        "RetroactiveRate",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        text(&out.stderr)
    );
    // Columns are separated by two spaces or more; a cell holds at most single spaces.
    let cells = |line: &str| -> Vec<String> {
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let header = cells(stdout.lines().next().unwrap_or_default());
    assert_eq!(
        header,
        [
            "design",
            "expected",
            "outcome",
            "score",
            "first failure",
            "mistake named"
        ]
    );
    let row = |name: &str| -> Vec<String> {
        cells(
            stdout
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no row for {name}: {stdout}")),
        )
    };
    let reference = row("TokenBucket");
    assert_eq!(reference[1..3], ["passes", "passes"], "{stdout}");
    assert_eq!(reference[4], "-", "{stdout}");
    // A design wrong sequentially, so the row is the same on every run (a race's row depends
    // on whether real threads showed it).
    let wrong = row("RetroactiveRate");
    assert_eq!(wrong[1..3], ["fails R4", "fails R4"], "{stdout}");
    assert_eq!(wrong[4], "seed_cutover_one_token", "{stdout}");
    assert_eq!(wrong[5], "RetroactiveRate", "{stdout}");
    // The legend wraps at 100 columns: read it with its line breaks as spaces.
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("score: points earned; each of the"),
        "{stdout}"
    );
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 120,
            "a line over 120 columns: {line}"
        );
    }
    // Progress, one line per design as it is graded (designs run side by side, so in the
    // order they end), also when standard error is a pipe.
    let stderr = text(&out.stderr);
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("graded "))
        .collect();
    assert_eq!(progress.len(), 2, "{stderr}");
    assert!(
        progress[0].contains("(1 of 2)") && progress[1].contains("(2 of 2)"),
        "{stderr}"
    );
    for name in ["TokenBucket", "RetroactiveRate"] {
        assert!(
            progress
                .iter()
                .any(|l| l.starts_with(&format!("graded {name} ("))),
            "{stderr}"
        );
    }
    assert!(
        stdout.contains("each behaves as the catalog says"),
        "{stdout}"
    );
    assert!(stdout.contains("slowest design:"), "{stdout}");
    assert!(!stdout.contains("CONTRADICTS"), "{stdout}");
}

#[test]
fn grade_explains_the_first_failure() {
    let out = run(&["grade", "--design", "RetroactiveRate", "--explain"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("== RetroactiveRate =="), "{stdout}");
    assert!(
        stdout.contains("Changing rate two→four at 0.5s incorrectly credits two tokens"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cargo run --release -- grade --design RetroactiveRate --explain"),
        "{stdout}"
    );
}

#[test]
fn grade_refuses_an_unknown_design_and_lists_the_valid_ones() {
    let out = run(&["grade", "--design", "nope"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("\"nope\""), "{stderr}");
    for d in ratelimit_lab_instructor::catalog::DESIGNS {
        assert!(stderr.contains(d.name), "{} missing: {stderr}", d.name);
    }
}

#[test]
fn grade_writes_exercism_gradescope_and_junit_reports() {
    let dir = scratch("cli_grade_reports");
    let dir_arg = dir.to_str().expect("the target directory is UTF-8");
    let out = run(&[
        "grade",
        "--design",
        "TokenBucket",
        "--design",
        "RetroactiveRate",
        "--report-dir",
        dir_arg,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let exercism = read_json(&dir.join("TokenBucket").join("results.json"));
    assert_eq!(exercism["version"], 3, "{exercism}");
    assert_eq!(exercism["status"], "pass", "{exercism}");
    let tests = exercism["tests"].as_array().expect("tests is an array");
    assert_eq!(tests.len(), ratelimit_lab::suite::CHECKS.len());
    assert!(tests.iter().all(|t| t["status"] == "pass"), "{exercism}");
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("checks passed") && message.contains("every check passed"),
        "the top-level message is the card's summary: {exercism}"
    );

    let gradescope = read_json(&dir.join("TokenBucket").join("gradescope.json"));
    assert!(
        gradescope["max_score"].as_u64().unwrap_or(0) > 0,
        "{gradescope}"
    );
    assert_eq!(gradescope["score"], gradescope["max_score"], "{gradescope}");
    let numbers: Vec<&str> = gradescope["tests"]
        .as_array()
        .expect("tests is an array")
        .iter()
        .filter_map(|t| t["number"].as_str())
        .collect();
    assert_eq!(numbers.first(), Some(&"1.1"), "{gradescope}");
    assert_eq!(numbers.len(), ratelimit_lab::suite::CHECKS.len());

    // JUnit XML beside them, for a design that passes and one that does not: a testcase per
    // check, a failure per failed check, both valid against the JUnit schema.
    let checks = ratelimit_lab::suite::CHECKS.len();
    let junit = |design: &str| {
        let path = dir.join(design).join("junit.xml");
        let xml = std::fs::read_to_string(&path).expect("junit.xml");
        (path, xml)
    };
    let (passing, xml) = junit("TokenBucket");
    assert_eq!(xml.matches("<testcase ").count(), checks, "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    let (failing, xml) = junit("RetroactiveRate");
    assert_eq!(xml.matches("<testcase ").count(), checks, "{xml}");
    let wrong = read_json(&dir.join("RetroactiveRate").join("results.json"));
    let failed = wrong["tests"]
        .as_array()
        .expect("tests is an array")
        .iter()
        .filter(|t| t["status"] == "fail")
        .count();
    assert!(failed > 0);
    assert_eq!(xml.matches("<failure ").count(), failed, "{xml}");
    support::assert_valid_junit(&[passing, failing]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn grade_prints_the_card_as_json() {
    let out = run(&["grade", "--design", "RetroactiveRate", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let card: Value = serde_json::from_slice(&out.stdout).expect("the card is JSON");
    let design = &card["designs"][0];
    assert_eq!(design["design"], "RetroactiveRate", "{card}");
    assert_eq!(design["role"], "wrong", "{card}");
    assert_eq!(design["first_failure"]["requirement"], "R4", "{card}");
    assert_eq!(design["diagnosis"], "retroactive_rate", "{card}");
    assert_eq!(design["verdict"], Value::Null, "{card}");
    assert_eq!(card["contradictions"], 0, "{card}");
    assert!(card["max_ms"].as_u64().is_some(), "{card}");
}

#[test]
fn grade_reports_timings_with_the_first_counterexample_of_a_wrong_design() {
    let out = run(&[
        "grade",
        "--design",
        "TokenBucket",
        "--design",
        "FixedWindowBucket",
        "--timings",
    ]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("first counterexample (s)"), "{stdout}");
    let row = |name: &str| {
        stdout
            .lines()
            .rfind(|l| l.contains(name) && !l.contains("role"))
            .unwrap_or_else(|| panic!("no timings row for {name}: {stdout}"))
            .to_owned()
    };
    // The reference fails nothing: no counterexample; its property checks all ran.
    let reference = row("TokenBucket");
    let cells =
        |line: &str| -> Vec<String> { line.split('|').map(|c| c.trim().to_owned()).collect() };
    let reference = cells(&reference);
    assert_eq!(reference.len(), 5, "{reference:?}");
    assert_eq!(reference[4], "-", "{reference:?}");
    assert!(
        reference[2].parse::<f64>().is_ok(),
        "cases/s shown: {reference:?}"
    );
    // The wrong design's first counterexample is timed.
    let wrong = cells(&row("FixedWindowBucket"));
    assert!(wrong[4].parse::<f64>().is_ok(), "{wrong:?}");
}
