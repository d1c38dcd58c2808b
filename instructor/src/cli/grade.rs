//! `grade`: the whole conformance suite run on catalogued designs, one report card row per
//! design, each outcome held against what the catalog says the suite must conclude.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::catalog::{self, Design, Role, DESIGNS};
use clap::ValueEnum;
use ratelimit_lab::suite::{env, CheckResult, Mistake, Report, Requirement, Status};
use serde::Serialize;

use super::{fail, print_out, table, this_tool, timings, EXIT_FAILURE, EXIT_USAGE};

/// The wall time one design's full grade may take (the budget on a two-core machine,
/// after compilation). Exceeding it is reported, not failed: the machine may be loaded.
const BUDGET: Duration = Duration::from_secs(20);

/// Arguments of `grade`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Grade only the catalogued design with this name (case-insensitive; repeatable).
    ///
    /// Without it every design in the catalog is graded: the reference, the specification,
    /// the correct alternatives and the deliberately wrong designs. An unknown name is an
    /// error (exit status 2) that lists the valid ones.
    #[arg(long = "design", value_name = "NAME")]
    designs: Vec<String>,

    /// Print the first failure's full explanation under each design that failed a check:
    /// the requirement broken, the minimal trace, the seed mistake it resembles and a hint.
    #[arg(long)]
    explain: bool,

    /// Write each design's graded reports to `DIR/<design>/`: `results.json` (Exercism,
    /// version 3), `gradescope.json` (Gradescope), `junit.xml` (JUnit XML) and
    /// `classroom.json` (GitHub Classroom).
    #[arg(long, value_name = "DIR", env = env::REPORT_DIR)]
    report_dir: Option<PathBuf>,

    /// How to print the report card.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,

    /// Designs graded at the same time (each runs its checks one after another).
    ///
    /// The default is the number of cores. A design's verdict does not depend on it: a
    /// correct design passes however loaded the machine is, and the harness's own searches
    /// are budgeted, not timed. With 1, every design has the whole machine, and the times
    /// shown are each design's own.
    #[arg(long, value_name = "N", default_value_t = default_jobs())]
    jobs: NonZeroUsize,

    /// After the card, a table of how fast each design was graded: the whole grade's wall
    /// time, property cases per second, stress rounds per second (std builds), and for a
    /// design that fails, the time until its first counterexample.
    #[arg(long)]
    timings: bool,
}

/// The number of cores, or 1 when it cannot be known.
fn default_jobs() -> NonZeroUsize {
    thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// Output formats of `grade`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A report card table, then one line per design whose outcome contradicts its role.
    Table,
    /// One JSON object: every design's row, its verdict, and the timings.
    Json,
}

/// One design's grade and how long it took.
struct Graded {
    design: &'static Design,
    report: Report,
    wall: Duration,
}

/// Runs `grade`: exit status `0` when every graded design behaves as catalogued, `1` when one
/// does not (or a report could not be written), `2` for an unknown `--design`.
pub fn run(args: &Args) -> ExitCode {
    let selected = match select(&args.designs) {
        Ok(selected) => selected,
        Err(message) => return fail(EXIT_USAGE, &message),
    };
    let started = Instant::now();
    let graded = grade_all(&selected, args.jobs.get());
    let total = started.elapsed();

    let mut write_errors = Vec::new();
    if let Some(dir) = &args.report_dir {
        for g in &graded {
            let target = dir.join(g.design.name);
            if let Err(e) = g.report.write_to(&target) {
                write_errors.push(format!("cannot write {}: {e}", target.display()));
            }
        }
    }

    let printed = match args.format {
        Format::Table => print_out(&card(&graded, total, args)),
        Format::Json => json_card(&graded, total, args).and_then(|text| print_out(&text)),
    };
    if let Err(e) = printed {
        return fail(
            EXIT_FAILURE,
            &format!("cannot write to standard output: {e}"),
        );
    }
    if !write_errors.is_empty() {
        return fail(EXIT_FAILURE, &write_errors.join("\n"));
    }
    if graded
        .iter()
        .any(|g| g.design.contradiction(&g.report).is_some())
    {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

/// The designs named on the command line, in the order given and without repeats, or the
/// whole catalog when none is named.
///
/// # Errors
///
/// A message listing the valid names when one name is not in the catalog.
fn select(names: &[String]) -> Result<Vec<&'static Design>, String> {
    if names.is_empty() {
        return Ok(DESIGNS.iter().collect());
    }
    let mut selected: Vec<&'static Design> = Vec::new();
    for name in names {
        let Some(design) = catalog::find(name) else {
            let known: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
            return Err(format!(
                "no catalogued design is called {name:?}; the designs are:\n  {}",
                known.join("\n  ")
            ));
        };
        if !selected.iter().any(|d| d.name == design.name) {
            selected.push(design);
        }
    }
    Ok(selected)
}

/// Grades `designs` with up to `jobs` designs at a time and returns them in the given order.
///
/// Each design is announced on standard error as it finishes ("graded X (3 of 64) in 1.2 s"),
/// also when standard error is not a terminal: a piped run shows it is alive.
fn grade_all(designs: &[&'static Design], jobs: usize) -> Vec<Graded> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut done: Vec<(usize, Graded)> = Vec::with_capacity(designs.len());
    thread::scope(|scope| {
        for _ in 0..jobs.min(designs.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&design) = designs.get(i) else {
                    break;
                };
                let started = Instant::now();
                let mut report = design.grade();
                report.rerun_command = Some(regrade(design));
                let graded = Graded {
                    design,
                    report,
                    wall: started.elapsed(),
                };
                if tx.send((i, graded)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Progress as each design is graded, while the others still run.
        for (i, g) in rx {
            eprintln!(
                "graded {} ({} of {}) in {:.1} s",
                g.design.name,
                done.len() + 1,
                designs.len(),
                g.wall.as_secs_f64()
            );
            done.push((i, g));
        }
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, g)| g).collect()
}

/// What the catalog says the suite must conclude: `passes`, or `fails R2` for a wrong design
/// (its catalogued mistake is the design's own name).
fn expected_label(role: Role) -> String {
    match role {
        Role::Reference | Role::Specification | Role::Correct => "passes".to_owned(),
        Role::Wrong { breaks, .. } => format!("fails {breaks}"),
    }
}

/// What the suite concluded, in the words of [`expected_label`]: `passes`, or `fails R2`
/// for the requirement of the first failed check in suite order.
fn outcome_label(report: &Report) -> String {
    match report.first_failure() {
        Some(r) => format!("fails {}", r.requirement()),
        None => "passes".to_owned(),
    }
}

/// The lines under the table saying what its columns mean, wrapped at 100 columns.
fn legend(graded: &[Graded]) -> String {
    let max = graded.first().map_or(0, |g| g.report.max_score());
    let checks = graded.first().map_or(0, |g| g.report.results.len());
    let text = format!(
        "expected: what the catalog says of the design. TokenBucket is the reference and \
         ModelLimiter the specification; correct alternatives pass; a catalogued wrong design \
         fails the requirement it breaks. outcome: passes, or fails the requirement its first \
         failure in suite order breaks (the step where it first differs from the specification). score: points earned; each of \
         the {checks} checks is worth 1 to 4 points, {max} in all, earned only when it passes. \
         first failure: the first failed check in suite order. mistake named: the seed mistake \
         the evidence of every failed check singles out (- when none does)."
    );
    format!("\n{}", table::wrapped(&text, 100, ""))
}

/// The command that regrades one design with every explanation shown.
fn regrade(design: &Design) -> String {
    this_tool(&format!("grade --design {} --explain", design.name))
}

/// The first failure's full explanation, when there is one.
fn explanation(g: &Graded) -> Option<String> {
    g.report
        .first_failure()
        .map(|r: &CheckResult| r.explain(&g.report.rerun_for(r.check.name)))
}

/// The slowest design and its wall time.
fn slowest(graded: &[Graded]) -> Option<&Graded> {
    graded.iter().max_by_key(|g| g.wall)
}

/// The report card as text: the table (two-space columns, at most 120 wide), a legend, the
/// explanations asked for, the contradictions, the total time, then the timings table when
/// asked for.
fn card(graded: &[Graded], total: Duration, args: &Args) -> String {
    let rows: Vec<Vec<String>> = graded
        .iter()
        .map(|g| {
            let r = &g.report;
            vec![
                g.design.name.to_owned(),
                expected_label(g.design.role),
                outcome_label(r),
                format!("{}/{}", r.score(), r.max_score()),
                r.first_failure()
                    .map_or_else(|| "-".to_owned(), |f| f.check.name.to_owned()),
                r.diagnosis()
                    .map_or_else(|| "-".to_owned(), |m| format!("{m:?}")),
            ]
        })
        .collect();
    let mut out = table::render_spaced(
        &[
            "design",
            "expected",
            "outcome",
            "score",
            "first failure",
            "mistake named",
        ],
        &rows,
    );
    out.push_str(&legend(graded));
    if args.explain {
        for g in graded {
            if let Some(text) = explanation(g) {
                out.push_str(&format!(
                    "\n== {} ==\n{}\n{text}",
                    g.design.name,
                    g.report.diagnosis_text()
                ));
            }
        }
    }
    out.push('\n');
    let verdicts: Vec<String> = graded
        .iter()
        .filter_map(|g| g.design.contradiction(&g.report))
        .collect();
    if verdicts.is_empty() {
        out.push_str(&format!(
            "{} designs graded: each behaves as the catalog says\n",
            graded.len()
        ));
    } else {
        for v in &verdicts {
            out.push_str(&format!("CONTRADICTS THE CATALOG: {v}\n"));
        }
        out.push_str(&format!(
            "{} of {} designs contradict the catalog\n",
            verdicts.len(),
            graded.len()
        ));
    }
    out.push_str(&format!("total wall time: {:.1} s", total.as_secs_f64()));
    if let Some(g) = slowest(graded) {
        out.push_str(&format!(
            "; slowest design: {} at {:.1} s ({} the {} s budget per design)",
            g.design.name,
            g.wall.as_secs_f64(),
            if g.wall <= BUDGET { "within" } else { "OVER" },
            BUDGET.as_secs()
        ));
    }
    out.push('\n');
    if let Some(dir) = &args.report_dir {
        out.push_str(&format!(
            "reports written to {}/<design>/ (results.json, gradescope.json, junit.xml, classroom.json)\n",
            dir.display()
        ));
    }
    if args.timings {
        let rows: Vec<(&str, timings::Timings)> = graded
            .iter()
            .map(|g| (g.design.name, timings::of(&g.report, g.wall)))
            .collect();
        out.push_str("\ntimings (each check's own wall time, checks one after another):\n");
        out.push_str(&timings::render(&rows));
    }
    out
}

/// One design in `--format json`.
#[derive(Serialize)]
struct JsonDesign {
    design: &'static str,
    role: &'static str,
    expected_requirement: Option<Requirement>,
    expected_mistake: Option<Mistake>,
    checks: usize,
    passed: usize,
    score: u32,
    max_score: u32,
    first_failure: Option<JsonFailure>,
    diagnosis: Option<Mistake>,
    wall_ms: u128,
    verdict: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    report_dir: Option<PathBuf>,
}

/// A design's first failed check in `--format json`.
#[derive(Serialize)]
struct JsonFailure {
    check: &'static str,
    requirement: Requirement,
    status: &'static str,
    summary: Option<String>,
}

/// The whole card in `--format json`.
#[derive(Serialize)]
struct JsonCard {
    designs: Vec<JsonDesign>,
    contradictions: usize,
    total_ms: u128,
    slowest: Option<&'static str>,
    max_ms: u128,
    budget_ms: u128,
}

/// The report card as one JSON object.
///
/// # Errors
///
/// The card could not be encoded.
fn json_card(graded: &[Graded], total: Duration, args: &Args) -> Result<String, std::io::Error> {
    let designs: Vec<JsonDesign> = graded
        .iter()
        .map(|g| {
            let (role, expected_requirement, expected_mistake) = match g.design.role {
                Role::Reference => ("reference", None, None),
                Role::Specification => ("specification", None, None),
                Role::Correct => ("correct", None, None),
                Role::Wrong { breaks, mistake } => ("wrong", Some(breaks), Some(mistake)),
            };
            let r = &g.report;
            JsonDesign {
                design: g.design.name,
                role,
                expected_requirement,
                expected_mistake,
                checks: r.results.len(),
                passed: r.passed(),
                score: r.score(),
                max_score: r.max_score(),
                first_failure: r.first_failure().map(|f| JsonFailure {
                    check: f.check.name,
                    requirement: f.requirement(),
                    status: match f.status {
                        Status::Passed => "passed",
                        Status::Failed(_) => "failed",
                        Status::TimedOut { .. } => "timed_out",
                    },
                    summary: match &f.status {
                        Status::Failed(failure) => Some(failure.summary.clone()),
                        _ => None,
                    },
                }),
                diagnosis: r.diagnosis(),
                wall_ms: g.wall.as_millis(),
                verdict: g.design.contradiction(r),
                explanation: if args.explain { explanation(g) } else { None },
                report_dir: args
                    .report_dir
                    .as_deref()
                    .map(|dir: &Path| dir.join(g.design.name)),
            }
        })
        .collect();
    let card = JsonCard {
        contradictions: designs.iter().filter(|d| d.verdict.is_some()).count(),
        designs,
        total_ms: total.as_millis(),
        slowest: slowest(graded).map(|g| g.design.name),
        max_ms: slowest(graded).map_or(0, |g| g.wall.as_millis()),
        budget_ms: BUDGET.as_millis(),
    };
    let mut text = serde_json::to_string_pretty(&card).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_designs_are_refused_with_the_valid_names() {
        let message = select(&["nope".to_owned()]).err().unwrap_or_default();
        assert!(message.contains("\"nope\""), "{message}");
        assert!(message.contains("TokenBucket"), "{message}");
        assert!(message.contains("SplitReadWrite"), "{message}");
    }

    #[test]
    fn names_keep_their_order_and_lose_repeats() {
        let names = ["splitreadwrite", "TokenBucket", "SplitReadWrite"].map(str::to_owned);
        let picked: Vec<&str> = select(&names)
            .unwrap_or_default()
            .iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(picked, ["SplitReadWrite", "TokenBucket"]);
        assert_eq!(select(&[]).map(|d| d.len()), Ok(DESIGNS.len()));
    }

    #[test]
    fn roles_name_what_is_expected() {
        assert_eq!(expected_label(Role::Correct), "passes");
        assert_eq!(expected_label(Role::Reference), "passes");
        assert_eq!(
            expected_label(Role::Wrong {
                breaks: Requirement::R2,
                mistake: Mistake::DoubleSpend
            }),
            "fails R2"
        );
    }
}
