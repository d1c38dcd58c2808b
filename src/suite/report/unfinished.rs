//! Graded reports that always stand: the report of a test process that ended before every
//! check reported (an exit or abort inside a design, a runner's time limit), completed with
//! an error entry for each missing check; and the report of a submission that could not be
//! graded at all (it does not build, or holds no suite).
//!
//! The reports are Exercism's `results.json` (version 3) and Gradescope's `results.json`, as
//! [`Report::exercism`](crate::suite::report::results::Report::exercism) and
//! [`Report::gradescope`](crate::suite::report::results::Report::gradescope) write them; completing one keeps every
//! entry the process wrote and adds the missing ones at their place in suite order.
use std::time::Duration;

use serde_json::{json, Value};

use crate::suite::checks::table::find;
use crate::suite::checks::table::CHECKS;
use crate::suite::report::results::{exercism_test, gradescope_test, rerun, suite_position};
use crate::suite::report::test_code::test_code;

/// How a test process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It returned by itself, after running every test it was given.
    Finished,
    /// It ended by itself in the middle of the run: `how` says how (`exit status 3`,
    /// `signal 6`).
    Ended {
        /// The exit status or signal, for a person.
        how: String,
    },
    /// The runner stopped it when its time limit struck.
    LimitStruck {
        /// The limit.
        limit: Duration,
    },
}

/// What a test process left behind: the reports it wrote (if any), the suite's tests it was
/// given, and those still marked as running when it ended (see
/// [`running`](crate::suite::run::marks)).
#[derive(Clone, Debug, Default)]
pub struct Leftovers {
    /// Its Exercism report, if it wrote one that parses.
    pub exercism: Option<Value>,
    /// Its Gradescope report, if it wrote one that parses.
    pub gradescope: Option<Value>,
    /// Every suite test it was given, by test name (`seed_trace_table`, `first::r1_…`).
    pub expected: Vec<String>,
    /// The tests still marked as running.
    pub running: Vec<String>,
}

/// The check a test name runs: its last `::` segment, when that is a check of the suite.
pub fn check_of(test_name: &str) -> Option<&'static crate::suite::checks::table::CheckInfo> {
    find(test_name.rsplit("::").next().unwrap_or(test_name))
}

/// A test name's place in a report: the module it was expanded in, then suite order.
fn order(test_name: &str) -> (String, usize) {
    let (module, check) = test_name.rsplit_once("::").unwrap_or(("", test_name));
    (module.to_string(), suite_position(check))
}

/// The tests array of `report`, or an empty one.
fn tests_of(report: Option<&Value>) -> Vec<Value> {
    report
        .and_then(|r| r.get("tests"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn name_of(test: &Value) -> Option<&str> {
    test.get("name").and_then(Value::as_str)
}

/// Both reports for what `leftovers` holds, each missing test added as an error that says
/// why it has no result. Returns `(exercism, gradescope)`. The top-level `status` is `error`
/// and the `message` / `output` begins with what happened whenever a test is missing; when
/// none is, the process's own reports are returned unchanged.
pub fn complete(leftovers: &Leftovers, ending: &Ending) -> (Value, Value) {
    let mut exercism = tests_of(leftovers.exercism.as_ref());
    let mut gradescope = tests_of(leftovers.gradescope.as_ref());
    let reported = |tests: &[Value], name: &str| tests.iter().any(|t| name_of(t) == Some(name));
    let mut missing = Vec::new();
    for name in &leftovers.expected {
        let Some(check) = check_of(name) else {
            continue;
        };
        if reported(&exercism, name) && reported(&gradescope, name) {
            continue;
        }
        let running = leftovers.running.contains(name);
        let mut why = why_missing(ending, running);
        if running {
            // The check that was running is the one to look at alone.
            why.push_str(&format!("\nRun it alone: {}", rerun(name)));
        }
        if !reported(&exercism, name) {
            let code = test_code(check, name, &rerun(name), None);
            exercism.push(exercism_test(
                name,
                check,
                "error",
                Value::String(why.clone()),
                code,
            ));
        }
        if !reported(&gradescope, name) {
            gradescope.push(gradescope_test(name, check, 0, why));
        }
        missing.push((name.as_str(), running));
    }
    if missing.is_empty() {
        if let (Some(e), Some(g)) = (&leftovers.exercism, &leftovers.gradescope) {
            return (e.clone(), g.clone());
        }
    }
    let by_order = |a: &Value, b: &Value| {
        order(name_of(a).unwrap_or_default()).cmp(&order(name_of(b).unwrap_or_default()))
    };
    exercism.sort_by(by_order);
    gradescope.sort_by(by_order);

    let earlier = leftovers
        .exercism
        .as_ref()
        .and_then(|r| r.get("message"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = if missing.is_empty() {
        earlier.to_string()
    } else {
        let headline = headline(ending, leftovers.expected.len(), &missing);
        if earlier.is_empty() {
            headline
        } else {
            format!("{headline}\n\nWhat finished:\n\n{earlier}")
        }
    };
    let all_passed = exercism.iter().all(|t| t["status"] == "pass");
    let status = if !missing.is_empty() {
        "error"
    } else if all_passed {
        "pass"
    } else {
        "fail"
    };
    let score: u64 = gradescope.iter().filter_map(|t| t["score"].as_u64()).sum();
    let max_score: u64 = gradescope
        .iter()
        .filter_map(|t| t["max_score"].as_u64())
        .sum();
    (
        json!({ "version": 3, "status": status, "message": message, "tests": exercism }),
        json!({
            "score": score,
            "max_score": max_score,
            "execution_time": leftovers.gradescope.as_ref().and_then(|g| g.get("execution_time")).cloned().unwrap_or(json!(0.0)),
            "output": message,
            "tests": gradescope,
        }),
    )
}

/// Why a test has no result.
fn why_missing(ending: &Ending, running: bool) -> String {
    match (ending, running) {
        (Ending::LimitStruck { limit }, true) => format!(
            "did not finish: the run's time limit of {} s struck while this check was running \
             (the design may never return here)",
            limit.as_secs()
        ),
        (Ending::LimitStruck { limit }, false) => format!(
            "not run: the run's time limit of {} s struck before this check started",
            limit.as_secs()
        ),
        (Ending::Ended { how }, true) => format!(
            "did not finish: the test process ended ({how}) while this check was running: the \
             design, or code it calls, ended the whole process (std::process::exit, an abort, \
             a stack overflow)"
        ),
        (Ending::Ended { how }, false) => {
            format!("not run: the test process ended ({how}) before this check started")
        }
        (Ending::Finished, _) => {
            "no result: the test process finished without reporting this check".to_string()
        }
    }
}

/// The first paragraph of an incomplete report's message.
fn headline(ending: &Ending, expected: usize, missing: &[(&str, bool)]) -> String {
    let finished = expected - missing.len();
    let running: Vec<&str> = missing.iter().filter(|m| m.1).map(|m| m.0).collect();
    let during = if running.is_empty() {
        String::new()
    } else {
        format!(" while {} ran", running.join(", "))
    };
    let what = match ending {
        Ending::LimitStruck { limit } => {
            format!(
                "the run's time limit of {} s struck{during}",
                limit.as_secs()
            )
        }
        Ending::Ended { how } => format!("the test process ended ({how}){during}"),
        Ending::Finished => "the test process finished without reporting every check".to_string(),
    };
    format!("The grade is incomplete: {finished} of {expected} checks finished; {what}.")
}

/// Both reports for a submission that could not be graded: no test ran, status `error`,
/// `message` says why (for example the compiler's first errors), and Gradescope scores 0 of
/// every point the suite offers. Returns `(exercism, gradescope)`.
pub fn not_graded(message: &str, elapsed: Duration) -> (Value, Value) {
    let max_score: u32 = CHECKS.iter().map(|c| c.points).sum();
    (
        json!({ "version": 3, "status": "error", "message": message, "tests": [] }),
        json!({
            "score": 0,
            "max_score": max_score,
            "execution_time": elapsed.as_secs_f64(),
            "output": message,
            "tests": [],
        }),
    )
}

/// One pair of reports for several test processes' pairs (a crate whose suite is expanded
/// in more than one test file): tests in the order given, scores summed, the worst status
/// (`error`, then `fail`, then `pass`), the messages one after another. A single pair is
/// returned as it is.
pub fn merge(mut parts: Vec<(Value, Value)>) -> Option<(Value, Value)> {
    if parts.len() <= 1 {
        return parts.pop();
    }
    let rank = |s: &Value| match s.as_str() {
        Some("error") => 2,
        Some("fail") => 1,
        _ => 0,
    };
    let mut status = json!("pass");
    let (mut tests, mut graded, mut messages) = (Vec::new(), Vec::new(), Vec::new());
    let (mut score, mut max_score, mut time) = (0, 0, 0.0);
    for (e, g) in &parts {
        if rank(&e["status"]) > rank(&status) {
            status = e["status"].clone();
        }
        tests.extend(tests_of(Some(e)));
        graded.extend(tests_of(Some(g)));
        messages.extend(e["message"].as_str().filter(|m| !m.is_empty()));
        score += g["score"].as_u64().unwrap_or(0);
        max_score += g["max_score"].as_u64().unwrap_or(0);
        time += g["execution_time"].as_f64().unwrap_or(0.0);
    }
    let message = messages.join("\n\n");
    Some((
        json!({ "version": 3, "status": status, "message": message, "tests": tests }),
        json!({
            "score": score,
            "max_score": max_score,
            "execution_time": time,
            "output": message,
            "tests": graded,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(name: &str, status: &str) -> (Value, Value) {
        let check = check_of(name).expect("a check");
        let score = if status == "pass" { check.points } else { 0 };
        (
            exercism_test(name, check, status, Value::Null, String::new()),
            gradescope_test(name, check, score, String::new()),
        )
    }

    fn leftovers(done: &[(&str, &str)], expected: &[&str], running: &[&str]) -> Leftovers {
        let (e, g): (Vec<Value>, Vec<Value>) = done.iter().map(|(n, s)| reported(n, s)).unzip();
        Leftovers {
            exercism: (!done.is_empty())
                .then(|| json!({"version": 3, "status": "fail", "message": "card", "tests": e})),
            gradescope: (!done.is_empty())
                .then(|| json!({"score": 2, "max_score": 2, "execution_time": 1.5, "output": "card", "tests": g})),
            expected: expected.iter().map(|s| s.to_string()).collect(),
            running: running.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn statuses(report: &Value) -> Vec<(String, String)> {
        report["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap_or("?").to_string(),
                    t["status"].as_str().unwrap_or("?").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn an_exit_mid_run_keeps_what_finished_and_names_the_running_check() {
        let left = leftovers(
            &[("seed_trace_table", "pass")],
            &[
                "r1_new_key_starts_full",
                "seed_trace_table",
                "seed_burst_then_retry",
            ],
            &["seed_burst_then_retry"],
        );
        let (e, g) = complete(
            &left,
            &Ending::Ended {
                how: "exit status 3".into(),
            },
        );
        assert_eq!(e["status"], "error");
        assert_eq!(
            statuses(&e),
            [
                ("seed_trace_table".to_string(), "pass".to_string()),
                ("seed_burst_then_retry".to_string(), "error".to_string()),
                ("r1_new_key_starts_full".to_string(), "error".to_string()),
            ],
            "suite order, the finished result kept"
        );
        let message = e["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("The grade is incomplete: 1 of 3 checks finished; the test process ended (exit status 3) while seed_burst_then_retry ran."),
            "{message}"
        );
        assert!(message.ends_with("What finished:\n\ncard"), "{message}");
        let unfinished = e["tests"][1]["message"].as_str().unwrap_or_default();
        assert!(unfinished.starts_with("did not finish"), "{unfinished}");
        assert!(
            unfinished.ends_with(&format!("Run it alone: {}", rerun("seed_burst_then_retry"))),
            "{unfinished}"
        );
        assert!(!e["tests"][2]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Run it alone"));
        assert!(e["tests"][2]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("not run"));
        assert_eq!(g["score"], 2);
        assert_eq!(g["max_score"], 2 + 2 + 1, "every expected check's points");
        assert_eq!(g["tests"].as_array().map(Vec::len), Some(3));
        assert_eq!(g["output"], e["message"]);
        assert_eq!(g["execution_time"], 1.5);
    }

    #[test]
    fn a_limit_struck_before_any_result_still_lists_every_check() {
        let left = leftovers(
            &[],
            &["first::seed_trace_table", "first::r1_new_key_starts_full"],
            &["first::seed_trace_table"],
        );
        let (e, g) = complete(
            &left,
            &Ending::LimitStruck {
                limit: Duration::from_secs(20),
            },
        );
        assert_eq!(e["status"], "error");
        assert_eq!(e["version"], 3);
        assert_eq!(statuses(&e).len(), 2);
        assert!(e["tests"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("time limit of 20 s struck while this check was running"));
        assert_eq!(g["score"], 0);
        assert_eq!(g["tests"][0]["max_score"], 2);
    }

    #[test]
    fn a_complete_report_is_returned_unchanged() {
        let left = leftovers(&[("seed_trace_table", "fail")], &["seed_trace_table"], &[]);
        let (e, g) = complete(&left, &Ending::Finished);
        assert_eq!(Some(e), left.exercism);
        assert_eq!(Some(g), left.gradescope);
    }

    #[test]
    fn tests_that_are_not_checks_are_not_added() {
        let left = leftovers(&[], &["my_own_unit_test"], &[]);
        let (e, _) = complete(
            &left,
            &Ending::Ended {
                how: "signal 6".into(),
            },
        );
        assert!(statuses(&e).is_empty());
    }

    #[test]
    fn reports_of_two_processes_merge_with_the_worst_status() {
        let one = complete(
            &leftovers(&[("seed_trace_table", "pass")], &["seed_trace_table"], &[]),
            &Ending::Finished,
        );
        let two = complete(
            &leftovers(
                &[("seed_trace_table", "fail")],
                &["seed_trace_table", "r1_new_key_starts_full"],
                &[],
            ),
            &Ending::Ended {
                how: "signal 6".into(),
            },
        );
        let (e, g) = merge(vec![one.clone(), two]).expect("two parts");
        assert_eq!(e["status"], "error");
        assert_eq!(statuses(&e).len(), 3);
        assert_eq!(g["tests"].as_array().map(Vec::len), Some(3));
        assert_eq!(g["execution_time"], 3.0);
        assert_eq!(merge(vec![one.clone()]), Some(one));
        assert_eq!(merge(Vec::new()), None);
    }

    #[test]
    fn a_submission_that_cannot_be_graded_gets_an_error_report() {
        let (e, g) = not_graded(
            "error[E0425]: cannot find value `x`",
            Duration::from_millis(1500),
        );
        assert_eq!(e["status"], "error");
        assert_eq!(e["message"], "error[E0425]: cannot find value `x`");
        assert_eq!(e["tests"], json!([]));
        assert_eq!(g["score"], 0);
        assert_eq!(g["max_score"], CHECKS.iter().map(|c| c.points).sum::<u32>());
        assert_eq!(g["execution_time"], 1.5);
    }
}
