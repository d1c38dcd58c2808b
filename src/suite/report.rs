//! Grader output: a design's results as Exercism's `results.json` (version 3) and as
//! Gradescope's `results.json`, checks in suite order, written whole after every check so a
//! run cut short still leaves the results so far.
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use super::diagnosis::Lookalike;
use super::runner::{CheckResult, Status};
use super::CHECKS;

/// The results of one design (or one invocation of the suite), in suite order.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `(test name, result)` in the order they are listed: the test name is the check's name,
    /// prefixed by the module path when several invocations share a report.
    pub results: Vec<(String, CheckResult)>,
    /// The command a failed test's explanation offers to rerun it; `None` for the test
    /// harness's own (`cargo test -- --exact <test name>`, see [`rerun`]).
    pub rerun_command: Option<String>,
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

    /// Total wall time of the checks.
    pub fn elapsed(&self) -> Duration {
        self.results.iter().map(|(_, r)| r.elapsed).sum()
    }

    /// The first check that did not pass.
    pub fn first_failure(&self) -> Option<&CheckResult> {
        self.results.iter().map(|(_, r)| r).find(|r| !r.passed())
    }

    /// The seed mistake the design most likely makes, judged over every failed check: the
    /// catalogued wrong designs that reproduce *all* failing traces (where a trace can be
    /// replayed) are intersected, and the most relevant survivor to the first failure names
    /// the mistake; without a survivor, the first failure's own diagnosis stands.
    pub fn diagnosis(&self) -> Option<super::Mistake> {
        let first = self.first_failure()?;
        let mut common: Option<Vec<&Lookalike>> = None;
        for (_, r) in &self.results {
            if let Status::Failed(f) = &r.status {
                if f.replay.is_some() {
                    let names: Vec<&Lookalike> = f.resembles.iter().collect();
                    common = Some(match common {
                        None => names,
                        Some(c) => c.into_iter().filter(|n| names.contains(n)).collect(),
                    });
                }
            }
        }
        let ranked = match &first.status {
            Status::Failed(f) => f.resembles.iter().collect(),
            _ => Vec::new(),
        };
        let survivor = common
            .unwrap_or_default()
            .into_iter()
            .min_by_key(|n| ranked.iter().position(|r| r == n).unwrap_or(usize::MAX));
        match survivor {
            Some(l) => Some(l.mistake),
            None => first.mistake(),
        }
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
                json!({
                    "name": name,
                    "test_code": format!("{}: {}", r.check.requirement, r.check.guards),
                    "status": status,
                    "message": message,
                    "task_id": r.check.requirement as u8 + 1,
                })
            })
            .collect();
        let all_passed = self.results.iter().all(|(_, r)| r.passed());
        json!({
            "version": 3,
            "status": if all_passed { "pass" } else { "fail" },
            "message": Value::Null,
            "tests": tests,
        })
    }

    /// Gradescope's `results.json`: points per check, tags naming the requirement and
    /// invariant, and the explanation as each failed test's output.
    pub fn gradescope(&self) -> Value {
        let tests: Vec<Value> = self
            .results
            .iter()
            .enumerate()
            .map(|(i, (name, r))| {
                let mut tags = vec![r.check.requirement.to_string()];
                tags.extend(r.check.invariant.map(|i| i.to_string()));
                json!({
                    "score": r.score(),
                    "max_score": r.check.points,
                    "status": if r.passed() { "passed" } else { "failed" },
                    "name": name,
                    "number": format!("{}.{}", r.check.requirement as u8 + 1, i + 1),
                    "output": if r.passed() { r.check.guards.to_string() } else { r.explain(&self.rerun_for(name)) },
                    "tags": tags,
                    "visibility": "visible",
                })
            })
            .collect();
        json!({
            "score": self.score(),
            "max_score": self.max_score(),
            "execution_time": self.elapsed().as_secs_f64(),
            "output": format!("{} of {} checks passed, {} of {} points", self.passed(), self.results.len(), self.score(), self.max_score()),
            "tests": tests,
        })
    }

    /// Writes `results.json` (Exercism) and `gradescope.json` into `dir`, each replaced
    /// atomically (written aside, then renamed).
    ///
    /// # Errors
    ///
    /// Any error creating the directory or writing the files.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (file, value) in [
            ("results.json", self.exercism()),
            ("gradescope.json", self.gradescope()),
        ] {
            let text = serde_json::to_string_pretty(&value).map_err(io::Error::other)?;
            let tmp = dir.join(format!(".{file}.tmp"));
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, dir.join(file))?;
        }
        Ok(())
    }
}

/// The command that reruns one check, named as the test harness names it, in the mode this
/// crate is built in (shuttle and loom as the README's learner steps set them up).
pub fn rerun(test_name: &str) -> String {
    format!("{} -- --exact {test_name}", cargo_in_this_mode("test"))
}

/// `cargo <subcommand>` with what the mode this crate is built in needs: nothing for std;
/// `--release --features shuttle` for shuttle; the loom cfg and its own target directory for
/// loom.
pub fn cargo_in_this_mode(subcommand: &str) -> String {
    match super::schedule::Backend::current() {
        super::schedule::Backend::Std => format!("cargo {subcommand}"),
        super::schedule::Backend::Shuttle => {
            format!(
                "CARGO_TARGET_DIR=target-shuttle cargo {subcommand} --release --features shuttle"
            )
        }
        super::schedule::Backend::Loom => format!(
            "RUSTFLAGS=\"--cfg loom\" CARGO_TARGET_DIR=target-loom cargo {subcommand} --release"
        ),
    }
}

/// Results of the checks that ran so far in this process (the tests of one test binary),
/// keyed by (invocation's module path, suite position).
static COLLECTED: Mutex<BTreeMap<(String, usize), (String, CheckResult)>> =
    Mutex::new(BTreeMap::new());

/// Adds one test's result to this process's report and, when
/// [`REPORT_DIR`](super::env::REPORT_DIR) is set, rewrites the report files there.
///
/// # Errors
///
/// Writing the files failed.
pub fn collect(module: &str, test_name: String, result: CheckResult) -> io::Result<()> {
    let Some(dir) = std::env::var_os(super::env::REPORT_DIR) else {
        return Ok(());
    };
    let position = CHECKS
        .iter()
        .position(|c| c.name == result.check.name)
        .unwrap_or(usize::MAX);
    let mut all = COLLECTED.lock().unwrap_or_else(|p| p.into_inner());
    all.insert((module.to_string(), position), (test_name, result));
    let report = Report {
        results: all.values().cloned().collect(),
        rerun_command: None,
    };
    // Written while the lock is held, so concurrent tests never interleave their files.
    report.write_to(Path::new(&dir))
}
