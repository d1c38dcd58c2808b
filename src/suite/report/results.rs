//! Grader output: a design's results as Exercism's `results.json` (version 3) and as
//! Gradescope's `results.json`, checks in suite order, written whole after every check so a
//! run cut short still leaves the results so far; [`write_reports`] adds the JUnit XML and
//! GitHub Classroom forms of the same two.
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use crate::suite::checks::table::CheckInfo;
use crate::suite::checks::table::CHECKS;
use crate::suite::core::backend::Backend;
use crate::suite::diagnose::detectors::trace_allows;
use crate::suite::report::test_code::test_code;
use crate::suite::run::isolation::{CheckResult, Status};

/// The results of one design (or one invocation of the suite), in suite order.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `(test name, result)` in the order they are listed: the test name is the check's name,
    /// prefixed by the module path when several invocations share a report.
    pub results: Vec<(String, CheckResult)>,
    /// The command a failed test's explanation offers to rerun it; `None` for the test
    /// harness's own (`cargo test -- --exact <test name>`, see [`rerun`]).
    pub rerun_command: Option<String>,
    /// The wall time the checks took from the first one's start, when known; the checks of a
    /// `cargo test` run overlap, so the sum of their times overstates it.
    pub wall: Option<Duration>,
}

impl Report {
    /// Points earned.
    pub fn score(&self) -> u32 {
        self.results.iter().map(|(_, r)| r.score()).sum()
    }

    /// Points available.
    pub fn max_score(&self) -> u32 {
        self.results.iter().map(|(_, r)| r.check.points).sum()
    }

    /// Checks passed.
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|(_, r)| r.passed()).count()
    }

    /// Wall time of the checks: [`wall`](Report::wall) when known, else the sum of each
    /// check's time (exact when they ran one after another).
    pub fn elapsed(&self) -> Duration {
        self.wall
            .unwrap_or_else(|| self.results.iter().map(|(_, r)| r.elapsed).sum())
    }

    /// The first check that did not pass.
    pub fn first_failure(&self) -> Option<&CheckResult> {
        self.results.iter().map(|(_, r)| r).find(|r| !r.passed())
    }

    /// The seed mistake the design makes, judged over every failed check, or `None` when the
    /// evidence does not single one out (a wrong name would send a learner to fix code that
    /// is right).
    ///
    /// Each failed sequential check gives at most one piece of evidence, a set of mistakes it
    /// allows:
    ///
    /// - **Replayed traces.** The catalogued designs that reproduce the failing trace of
    ///   *every* check whose trace some design reproduces are kept (a coincidence on one short
    ///   trace does not carry over to the others); their mistakes are allowed.
    /// - **Alike departures.** A check whose trace no design reproduces, but on which designs
    ///   first depart from the specification where and as this design does (and alike on the
    ///   diagnosis battery), allows their mistakes; only the mistake the check saw itself, if
    ///   it saw one.
    /// - **Direct evidence.** A check that saw a mistake itself (an error that changed the
    ///   state, a limiter built without a key bound) and whose trace no design reproduces
    ///   allows only that mistake, whatever else departs alike.
    /// - A check with none of these gives no evidence: an unseen design with a known flaw
    ///   differs from the catalogued one in its details.
    /// - **Detection.** The mistake the diagnosis's detectors found in the design itself
    ///   ([`Failure::detected`](crate::suite::Failure::detected): probes of a
    ///   mistake's defining symptom, isolated by controls), when exactly one was found.
    ///
    /// A mistake is named when it is the only one every piece of evidence allows, and some
    /// piece allows it alone (two checks allowing {A, B} and {A, C} single out nothing: a
    /// design making both B and C fits them too). A detected mistake is named instead when
    /// every piece of evidence allows it, alike departures aside (the detection, direct
    /// evidence, outweighs them as a check's own sight does; a trace reproduced by a design
    /// making another cutover grant allows it too, as `trace_allows` in the detectors says); otherwise
    /// nothing is named. Only when no sequential check gives
    /// evidence do the concurrency checks speak: the race named by the most of them, the
    /// earliest in suite order on a tie.
    pub fn diagnosis(&self) -> Option<crate::Mistake> {
        self.diagnosis_without(&[])
    }

    /// [`diagnosis`](Self::diagnosis) as if the catalogued designs named in `left_out` were
    /// not in the catalog: how the diagnosis does on a design the catalog does not hold
    /// (grading a catalogued design with its own entry left out).
    pub fn diagnosis_without(&self, left_out: &[&str]) -> Option<crate::Mistake> {
        use crate::suite::checks::table::Kind;
        use crate::suite::core::failure::Lookalike;
        use crate::Mistake;
        let mut designs: Option<Vec<&Lookalike>> = None;
        let mut evidence: Vec<Vec<Mistake>> = Vec::new();
        // The evidence beside alike departures alone: what a detection must agree with.
        let mut firm: Vec<Vec<Mistake>> = Vec::new();
        let mut races: Vec<Mistake> = Vec::new();
        // Whether some failed check with a replayable trace has no evidence at all: then
        // evidence of the mistake's level alone (alike departures) explains only part of what
        // is wrong, and names nothing.
        let mut unexplained = false;
        let mut alike_only = true;
        // The mistake the detectors found in the design itself, from any failed sequential
        // check that was diagnosed (it is the design's, whichever check ran them).
        let mut detected: Option<Mistake> = None;
        for (_, r) in &self.results {
            let Status::Failed(f) = &r.status else {
                continue;
            };
            detected = detected.or(f.detected);
            if f.panicked {
                continue;
            }
            let like: Vec<&Lookalike> = f
                .resembles
                .iter()
                .filter(|l| !left_out.contains(&l.design.as_str()))
                .collect();
            let kin: Vec<&Lookalike> = f
                .kin
                .iter()
                .filter(|l| !left_out.contains(&l.design.as_str()))
                .collect();
            if r.check.kind == Kind::Concurrency && f.replay.is_none() {
                races.extend(f.mistake);
            } else if !like.is_empty() {
                alike_only = false;
                designs = Some(match designs {
                    None => like,
                    Some(d) => d.into_iter().filter(|l| like.contains(l)).collect(),
                });
            } else if !kin.is_empty() {
                let mut allows: Vec<Mistake> = match f.seen {
                    Some(m) => vec![m],
                    None => kin.iter().map(|l| l.mistake).collect(),
                };
                allows.sort_by_key(|m| Mistake::ALL.iter().position(|n| n == m));
                allows.dedup();
                if f.seen.is_some() {
                    firm.push(allows.clone());
                }
                evidence.push(allows);
            } else if let Some(m) = f.seen.or_else(|| {
                // Undiagnosed (no replay, or no answer in time): the mistake is the check's own.
                f.mistake
                    .filter(|_| f.resembles.is_empty() && f.kin.is_empty())
            }) {
                alike_only = false;
                firm.push(vec![m]);
                evidence.push(vec![m]);
            } else if f.replay.is_some() {
                unexplained = true;
            }
        }
        if let Some(d) = &designs {
            let mut allows: Vec<Mistake> = d.iter().map(|l| l.mistake).collect();
            allows.sort_by_key(|m| Mistake::ALL.iter().position(|n| n == m));
            allows.dedup();
            firm.push(allows.clone());
            evidence.push(allows);
        }
        // A detected mistake stands where every piece of evidence but alike departures allows
        // it (a failed check with none allows anything); otherwise the evidence contradicts
        // the detection, and nothing is named.
        if let Some(d) = detected {
            return firm
                .iter()
                .all(|e| e.iter().any(|m| trace_allows(*m, d)))
                .then_some(d);
        }
        if evidence.is_empty() {
            return races.iter().copied().max_by_key(|m| {
                let votes = races.iter().filter(|n| *n == m).count();
                let earliest = races.iter().position(|n| n == m).unwrap_or(usize::MAX);
                (votes, std::cmp::Reverse(earliest))
            });
        }
        Self::singled_out(&evidence, alike_only && unexplained)
    }

    /// The mistake every piece of `evidence` allows and some piece allows alone; `None` too
    /// when `partial` (alike departures alone, while a failed check stays unexplained).
    fn singled_out(evidence: &[Vec<crate::Mistake>], partial: bool) -> Option<crate::Mistake> {
        if partial {
            return None;
        }
        let singled_out = evidence.iter().find(|e| e.len() == 1)?.first().copied()?;
        evidence
            .iter()
            .all(|e| e.contains(&singled_out))
            .then_some(singled_out)
    }

    /// Every result for a person, in suite order: a line for each check that passed, the full
    /// explanation of each that did not.
    pub fn explanations(&self) -> String {
        let mut out = String::new();
        for (name, r) in &self.results {
            if r.passed() {
                out.push_str(&format!("{name}: passed ({} ms)\n", r.elapsed.as_millis()));
            } else {
                out.push('\n');
                out.push_str(&r.explain(&self.rerun_for(name)));
                out.push('\n');
            }
        }
        out
    }

    /// The command that reruns the test called `test_name`.
    pub fn rerun_for(&self, test_name: &str) -> String {
        self.rerun_command
            .clone()
            .unwrap_or_else(|| rerun(test_name))
    }

    /// Exercism's test-runner `results.json`, version 3: `status` is `pass` when every check
    /// passed, `fail` otherwise; each test carries the requirement number as `task_id`.
    pub fn exercism(&self) -> Value {
        let tests: Vec<Value> = self
            .results
            .iter()
            .map(|(name, r)| {
                let (status, message) = match &r.status {
                    Status::Passed => ("pass", Value::Null),
                    Status::Failed(_) => ("fail", Value::String(r.explain(&self.rerun_for(name)))),
                    Status::TimedOut { .. } => {
                        ("error", Value::String(r.explain(&self.rerun_for(name))))
                    }
                };
                let failure = match &r.status {
                    Status::Failed(f) => Some(f),
                    _ => None,
                };
                let code = test_code(&r.check, name, &self.rerun_for(name), failure);
                let mut test = exercism_test(name, &r.check, status, message, code);
                // What a concurrency check's search covered, as the test's output (Exercism
                // shows it beside the test; at most 500 characters).
                if let (Some(c), Some(fields)) = (r.coverage, test.as_object_mut()) {
                    let text: String = c.to_string().chars().take(500).collect();
                    fields.insert("output".to_string(), Value::String(text));
                }
                test
            })
            .collect();
        let all_passed = self.results.iter().all(|(_, r)| r.passed());
        json!({
            "version": 3,
            "status": if all_passed { "pass" } else { "fail" },
            "message": self.summary("the design"),
            "tests": tests,
        })
    }

    /// Gradescope's `results.json`: points per check, tags naming the requirement and
    /// invariant, and the explanation as each failed test's output.
    pub fn gradescope(&self) -> Value {
        let tests: Vec<Value> = self
            .results
            .iter()
            .map(|(name, r)| {
                let output = if r.passed() {
                    match r.coverage {
                        Some(c) => format!("{}\n{c}", r.check.guards),
                        None => r.check.guards.to_string(),
                    }
                } else {
                    r.explain(&self.rerun_for(name))
                };
                gradescope_test(name, &r.check, r.score(), output)
            })
            .collect();
        json!({
            "score": self.score(),
            "max_score": self.max_score(),
            "execution_time": self.elapsed().as_secs_f64(),
            "output": self.summary("the design"),
            "tests": tests,
        })
    }

    /// Writes `results.json` (Exercism), `gradescope.json`, `junit.xml` and
    /// `classroom.json` into `dir` (see [`write_reports`]).
    ///
    /// # Errors
    ///
    /// Any error creating the directory or writing the files.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        write_reports(dir, &self.exercism(), &self.gradescope())
    }
}

/// Writes the reports of one grade into `dir` (created when missing), each replaced
/// atomically (written aside, then renamed): `results.json` (Exercism, `exercism`),
/// `gradescope.json` (Gradescope, `gradescope`), and, derived from those two,
/// `junit.xml` (JUnit XML for CI servers, see [`junit`](crate::suite::report::junit)) and
/// `classroom.json` (GitHub Classroom's autograding result, see
/// [`classroom`](crate::suite::report::classroom)).
///
/// # Errors
///
/// Any error creating the directory or writing the files.
pub fn write_reports(dir: &Path, exercism: &Value, gradescope: &Value) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = |value: &Value| serde_json::to_string_pretty(value).map_err(io::Error::other);
    let files = [
        ("results.json", json(exercism)?),
        ("gradescope.json", json(gradescope)?),
        (
            "junit.xml",
            crate::suite::report::junit::junit(exercism, gradescope),
        ),
        (
            "classroom.json",
            json(&crate::suite::report::classroom::classroom(
                exercism, gradescope,
            ))?,
        ),
    ];
    for (file, text) in files {
        let tmp = dir.join(format!(".{file}.tmp"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, dir.join(file))?;
    }
    Ok(())
}

/// Where the check called `name` stands in the suite, from 0 (`CHECKS.len()` when unknown).
pub(crate) fn suite_position(name: &str) -> usize {
    CHECKS
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(CHECKS.len())
}

/// One test of Exercism's `results.json` for the check `check`, run as the test `name`.
pub(crate) fn exercism_test(
    name: &str,
    check: &CheckInfo,
    status: &str,
    message: Value,
    test_code: String,
) -> Value {
    json!({
        "name": name,
        "test_code": test_code,
        "status": status,
        "message": message,
        "task_id": check.requirement as u8 + 1,
    })
}

/// One test of Gradescope's `results.json` for the check `check`, run as the test `name`:
/// `passed` when it scored its points.
pub(crate) fn gradescope_test(name: &str, check: &CheckInfo, score: u32, output: String) -> Value {
    let mut tags = vec![check.requirement.to_string()];
    tags.extend(check.invariant.map(|i| i.to_string()));
    json!({
        "score": score,
        "max_score": check.points,
        "status": if score == check.points { "passed" } else { "failed" },
        "name": name,
        // Numbered by the check's place in the suite, so that the same check has the same
        // number for every design in one report.
        "number": format!("{}.{}", check.requirement as u8 + 1, suite_position(check.name) + 1),
        "output": output,
        "tags": tags,
        "visibility": "visible",
    })
}

/// The command that reruns one check, named as the test harness names it, in the mode this
/// crate is built in (shuttle and loom as the README's learner steps set them up).
pub fn rerun(test_name: &str) -> String {
    format!("{} -- --exact {test_name}", cargo_in_this_mode("test"))
}

/// `cargo <subcommand>` as this crate's mode needs it, from the current directory and with
/// the target directory this process was built in (see [`Backend::cargo_here`]).
pub fn cargo_in_this_mode(subcommand: &str) -> String {
    Backend::current().cargo_here(subcommand)
}

/// Results of the checks that ran so far in this process (the tests of one test binary),
/// keyed by (invocation's module path, suite position).
static COLLECTED: Mutex<BTreeMap<(String, usize), (String, CheckResult)>> =
    Mutex::new(BTreeMap::new());

/// Adds one test's result to this process's report and, when
/// [`REPORT_DIR`](crate::suite::core::env::REPORT_DIR) is set, rewrites the report files there.
///
/// # Errors
///
/// Writing the files failed.
pub fn collect(module: &str, test_name: String, result: CheckResult) -> io::Result<()> {
    let Some(dir) = std::env::var_os(crate::suite::core::env::REPORT_DIR) else {
        return Ok(());
    };
    let position = CHECKS
        .iter()
        .position(|c| c.name == result.check.name)
        .unwrap_or(usize::MAX);
    static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let started = *STARTED.get_or_init(|| {
        let now = std::time::Instant::now();
        now.checked_sub(result.elapsed).unwrap_or(now)
    });
    let mut all = COLLECTED.lock().unwrap_or_else(|p| p.into_inner());
    all.insert((module.to_string(), position), (test_name, result));
    let report = Report {
        results: all.values().cloned().collect(),
        rerun_command: None,
        wall: Some(started.elapsed()),
    };
    // Written while the lock is held, so concurrent tests never interleave their files.
    report.write_to(Path::new(&dir))
}
