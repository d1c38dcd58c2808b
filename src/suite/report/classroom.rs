//! Grader output for GitHub Classroom: the graded reports as the result one autograding
//! runner step hands to `classroom-resources/autograding-grading-reporter` (`classroom.json`;
//! the step's `result` output is this file in base64).
//!
//! The reporter reads `status` (`pass`, `fail` or `error`: any but `pass` fails the workflow
//! run), `max_score`, and per test `name`, `status`, `score`, `message`, `test_code` and
//! `line_no`; it reports the points as the sum of the tests' `score` out of `max_score`.
//! Each check is one test worth its points, so Classroom shows the same points as
//! Gradescope. A grade with no checks (a submission that does not build) is one test named
//! `build`, with the report's message, worth nothing.
use serde_json::{json, Value};

/// The autograding result for the reports `exercism` (Exercism's `results.json`, version 3)
/// and `gradescope` (Gradescope's `results.json`): status and explanations from the first,
/// points from the second (matched by test name).
pub fn classroom(exercism: &Value, gradescope: &Value) -> Value {
    let graded = gradescope["tests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let status = status_of(&exercism["status"]);
    let mut tests: Vec<Value> = exercism["tests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|test| {
            let name = test["name"].as_str().unwrap_or_default();
            let points = graded
                .iter()
                .find(|g| g["name"].as_str() == Some(name))
                .and_then(|g| g["score"].as_u64())
                .unwrap_or(0);
            let passed = test["status"] == "pass";
            json!({
                "name": name,
                "status": status_of(&test["status"]),
                "score": if passed { points } else { 0 },
                "message": test["message"].as_str().unwrap_or_default(),
                "test_code": test["test_code"].as_str().unwrap_or_default(),
                "filename": "",
                "line_no": 0,
            })
        })
        .collect();
    if tests.is_empty() && status != "pass" {
        tests.push(json!({
            "name": "build",
            "status": status,
            "score": 0,
            "message": exercism["message"].as_str().unwrap_or_default(),
            "test_code": "",
            "filename": "",
            "line_no": 0,
        }));
    }
    json!({
        "version": 1,
        "status": status,
        "max_score": gradescope["max_score"].as_u64().unwrap_or(0),
        "tests": tests,
    })
}

/// `pass` or `fail` as given; anything else (an error, a missing status) is `error`.
fn status_of(status: &Value) -> &'static str {
    match status.as_str() {
        Some("pass") => "pass",
        Some("fail") => "fail",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_come_from_gradescope_and_status_from_exercism() {
        let e = json!({"status": "fail", "tests": [
            {"name": "a", "status": "pass", "test_code": "cargo test a"},
            {"name": "b", "status": "fail", "message": "why"},
            {"name": "c", "status": "error", "message": "did not finish"},
        ]});
        let g = json!({"max_score": 6, "tests": [
            {"name": "a", "score": 3}, {"name": "b", "score": 0}, {"name": "c", "score": 0},
        ]});
        let r = classroom(&e, &g);
        assert_eq!(r["version"], 1);
        assert_eq!(r["status"], "fail");
        assert_eq!(r["max_score"], 6);
        let scores: Vec<u64> = r["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["score"].as_u64())
            .collect();
        assert_eq!(scores, [3, 0, 0]);
        assert_eq!(r["tests"][2]["status"], "error");
        assert_eq!(r["tests"][1]["message"], "why");
        assert_eq!(r["tests"][0]["test_code"], "cargo test a");
    }

    #[test]
    fn a_grade_without_checks_is_one_build_error_worth_nothing() {
        let e = json!({"status": "error", "message": "does not build", "tests": []});
        let g = json!({"max_score": 66, "tests": []});
        let r = classroom(&e, &g);
        assert_eq!(r["status"], "error");
        assert_eq!(r["max_score"], 66);
        assert_eq!(r["tests"][0]["name"], "build");
        assert_eq!(r["tests"][0]["message"], "does not build");
        assert_eq!(r["tests"][0]["score"], 0);
    }
}
