//! The course-platform recipes in `platforms/`, each run end to end as its platform runs it,
//! on a correct submission, a wrong one (`allow` charges one token for any cost) and one
//! that does not build:
//!
//! - **Gradescope**: `run_autograder` in an autograder root laid out as Gradescope lays it
//!   out (`source/` holding the course's ratelimit-lab, `submission/`, `results/`), the
//!   correct submission uploaded as loose files the way a learner drags them in;
//! - **Exercism**: `bin/run.sh SLUG INPUT_DIR OUTPUT_DIR`;
//! - **GitHub Classroom**: the `run:` line of the template's workflow step, in a workspace
//!   holding the learner's checkout and the course's, then its `result` output read the way
//!   `autograding-grading-reporter` reads it (the step's id, upper-cased, plus `_RESULTS`;
//!   base64; points as the sum of the tests' scores).
//!
//! The grading command and the course crate are given through the recipes' overrides (the
//! platform would build them; here they are this build's binary and a copy of the template
//! per submission). Every `junit.xml` the Gradescope and Exercism recipes leave is validated
//! against the JUnit schema.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ratelimit_lab::suite::CHECKS;
use serde_json::Value;
use support::{
    assert_valid_junit, base64_decode, course, learner_target, submission_from, text, ROOT,
};

/// The three submissions each recipe grades.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Correct,
    Wrong,
    Broken,
}

const KINDS: [Kind; 3] = [Kind::Correct, Kind::Wrong, Kind::Broken];

impl Kind {
    /// Its file in `testdata/submissions/`.
    fn source(self) -> &'static str {
        match self {
            Kind::Correct => "correct",
            Kind::Wrong => "wrong",
            Kind::Broken => "does_not_build",
        }
    }
}

/// Points a design that passes every check scores.
fn max_score() -> u64 {
    CHECKS.iter().map(|c| u64::from(c.points)).sum()
}

/// The submission `kind` for `platform` at `target/tmp/submissions/<platform>_<kind>`, and
/// the course crate it is graded in (a package of its own).
fn prepared(platform: &str, kind: Kind) -> (PathBuf, PathBuf) {
    let name = format!("{platform}_{}", kind.source());
    (submission_from(&name, kind.source()), course(&name))
}

/// A fresh scratch directory `target/tmp/platforms/<name>`.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("platforms")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// `command` with the recipes' overrides: this build's grading command, the course crate,
/// the shared target directory; offline, and with no report directory leaking in.
fn with_overrides<'c>(command: &'c mut Command, template: &Path) -> &'c mut Command {
    command
        .env("RATELIMIT_LAB_BIN", env!("CARGO_BIN_EXE_ratelimit-lab"))
        .env("RATELIMIT_LAB_TEMPLATE", template)
        .env("CARGO_TARGET_DIR", learner_target())
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove(ratelimit_lab::suite::env::REPORT_DIR)
}

fn read_json(path: &Path, output: &Output) -> Value {
    let text_of_file = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}\n{}", path.display(), text(output)));
    serde_json::from_str(&text_of_file)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text_of_file}", path.display()))
}

#[test]
fn gradescope_run_autograder_grades_each_submission() {
    let mut junit = Vec::new();
    for kind in KINDS {
        let (solution, template) = prepared("gradescope", kind);
        // The autograder root as Gradescope lays it out: the zip unpacked in source/ (the
        // course's ratelimit-lab beside the scripts), run_autograder copied to the root.
        let root = scratch(&format!("gradescope-{}", kind.source()));
        std::fs::create_dir_all(root.join("source")).expect("source/");
        std::os::unix::fs::symlink(
            std::fs::canonicalize(ROOT).expect("the repository"),
            root.join("source/ratelimit-lab"),
        )
        .expect("link the course");
        let recipe = Path::new(ROOT).join("platforms/gradescope");
        for file in ["setup.sh", "run_autograder"] {
            std::fs::copy(recipe.join(file), root.join("source").join(file)).expect("copy");
        }
        std::fs::copy(recipe.join("run_autograder"), root.join("run_autograder")).expect("copy");
        // The correct submission is uploaded as loose files, the others as a crate's src/.
        let submission = root.join("submission");
        if kind == Kind::Correct {
            std::fs::create_dir_all(&submission).expect("submission/");
            for entry in std::fs::read_dir(solution.join("src"))
                .expect("src/")
                .flatten()
            {
                std::fs::copy(entry.path(), submission.join(entry.file_name())).expect("copy");
            }
        } else {
            std::fs::rename(&solution, &submission).expect("move the submission");
        }
        let output = with_overrides(&mut Command::new(root.join("run_autograder")), &template)
            .env("AUTOGRADER_ROOT", &root)
            .output()
            .expect("run_autograder runs");
        assert!(output.status.success(), "{kind:?}: {}", text(&output));
        let results = read_json(&root.join("results/results.json"), &output);
        let score = results["score"].as_u64().expect("score");
        assert_eq!(results["max_score"].as_u64(), Some(max_score()), "{kind:?}");
        let tests = results["tests"].as_array().cloned().unwrap_or_default();
        match kind {
            Kind::Correct => {
                assert_eq!(score, max_score(), "{}", results["output"]);
                assert_eq!(tests.len(), CHECKS.len());
                assert!(tests.iter().all(|t| t["status"] == "passed"));
            }
            Kind::Wrong => {
                assert!(0 < score && score < max_score(), "{score}");
                assert_eq!(tests.len(), CHECKS.len());
                assert!(tests.iter().any(|t| t["status"] == "failed"
                    && t["output"].as_str().is_some_and(|o| o.contains("cost"))));
            }
            Kind::Broken => {
                assert_eq!(score, 0);
                let said = results["output"].as_str().unwrap_or_default();
                assert!(said.starts_with("the submission does not build"), "{said}");
            }
        }
        junit.push(root.join("results/junit.xml"));
    }
    assert_valid_junit(&junit);
}

#[test]
fn exercism_run_sh_grades_each_submission() {
    let run_sh = Path::new(ROOT).join("platforms/exercism/bin/run.sh");
    let mut junit = Vec::new();
    for kind in KINDS {
        let (solution, template) = prepared("exercism", kind);
        let out = scratch(&format!("exercism-{}", kind.source()));
        let output = with_overrides(&mut Command::new(&run_sh), &template)
            .arg("rate-limiter")
            .arg(&solution)
            .arg(&out)
            .output()
            .expect("run.sh runs");
        assert!(output.status.success(), "{kind:?}: {}", text(&output));
        let results = read_json(&out.join("results.json"), &output);
        assert_eq!(results["version"], 3);
        let tests = results["tests"].as_array().cloned().unwrap_or_default();
        let expected = match kind {
            Kind::Correct => "pass",
            Kind::Wrong => "fail",
            Kind::Broken => "error",
        };
        assert_eq!(results["status"], expected, "{}", results["message"]);
        if kind == Kind::Broken {
            assert!(tests.is_empty());
            let said = results["message"].as_str().unwrap_or_default();
            assert!(said.starts_with("the submission does not build"), "{said}");
        } else {
            assert_eq!(tests.len(), CHECKS.len());
            for test in &tests {
                assert!(test["task_id"]
                    .as_u64()
                    .is_some_and(|t| (1..=4).contains(&t)));
                if test["status"] != "pass" {
                    assert!(!test["message"].as_str().unwrap_or_default().is_empty());
                }
            }
        }
        junit.push(out.join("junit.xml"));
    }
    assert_valid_junit(&junit);
    // A runner called without its three arguments says how to call it.
    let output = Command::new(&run_sh)
        .arg("rate-limiter")
        .output()
        .expect("run.sh runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).contains("usage: bin/run.sh SLUG INPUT_DIR OUTPUT_DIR"));
}

/// The template's workflow, as the lines the test needs: the `run:` line of the step with
/// `id: <id>`, and the reporter step's `runners:` and environment.
struct Workflow {
    text: String,
}

impl Workflow {
    fn read() -> Workflow {
        let path = Path::new(ROOT).join("templates/learner/.github/workflows/classroom.yml");
        Workflow {
            text: std::fs::read_to_string(&path).expect("the template's classroom.yml"),
        }
    }

    /// The steps, each as its lines (a step starts at `- ` under `steps:`).
    fn steps(&self) -> Vec<Vec<&str>> {
        let mut steps: Vec<Vec<&str>> = Vec::new();
        let mut in_steps = false;
        for line in self.text.lines() {
            let trimmed = line.trim_start();
            if trimmed == "steps:" {
                in_steps = true;
                continue;
            }
            if !in_steps {
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix("- ") {
                steps.push(vec![rest]);
            } else if let Some(step) = steps.last_mut() {
                step.push(trimmed);
            }
        }
        steps
    }

    /// The value of `key:` in `step`, quotes removed.
    fn field<'a>(step: &[&'a str], key: &str) -> Option<&'a str> {
        step.iter().find_map(|line| {
            line.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .map(|value| value.trim().trim_matches('"'))
        })
    }
}

#[test]
fn github_classroom_workflow_step_sets_the_result_the_reporter_reads() {
    let workflow = Workflow::read();
    let steps = workflow.steps();
    let reporter = steps
        .iter()
        .find(|s| {
            Workflow::field(s, "uses")
                .is_some_and(|u| u.starts_with("classroom-resources/autograding-grading-reporter@"))
        })
        .expect("a reporter step");
    let runners = Workflow::field(reporter, "runners").expect("the reporter's runners");
    assert!(
        !runners.is_empty() && runners.chars().all(|c| c.is_ascii_alphanumeric()),
        "the reporter accepts step ids of letters and digits: {runners}"
    );
    // The reporter finds each runner's result in the variable <ID>_RESULTS.
    let variable = format!("{}_RESULTS", runners.to_uppercase());
    assert_eq!(
        Workflow::field(reporter, &variable),
        Some(format!("${{{{steps.{runners}.outputs.result}}}}").as_str()),
    );
    let step = steps
        .iter()
        .find(|s| Workflow::field(s, "id") == Some(runners))
        .expect("the runner step");
    let run = Workflow::field(step, "run").expect("the runner step's command");

    for kind in KINDS {
        let (solution, template) = prepared("classroom", kind);
        // The workflow's workspace: the learner's checkout in submission/, the course's in
        // course/ (as the two checkout steps place them).
        let workspace = scratch(&format!("classroom-{}", kind.source()));
        std::fs::rename(&solution, workspace.join("submission")).expect("move the submission");
        std::os::unix::fs::symlink(
            std::fs::canonicalize(ROOT).expect("the repository"),
            workspace.join("course"),
        )
        .expect("link the course");
        let github_output = workspace.join("github_output");
        std::fs::write(&github_output, "").expect("GITHUB_OUTPUT");
        let output = with_overrides(&mut Command::new("bash"), &template)
            .arg("-c")
            .arg(run)
            .current_dir(&workspace)
            .env("GITHUB_OUTPUT", &github_output)
            .output()
            .expect("the step runs");
        assert!(output.status.success(), "{kind:?}: {}", text(&output));
        // As the reporter reads it: the step's output, base64, JSON.
        let outputs = std::fs::read_to_string(&github_output).expect("GITHUB_OUTPUT");
        let encoded = outputs
            .lines()
            .find_map(|l| l.strip_prefix("result="))
            .unwrap_or_else(|| panic!("no result output: {outputs}\n{}", text(&output)));
        let decoded = base64_decode(encoded).expect("the result is base64");
        let result: Value = serde_json::from_slice(&decoded).expect("the result is JSON");
        let tests = result["tests"].as_array().cloned().unwrap_or_default();
        let points: u64 = tests.iter().filter_map(|t| t["score"].as_u64()).sum();
        assert_eq!(result["max_score"].as_u64(), Some(max_score()));
        assert!(tests.iter().all(|t| t["name"].is_string()
            && ["pass", "fail", "error"].contains(&t["status"].as_str().unwrap_or_default())));
        match kind {
            Kind::Correct => {
                assert_eq!(result["status"], "pass");
                assert_eq!(points, max_score());
                assert_eq!(tests.len(), CHECKS.len());
            }
            Kind::Wrong => {
                assert_eq!(result["status"], "fail");
                assert!(0 < points && points < max_score(), "{points}");
                assert!(tests
                    .iter()
                    .any(|t| t["status"] == "fail" && t["score"] == 0 && t["message"] != ""));
            }
            Kind::Broken => {
                assert_eq!(result["status"], "error");
                assert_eq!(points, 0);
                assert_eq!(tests.len(), 1);
                assert_eq!(tests[0]["name"], "build");
                let said = tests[0]["message"].as_str().unwrap_or_default();
                assert!(said.starts_with("the submission does not build"), "{said}");
            }
        }
    }
}

#[test]
fn the_junit_schema_check_rejects_what_ci_servers_would_reject() {
    let dir = scratch("junit-invalid");
    let cases = [
        // A time with four decimals (the schema allows at most three).
        (
            "time",
            "<testsuites><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\" \
             time=\"1.2345\"><testcase name=\"a\"/></testsuite></testsuites>",
        ),
        // A testcase without a name.
        (
            "name",
            "<testsuites><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\">\
             <testcase classname=\"c\"/></testsuite></testsuites>",
        ),
        // A testsuite without its counts.
        (
            "counts",
            "<testsuites><testsuite name=\"s\"><testcase name=\"a\"/></testsuite></testsuites>",
        ),
    ];
    for (name, xml) in cases {
        let file = dir.join(format!("{name}.xml"));
        std::fs::write(&file, xml).expect("write");
        let output = support::validate_junit(&[file]);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", text(&output));
        assert!(
            text(&output).contains("invalid "),
            "{name}: {}",
            text(&output)
        );
    }
}
