//! What the test harness itself said of each check, held against the suite's per-check
//! records, so that a design cannot grade itself.
//!
//! The suite writes a record of each check into the report directory from inside the test
//! process, which is the design's process too: a design can write a record of its own. The
//! runner trusts a record only when libtest's own line for that test (`test c05::… ... ok` /
//! `... FAILED` on the process's standard output, printed after the test returned) says the
//! same, once. A record that contradicts that line, or a check recorded or reported twice, is
//! graded `error` and named in the report's first paragraph; a record with no line of
//! libtest's is dropped (the check is then reported as not finished, as when the process
//! ended). This is not a sandbox: a design that owns its process can still print libtest's
//! lines itself, or read files; the course's container is the sandbox.
use std::collections::HashMap;

use ratelimit_lab::suite::_runner_support::unfinished::check_of;
use serde_json::Value;

/// What libtest printed for one test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// `test NAME ... ok`.
    Passed,
    /// `test NAME ... FAILED`.
    Failed,
}

/// Every `test NAME ... ok|FAILED` line of libtest's standard output, by test name, in the
/// order printed, and whether libtest's closing `test result:` line was printed.
#[derive(Debug, Default)]
pub struct Libtest {
    said: HashMap<String, Vec<Said>>,
    /// libtest printed its summary: it ran every test it was given to the end.
    pub summarized: bool,
}

impl Libtest {
    /// Reads libtest's standard output.
    pub fn parse(stdout: &str) -> Libtest {
        let mut libtest = Libtest::default();
        for line in stdout.lines() {
            if line.starts_with("test result: ") {
                libtest.summarized = true;
                continue;
            }
            let Some(rest) = line.strip_prefix("test ") else {
                continue;
            };
            let (name, said) = if let Some(name) = rest.strip_suffix(" ... ok") {
                (name, Said::Passed)
            } else if let Some(name) = rest.strip_suffix(" ... FAILED") {
                (name, Said::Failed)
            } else {
                continue;
            };
            libtest.said.entry(name.to_string()).or_default().push(said);
        }
        libtest
    }
}

/// A record the runner refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The test's name.
    pub name: String,
    /// Why, for the learner and the course.
    pub why: String,
}

/// Keeps in `exercism` and `gradescope` (the process's reports) only the records libtest
/// confirms; returns the refused ones. Records without a libtest line are dropped silently
/// (the check is then graded as not finished).
pub fn confirm(
    exercism: &mut Option<Value>,
    gradescope: &mut Option<Value>,
    libtest: &Libtest,
) -> Vec<Refused> {
    let mut refused: Vec<Refused> = Vec::new();
    let mut refuse = |name: &str, why: String| {
        if !refused.iter().any(|r| r.name == name) {
            refused.push(Refused {
                name: name.to_string(),
                why,
            });
        }
    };
    let names = |report: &Option<Value>| -> Vec<(String, bool)> {
        tests(report)
            .iter()
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_string();
                let passed = t.get("status")? == "pass" || t.get("status")? == "passed";
                Some((name, passed))
            })
            .collect()
    };
    for (kind, records) in [
        ("results.json", names(exercism)),
        ("gradescope.json", names(gradescope)),
    ] {
        for (name, passed) in &records {
            if records.iter().filter(|(n, _)| n == name).count() > 1 {
                refuse(
                    name,
                    format!(
                        "refused: the check is recorded more than once in {kind}, which the \
                         suite never does; something in the test process other than the suite \
                         wrote the record"
                    ),
                );
                continue;
            }
            match libtest.said.get(name).map(Vec::as_slice) {
                Some([said]) if (*said == Said::Passed) != *passed => refuse(
                    name,
                    format!(
                        "refused: the record says the check {}, but the test harness reported \
                         it {}; something in the test process other than the suite wrote the \
                         record",
                        if *passed { "passed" } else { "failed" },
                        if *said == Said::Passed {
                            "passed"
                        } else {
                            "FAILED"
                        }
                    ),
                ),
                Some(many) if many.len() > 1 => refuse(
                    name,
                    format!(
                        "refused: the test harness's outcome line for this check was printed \
                         {} times; something in the test process printed test outcomes of its \
                         own",
                        many.len()
                    ),
                ),
                _ => {}
            }
        }
    }
    // What stays: records libtest confirmed once, and nothing refused.
    let keep = |t: &Value| {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            return false;
        };
        !refused.iter().any(|r| r.name == name)
            && libtest.said.get(name).is_some_and(|s| s.len() == 1)
    };
    for report in [&mut *exercism, &mut *gradescope] {
        if let Some(list) = report
            .as_mut()
            .and_then(|r| r.get_mut("tests"))
            .and_then(Value::as_array_mut)
        {
            list.retain(keep);
        }
    }
    refused
}

/// The tests array of `report`.
fn tests(report: &Option<Value>) -> Vec<Value> {
    report
        .as_ref()
        .and_then(|r| r.get("tests"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Sets every figure of the completed reports from their tests, not from what the test process
/// wrote at the top: each Gradescope test scores its check's points when it passed and 0
/// otherwise, out of its check's points; the totals are the sums; Exercism's status is
/// `error` when it was or when a test is, else `fail` when a test failed, else `pass`.
pub fn recount(exercism: &mut Value, gradescope: &mut Value) {
    let (mut score, mut max_score) = (0u64, 0u64);
    if let Some(list) = gradescope.get_mut("tests").and_then(Value::as_array_mut) {
        for test in list {
            let check = test.get("name").and_then(Value::as_str).and_then(check_of);
            let points = check.map_or(0, |c| u64::from(c.points));
            let passed = test.get("status").and_then(Value::as_str) == Some("passed");
            let scored = if passed { points } else { 0 };
            test["score"] = scored.into();
            test["max_score"] = points.into();
            score += scored;
            max_score += points;
        }
    }
    gradescope["score"] = score.into();
    gradescope["max_score"] = max_score.into();
    let statuses: Vec<String> = exercism
        .get("tests")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|t| t["status"].as_str().unwrap_or("error").to_string())
                .collect()
        })
        .unwrap_or_default();
    let status = if exercism["status"] == "error" || statuses.iter().any(|s| s == "error") {
        "error"
    } else if statuses.iter().any(|s| s != "pass") {
        "fail"
    } else {
        "pass"
    };
    exercism["status"] = status.into();
}

/// Marks each refused record's test in the completed reports as an error that says why, and
/// puts the refusal in the reports' first paragraph.
pub fn mark_refused(exercism: &mut Value, gradescope: &mut Value, refused: &[Refused]) {
    if refused.is_empty() {
        return;
    }
    for (report, is_exercism) in [(&mut *exercism, true), (&mut *gradescope, false)] {
        if let Some(list) = report.get_mut("tests").and_then(Value::as_array_mut) {
            for test in list {
                let Some(r) = refused
                    .iter()
                    .find(|r| test.get("name").and_then(Value::as_str) == Some(&r.name))
                else {
                    continue;
                };
                if is_exercism {
                    test["status"] = "error".into();
                    test["message"] = r.why.clone().into();
                } else {
                    test["score"] = 0.into();
                    test["status"] = "failed".into();
                    test["output"] = r.why.clone().into();
                }
            }
        }
    }
    let names: Vec<&str> = refused.iter().map(|r| r.name.as_str()).collect();
    let headline = format!(
        "The grade refused {} record{} that the test harness did not confirm ({}): each is \
         graded error.",
        refused.len(),
        if refused.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    let earlier = exercism["message"].as_str().unwrap_or_default().to_string();
    let message = if earlier.is_empty() {
        headline
    } else {
        format!("{headline}\n\n{earlier}")
    };
    exercism["status"] = "error".into();
    exercism["message"] = message.clone().into();
    gradescope["output"] = message.into();
    let score: u64 = gradescope["tests"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["score"].as_u64()).sum())
        .unwrap_or(0);
    gradescope["score"] = score.into();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reports(records: &[(&str, &str)]) -> (Option<Value>, Option<Value>) {
        let e: Vec<Value> = records
            .iter()
            .map(|(n, s)| json!({"name": n, "status": s}))
            .collect();
        let g: Vec<Value> = records
            .iter()
            .map(|(n, s)| {
                json!({"name": n, "status": if *s == "pass" { "passed" } else { "failed" }})
            })
            .collect();
        (Some(json!({"tests": e})), Some(json!({"tests": g})))
    }

    fn kept(report: &Option<Value>) -> Vec<String> {
        tests(report)
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    }

    #[test]
    fn libtest_lines_are_read_by_name() {
        let out = "running 2 tests\ntest c01::a ... ok\nnoise test c02::b ... ok\n\
                   test c02::b ... FAILED\n\nfailures:\n\ntest result: FAILED. 1 passed\n";
        let libtest = Libtest::parse(out);
        assert_eq!(libtest.said["c01::a"], [Said::Passed]);
        assert_eq!(libtest.said["c02::b"], [Said::Failed]);
        assert!(libtest.summarized);
        assert!(!Libtest::parse("test c01::a ... ok\n").summarized);
    }

    #[test]
    fn a_record_stands_only_when_libtest_says_the_same_once() {
        let libtest = Libtest::parse(
            "test c01::a ... ok\ntest c02::b ... FAILED\ntest c03::c ... ok\n\
             test c03::c ... ok\ntest c05::e ... FAILED\n",
        );
        let (mut e, mut g) = reports(&[
            ("c01::a", "pass"),
            ("c02::b", "pass"),
            ("c03::c", "pass"),
            ("c04::d", "pass"),
            ("c05::e", "fail"),
        ]);
        let refused = confirm(&mut e, &mut g, &libtest);
        let names: Vec<&str> = refused.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["c02::b", "c03::c"]);
        assert!(refused[0].why.contains("FAILED"), "{}", refused[0].why);
        assert!(refused[1].why.contains("2 times"), "{}", refused[1].why);
        // c04 has no line of libtest's: dropped, to be graded as not finished.
        assert_eq!(kept(&e), ["c01::a", "c05::e"]);
        assert_eq!(kept(&g), ["c01::a", "c05::e"]);
    }

    #[test]
    fn a_check_recorded_twice_is_refused() {
        let libtest = Libtest::parse("test c01::a ... FAILED\n");
        let (mut e, mut g) = reports(&[("c01::a", "fail"), ("c01::a", "pass")]);
        let refused = confirm(&mut e, &mut g, &libtest);
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].why.contains("more than once"),
            "{}",
            refused[0].why
        );
        assert!(kept(&e).is_empty());
    }

    #[test]
    fn refused_records_become_errors_with_the_reason_first() {
        let mut e = json!({"status": "pass", "message": "card", "tests": [
            {"name": "c01::a", "status": "error", "message": "did not finish"}]});
        let mut g = json!({"score": 0, "output": "card", "tests": [
            {"name": "c01::a", "score": 0, "status": "failed", "output": "x"}]});
        let refused = [Refused {
            name: "c01::a".into(),
            why: "refused: because".into(),
        }];
        mark_refused(&mut e, &mut g, &refused);
        assert_eq!(e["status"], "error");
        assert_eq!(e["tests"][0]["message"], "refused: because");
        assert_eq!(g["tests"][0]["output"], "refused: because");
        assert!(e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The grade refused 1 record") && m.ends_with("card")));
    }

    #[test]
    fn the_figures_come_from_the_tests_not_the_top() {
        let check = check_of("c01::seed_trace_table").expect("a check");
        let points = u64::from(check.points);
        let mut e = json!({"status": "pass", "tests": [
            {"name": "c01::seed_trace_table", "status": "fail"}]});
        let mut g = json!({"score": 999, "max_score": 999, "tests": [
            {"name": "c01::seed_trace_table", "status": "passed", "score": 50, "max_score": 50},
            {"name": "c02::unknown", "status": "failed", "score": 0, "max_score": 0}]});
        recount(&mut e, &mut g);
        assert_eq!(e["status"], "fail");
        assert_eq!(g["tests"][0]["score"], points);
        assert_eq!(g["score"], points);
        assert_eq!(g["max_score"], points);
    }
}
