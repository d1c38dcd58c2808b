//! Grader output for CI servers: the graded reports as JUnit XML (`junit.xml`), the format
//! Jenkins, GitLab and most CI servers read, in the shape of the `junit-10.xsd` schema
//! Jenkins' xUnit plugin validates against.
//!
//! It is derived from the two JSON reports (see [`write_reports`](crate::suite::report::results::write_reports)), so
//! that whatever wrote them (the suite during `cargo test`, or the `submission` runner after
//! holding the records against libtest's outcomes) the XML says the same thing:
//!
//! - one `testsuites` holding one `testsuite` named `ratelimit-lab conformance`, with the
//!   grade as `properties` (`score`, `max_score`, `status`) and the report's summary as
//!   `system-out`;
//! - one `testcase` per check, in suite order, its `classname` naming the requirement it
//!   guards (`ratelimit_lab.R1`), so a CI server groups the checks by requirement;
//! - a failed check holds a `failure`, a check that did not finish (or was not run) an
//!   `error`; the `message` attribute is the explanation's first line and the element's text
//!   the whole explanation;
//! - a grade with no checks (a submission that does not build) holds a single `testcase`
//!   named `build`, its `error` the report's message, so that a CI server shows why.
//!
//! Text that XML 1.0 cannot carry (control characters other than tab, newline and carriage
//! return) is written as `\u{..}`, so a design's panic message never makes the file invalid.
use serde_json::Value;

/// The suite's name in the XML.
const SUITE: &str = "ratelimit-lab conformance";

/// At most this many characters of an explanation's first line go into `message`.
const MESSAGE_CHARS: usize = 200;

/// `junit.xml` for the reports `exercism` (Exercism's `results.json`, version 3) and
/// `gradescope` (Gradescope's `results.json`), as a complete XML document.
///
/// Checks are taken from `exercism`'s tests (their status and explanation), each matched by
/// name with `gradescope`'s test for its requirement tag; a field either report lacks is left
/// out rather than guessed.
pub fn junit(exercism: &Value, gradescope: &Value) -> String {
    let cases = cases(exercism, gradescope);
    let failures = cases
        .iter()
        .filter(|c| c.outcome == Outcome::Failure)
        .count();
    let errors = cases.iter().filter(|c| c.outcome == Outcome::Error).count();
    let time = seconds(gradescope["execution_time"].as_f64().unwrap_or(0.0));
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time}\"",
        cases.len()
    );
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"{}\" {counts}>\n",
        attribute(SUITE)
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" {counts} skipped=\"0\">\n",
        attribute(SUITE)
    ));
    xml.push_str("    <properties>\n");
    for (name, value) in [
        ("score", number(&gradescope["score"])),
        ("max_score", number(&gradescope["max_score"])),
        (
            "status",
            exercism["status"].as_str().unwrap_or("error").to_string(),
        ),
    ] {
        xml.push_str(&format!(
            "      <property name=\"{name}\" value=\"{}\"/>\n",
            attribute(&value)
        ));
    }
    xml.push_str("    </properties>\n");
    for case in &cases {
        let classname = match &case.requirement {
            Some(r) => format!(" classname=\"ratelimit_lab.{}\"", attribute(r)),
            None => " classname=\"ratelimit_lab\"".to_string(),
        };
        let open = format!(
            "    <testcase name=\"{}\"{classname}",
            attribute(&case.name)
        );
        let element = match case.outcome {
            Outcome::Pass => {
                xml.push_str(&open);
                xml.push_str("/>\n");
                continue;
            }
            Outcome::Failure => "failure",
            Outcome::Error => "error",
        };
        xml.push_str(&open);
        xml.push_str(">\n");
        xml.push_str(&format!(
            "      <{element} type=\"{element}\" message=\"{}\">{}</{element}>\n",
            attribute(&first_line(&case.explanation)),
            text(&case.explanation)
        ));
        xml.push_str("    </testcase>\n");
    }
    // The report's summary, unless the single `build` case already holds it.
    let summary = exercism["message"].as_str().unwrap_or_default();
    let has_checks = exercism["tests"].as_array().is_some_and(|t| !t.is_empty());
    if has_checks && !summary.is_empty() {
        xml.push_str(&format!("    <system-out>{}</system-out>\n", text(summary)));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// How a check ended, as JUnit tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Pass,
    Failure,
    Error,
}

/// One `testcase`.
struct Case {
    name: String,
    requirement: Option<String>,
    outcome: Outcome,
    explanation: String,
}

/// The checks of the reports, or the single `build` case of a grade without checks.
fn cases(exercism: &Value, gradescope: &Value) -> Vec<Case> {
    let tests = exercism["tests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let graded = gradescope["tests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if tests.is_empty() {
        let message = exercism["message"].as_str().unwrap_or_default();
        let outcome = match exercism["status"].as_str() {
            Some("pass") => return Vec::new(),
            Some("fail") => Outcome::Failure,
            _ => Outcome::Error,
        };
        return vec![Case {
            name: "build".to_string(),
            requirement: None,
            outcome,
            explanation: if message.is_empty() {
                "the grade holds no checks".to_string()
            } else {
                message.to_string()
            },
        }];
    }
    tests
        .iter()
        .map(|test| {
            let name = test["name"].as_str().unwrap_or_default().to_string();
            let other = graded.iter().find(|g| g["name"].as_str() == Some(&name));
            let requirement = other
                .and_then(|g| g["tags"].get(0))
                .and_then(Value::as_str)
                .map(str::to_string);
            let outcome = match test["status"].as_str() {
                Some("pass") => Outcome::Pass,
                Some("fail") => Outcome::Failure,
                _ => Outcome::Error,
            };
            let explanation = test["message"]
                .as_str()
                .filter(|m| !m.is_empty())
                .or_else(|| other.and_then(|g| g["output"].as_str()))
                .unwrap_or("no explanation was recorded")
                .to_string();
            Case {
                name,
                requirement,
                outcome,
                explanation,
            }
        })
        .collect()
}

/// A JSON number as written, `0` for anything else.
fn number(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        _ => "0".to_string(),
    }
}

/// Seconds with three decimals (the schema's `SUREFIRE_TIME`: digits, at most three after
/// the point); a negative or non-finite time is written as `0.000`.
fn seconds(time: f64) -> String {
    if time.is_finite() && time >= 0.0 {
        format!("{time:.3}")
    } else {
        "0.000".to_string()
    }
}

/// The line that says what went wrong, cut at [`MESSAGE_CHARS`] characters: the first line of
/// the explanation's second paragraph when its first is the check's header (`name (R1):
/// FAILED` and what the check guards), else its first non-empty line.
fn first_line(explanation: &str) -> String {
    let mut paragraphs = explanation
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let first = paragraphs.next().unwrap_or_default();
    let header = first
        .lines()
        .next()
        .is_some_and(|l| l.ends_with(": FAILED"));
    let paragraph = match paragraphs.next() {
        Some(next) if header => next,
        _ => first,
    };
    let line = paragraph.lines().next().unwrap_or_default().trim();
    let mut cut: String = line.chars().take(MESSAGE_CHARS).collect();
    if line.chars().count() > MESSAGE_CHARS {
        cut.push('…');
    }
    cut
}

/// `value` as an attribute's text: markup escaped, and tab, newline and carriage return as
/// character references (a parser would turn them into spaces otherwise).
fn attribute(value: &str) -> String {
    escape(value, true)
}

/// `value` as an element's text: markup escaped.
fn text(value: &str) -> String {
    escape(value, false)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\t' | '\n' | '\r' if in_attribute => out.push_str(&format!("&#{};", c as u32)),
            '\t' | '\n' | '\r' => out.push(c),
            // Not allowed anywhere in an XML 1.0 document, not even as a reference.
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reports() -> (Value, Value) {
        (
            json!({
                "version": 3,
                "status": "fail",
                "message": "1 of 3 checks failed & 1 did not finish",
                "tests": [
                    {"name": "a", "status": "pass", "message": null},
                    {"name": "b", "status": "fail", "message": "outcome <wrong>\n\u{1b}[31mred\u{0}"},
                    {"name": "c", "status": "error", "message": "did not finish: \"limit\""},
                ],
            }),
            json!({
                "score": 2, "max_score": 5, "execution_time": 1.23456,
                "tests": [
                    {"name": "a", "tags": ["R1", "I1"], "output": "guards"},
                    {"name": "b", "tags": ["R2"], "output": "outcome"},
                    {"name": "c", "tags": ["R4"], "output": "x"},
                ],
            }),
        )
    }

    #[test]
    fn every_check_is_one_testcase_with_its_outcome() {
        let (e, g) = reports();
        let xml = junit(&e, &g);
        assert!(xml.contains(
            "<testsuites name=\"ratelimit-lab conformance\" tests=\"3\" failures=\"1\" \
             errors=\"1\" time=\"1.235\">"
        ));
        assert!(xml.contains("<testcase name=\"a\" classname=\"ratelimit_lab.R1\"/>"));
        assert!(xml.contains(
            "<failure type=\"failure\" message=\"outcome &lt;wrong&gt;\">outcome &lt;wrong&gt;\n\
             \\u{1b}[31mred\\u{0}</failure>"
        ));
        assert!(
            xml.contains("<error type=\"error\" message=\"did not finish: &quot;limit&quot;\">")
        );
        assert!(xml.contains("<property name=\"score\" value=\"2\"/>"));
        assert!(
            xml.contains("<system-out>1 of 3 checks failed &amp; 1 did not finish</system-out>")
        );
        assert_eq!(xml.matches("<testcase ").count(), 3);
    }

    #[test]
    fn a_grade_without_checks_is_one_build_error() {
        let e = json!({"version": 3, "status": "error", "message": "does not build\nE0609", "tests": []});
        let g = json!({"score": 0, "max_score": 66, "execution_time": 2.0, "tests": []});
        let xml = junit(&e, &g);
        assert!(xml.contains("<testcase name=\"build\" classname=\"ratelimit_lab\">"));
        assert!(xml.contains(
            "<error type=\"error\" message=\"does not build\">does not build\nE0609</error>"
        ));
        assert!(xml.contains("errors=\"1\""));
        assert!(!xml.contains("<system-out>"), "said once: {xml}");
    }

    #[test]
    fn the_message_is_what_went_wrong_not_the_header() {
        let explanation = "c01 (R1, I1): FAILED\n  R1: guards\n\nstep 1: got 9\nmore\n\nhint";
        assert_eq!(first_line(explanation), "step 1: got 9");
        assert_eq!(
            first_line("did not finish: the limit\nstruck"),
            "did not finish: the limit"
        );
    }

    #[test]
    fn attributes_keep_line_breaks_and_cut_long_messages() {
        assert_eq!(attribute("a\nb\t\"c\""), "a&#10;b&#9;&quot;c&quot;");
        let long = "x".repeat(300);
        assert_eq!(
            first_line(&format!("\n  {long}\nmore")).chars().count(),
            201
        );
        assert_eq!(seconds(f64::NAN), "0.000");
        assert_eq!(seconds(12.0), "12.000");
    }
}
