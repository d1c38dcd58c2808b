//! `ratelimit-lab submission`, run as a grading platform runs it: a correct submission; the
//! four kinds of broken one in `testdata/submissions/` (does not build, panics, ends the test
//! process, never returns); one that brings its own manifest, tests and build script; one
//! that forges its reports; and three that wrap a design the suite would pass. Each must
//! leave valid reports, graded by the course's crate.
//!
//! Submissions and course crates come from [`support`].

mod support;

use std::path::Path;
use std::process::{Command, Output};

use ratelimit_lab::suite::CHECKS;
use serde_json::Value;
use support::{course, learner_target, submission_from, text, ROOT};

/// A fresh submission at `target/tmp/submissions/<name>` from
/// `testdata/submissions/<name>.rs`.
fn submission(name: &str) -> std::path::PathBuf {
    submission_from(name, name)
}

/// Runs `submission` on `dir` with `args`, the builds in `target/learner`, offline (CI
/// fetched the template's dependencies), and returns the output and both reports.
fn grade(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> (Output, Value, Value) {
    let out = dir.join("out");
    let name = dir.file_name().and_then(|n| n.to_str()).expect("a name");
    let output = Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .arg("submission")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .arg("--template")
        .arg(course(name))
        .args(args)
        .env("CARGO_TARGET_DIR", learner_target())
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove(ratelimit_lab::suite::env::REPORT_DIR)
        .envs(envs.iter().copied())
        .output()
        .expect("the binary runs");
    let read = |file: &str| -> Value {
        let path = out.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{} was not written: {e}\n{}", path.display(), text(&output))
        });
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()))
    };
    let (exercism, gradescope) = (read("results.json"), read("gradescope.json"));
    assert!(
        output.status.success(),
        "exit status 0 once the reports are written\n{}",
        text(&output)
    );
    assert_valid(&exercism, &gradescope);
    support::assert_valid_junit(&[out.join("junit.xml")]);
    (output, exercism, gradescope)
}

/// The shape both platforms require.
fn assert_valid(exercism: &Value, gradescope: &Value) {
    assert_eq!(exercism["version"], 3);
    let status = exercism["status"].as_str().unwrap_or_default();
    assert!(
        ["pass", "fail", "error"].contains(&status),
        "status {status}"
    );
    if status == "error" {
        assert!(
            !exercism["message"].as_str().unwrap_or_default().is_empty(),
            "an error needs a message"
        );
    }
    for test in exercism["tests"].as_array().expect("tests") {
        assert!(
            test["name"].is_string() && test["test_code"].is_string(),
            "{test}"
        );
        let status = test["status"].as_str().unwrap_or_default();
        assert!(["pass", "fail", "error"].contains(&status), "{test}");
        if status != "pass" {
            assert!(
                !test["message"].as_str().unwrap_or_default().is_empty(),
                "{test}"
            );
        }
    }
    let score = gradescope["score"].as_u64().expect("score");
    assert!(score <= gradescope["max_score"].as_u64().expect("max_score"));
    assert!(
        gradescope["execution_time"]
            .as_f64()
            .expect("execution_time")
            > 0.0
    );
    for test in gradescope["tests"].as_array().expect("tests") {
        assert!(
            test["score"].as_u64() <= test["max_score"].as_u64(),
            "{test}"
        );
    }
}

/// The tests of a report, by name, each with its status and message.
fn tests(report: &Value) -> Vec<(String, String, String)> {
    report["tests"]
        .as_array()
        .map(|tests| {
            tests
                .iter()
                .map(|t| {
                    let field = |f: &str| t[f].as_str().unwrap_or_default().to_string();
                    (field("name"), field("status"), field("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every check of the suite is reported exactly once, in suite order.
fn assert_every_check_once(report: &Value) {
    let names: Vec<String> = tests(report).into_iter().map(|t| t.0).collect();
    let expected: Vec<String> = CHECKS.iter().map(|c| c.test_name()).collect();
    assert_eq!(names, expected);
}

#[test]
fn a_submission_that_does_not_build_gets_the_compilers_errors() {
    let dir = submission("does_not_build");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_eq!(exercism["status"], "error");
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the submission does not build"),
        "{message}"
    );
    assert_eq!(
        message.matches("error[E0609]: no field `allowed`").count(),
        1,
        "the error once, though two targets compile the file: {message}"
    );
    assert!(message.contains("src/lib.rs:15"), "{message}");
    assert!(tests(&exercism).is_empty());
    assert_eq!(gradescope["score"], 0);
    assert_eq!(gradescope["output"], exercism["message"]);
}

#[test]
fn a_submission_that_panics_is_graded_check_by_check() {
    let dir = submission("panics");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_eq!(exercism["status"], "fail");
    assert_every_check_once(&exercism);
    let all = tests(&exercism);
    assert!(
        all.iter().any(|t| t.1 == "pass"),
        "checks with costs of one pass"
    );
    assert!(
        all.iter()
            .any(|t| t.1 == "fail" && t.2.contains("costs above one are not supported yet")),
        "the panic's message is in the report"
    );
    assert!(gradescope["score"].as_u64() < gradescope["max_score"].as_u64());
}

#[test]
fn a_submission_that_exits_keeps_what_finished_and_names_the_check_that_was_running() {
    let dir = submission("exits");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_eq!(exercism["status"], "error");
    assert_every_check_once(&exercism);
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("The grade is incomplete"), "{message}");
    assert!(
        message.contains("the test process ended (exit status 3) while "),
        "{message}"
    );
    let all = tests(&exercism);
    assert!(
        all.iter().any(|t| t.1 == "error"
            && t.2
                .starts_with("did not finish: the test process ended (exit status 3)")),
        "{all:?}"
    );
    assert!(all.iter().all(|t| t.1 != "error"
        || t.2.starts_with("did not finish")
        || t.2.starts_with("not run")));
    assert_every_check_once(&gradescope);
}

#[test]
fn a_submission_that_never_returns_is_stopped_at_the_limit_with_the_hung_check_named() {
    let dir = submission("never_returns");
    // The check's own limit is set far beyond the run's, so that the run's limit strikes.
    let (_, exercism, gradescope) = grade(
        &dir,
        &["--test-limit-secs", "15"],
        &[(ratelimit_lab::suite::env::TIMEOUT, "100000")],
    );
    assert_eq!(exercism["status"], "error");
    assert_every_check_once(&exercism);
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the run's time limit of 15 s struck while "),
        "{message}"
    );
    let all = tests(&exercism);
    assert!(
        all.iter().any(|t| t.1 == "error"
            && t.2
                .starts_with("did not finish: the run's time limit of 15 s struck")),
        "{all:?}"
    );
    assert_every_check_once(&gradescope);
}

#[test]
fn relative_paths_are_taken_from_where_the_runner_starts() {
    let dir = submission_from("relative", "panics");
    let parent = dir.parent().expect("a parent");
    let out = parent.join("relative-out");
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .current_dir(parent)
        .args([
            "submission",
            "relative",
            "--out",
            "relative-out",
            "--template",
        ])
        .arg(course("relative"))
        .env("CARGO_TARGET_DIR", learner_target())
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove(ratelimit_lab::suite::env::REPORT_DIR)
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "{}", text(&output));
    let results = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let exercism: Value = serde_json::from_str(&results).expect("JSON");
    assert_eq!(
        exercism["status"], "fail",
        "graded, not lost: {}",
        exercism["message"]
    );
    assert_every_check_once(&exercism);
    assert!(
        !dir.join("relative-out").exists(),
        "nothing written into the learner's crate"
    );
}

#[test]
fn a_directory_without_sources_gets_an_error_report() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("submissions/empty");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create");
    let (_, exercism, _) = grade(&dir, &[], &[]);
    assert_eq!(exercism["status"], "error");
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the submission has no src/"),
        "{message}"
    );
}

#[test]
fn a_correct_submission_passes_every_check() {
    let dir = submission("correct");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_eq!(exercism["status"], "pass", "{}", exercism["message"]);
    assert_every_check_once(&exercism);
    assert_every_check_once(&gradescope);
    assert_eq!(gradescope["score"], gradescope["max_score"]);
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("ignored"),
        "nothing else was brought: {message}"
    );
}

#[test]
fn what_a_submission_brings_beside_its_sources_is_ignored_and_said_in_one_line() {
    let dir = submission_from("brings_its_own", "correct");
    // Its own manifest with a dependency the course does not have, an empty test file (so
    // that its own crate would run no suite), and a build script that fails.
    let root = std::fs::canonicalize(ROOT).expect("the repository");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"mine\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [workspace]\n[dependencies]\nratelimit-lab = {{ path = {:?} }}\n\
             ratelimit-lab-reference = {{ path = {:?} }}\n",
            root.display().to_string(),
            root.join("reference").display().to_string()
        ),
    )
    .expect("write");
    std::fs::create_dir_all(dir.join("tests")).expect("tests");
    std::fs::write(dir.join("tests/conformance.rs"), "").expect("write");
    std::fs::write(dir.join("build.rs"), "fn main() { panic!(\"built\") }").expect("write");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_every_check_once(&exercism);
    assert_every_check_once(&gradescope);
    assert_eq!(exercism["status"], "pass", "{}", exercism["message"]);
    let message = exercism["message"].as_str().unwrap_or_default();
    let first = message.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "Graded in the course's crate with the submission's src/; the submission's own \
         Cargo.toml, build.rs, tests/ were ignored.",
    );
}

#[test]
fn a_submission_cannot_grade_itself() {
    let dir = submission("forges");
    let out = dir.join("out");
    let (_, exercism, gradescope) = grade(&dir, &[], &[]);
    assert_every_check_once(&exercism);
    assert_every_check_once(&gradescope);
    assert_ne!(exercism["status"], "pass");
    assert!(gradescope["score"].as_u64() < gradescope["max_score"].as_u64());
    for file in [
        "results.json",
        "gradescope.json",
        "junit.xml",
        "classroom.json",
    ] {
        let written = std::fs::read_to_string(out.join(file)).expect("the report");
        assert!(
            !written.contains("forged"),
            "{file} is the runner's: {written}"
        );
    }
    let message = exercism["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("The grade refused "), "{message}");
    // Every check libtest saw pass on a design that rejects every request is one that a
    // rejecting design can pass; none of them is the first check of the lesson.
    let first = &tests(&exercism)[0];
    assert_ne!(first.1, "pass", "{first:?}");
}

#[test]
fn a_submission_that_wraps_a_design_that_passes_does_not_build_and_is_told_why() {
    for (name, path, line) in [
        ("names_reference", "ratelimit_lab::reference", 5),
        ("names_model", "ratelimit_lab::model", 5),
        ("names_catalog", "ratelimit_lab::catalog", 5),
    ] {
        let dir = submission(name);
        let (_, exercism, gradescope) = grade(&dir, &[], &[]);
        assert_eq!(exercism["status"], "error", "{name}");
        assert_eq!(gradescope["score"], 0, "{name}");
        let message = exercism["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the submission does not build: it names designs that pass"),
            "{name}: {message}"
        );
        assert!(
            message.contains(&format!(
                "src/lib.rs:{line}: {path} is not part of a learner's API"
            )),
            "{name}: {message}"
        );
        assert!(
            message.lines().count() <= 5,
            "{name}: not a wall of text: {message}"
        );
        assert!(!message.contains("error[E0603]"), "{name}: {message}");
    }
}
