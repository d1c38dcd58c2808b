//! Proof that the suite's verdicts mean something: every catalogued design is graded, and the
//! suite must conclude what the catalog says about it.
//!
//! - One trial per design, named after it: a correct design (the reference, the
//!   specification, each alternative) passes every check; a wrong design fails, its first
//!   failure guards the requirement it breaks, and the report's diagnosis is the seed mistake
//!   it makes. A failing trial prints the design's first failure explanation.
//! - `every_check_fails_on_some_wrong_design`: the design × check matrix. Every sequential
//!   check fails on at least one wrong design breaking its requirement (a check nothing
//!   catches guards nothing), and no check fails a correct design. The matrix is printed
//!   either way.
//!
//! Races are luck on real threads: a design whose mistake shows only in interleavings
//! ([`Mistake::is_race`](ratelimit_lab::Mistake::is_race)) is required here to pass every
//! sequential check, and whether real threads caught it this run is printed, not asserted;
//! likewise the concurrency checks' catches. Built with shuttle or loom (see the README),
//! the same trials hold races and concurrency checks to the full rule, and the schedules
//! are the controlled scheduler's, so every run catches the same races.
//!
//! Each design is graded once, on first use, and the report is shared by every trial that
//! needs it, so the trials together grade the catalog exactly once. Trials run one at a
//! time unless `--test-threads` says otherwise: the concurrency checks start more threads
//! than there are cores, and two designs graded side by side take several times longer
//! than one after the other.
//! Run one design with `cargo test --test catalog -- --exact SplitReadWrite`.

use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use ratelimit_lab::suite::backend::Backend;
use ratelimit_lab::suite::{Kind, Report, Status, CHECKS};
use ratelimit_lab_instructor::catalog::{Design, Role, DESIGNS};

/// A design's report and the wall time its grade took.
struct Graded {
    report: Report,
    wall: Duration,
}

/// One lazily graded report per design, in catalog order.
static GRADED: OnceLock<Vec<OnceLock<Graded>>> = OnceLock::new();

/// The graded report of `DESIGNS[i]`, grading it on first use (a concurrent caller waits).
fn graded(i: usize) -> &'static Graded {
    let slots = GRADED.get_or_init(|| DESIGNS.iter().map(|_| OnceLock::new()).collect());
    slots[i].get_or_init(|| {
        let started = Instant::now();
        let report = DESIGNS[i].grade();
        Graded {
            report,
            wall: started.elapsed(),
        }
    })
}

/// The command that reruns one design's trial.
fn rerun(design: &Design) -> String {
    format!("cargo test --test catalog -- --exact {}", design.name)
}

/// The first failure's explanation, or a note that every check passed.
fn first_failure_text(design: &Design, report: &Report) -> String {
    report.first_failure().map_or_else(
        || "every check passed".to_owned(),
        |r| r.explain(&rerun(design)),
    )
}

/// The trial for `DESIGNS[i]`: the suite concludes what the catalog says
/// ([`Design::contradiction`]); for a race, whether real threads caught it is printed.
fn design_trial(i: usize) -> Result<(), Failed> {
    let design = &DESIGNS[i];
    let g = graded(i);
    let report = &g.report;
    if let Role::Wrong { mistake, .. } = design.role {
        if mistake.is_race() && !Backend::current().is_controlled() {
            println!(
                "{}: {}",
                design.name,
                report.first_failure().map_or_else(
                    || "not caught on real threads this run".to_owned(),
                    |r| format!("caught on real threads this run by {}", r.check.name)
                )
            );
        }
    }
    // What a person reads fits in 120 columns: every failure's explanation and the card's
    // summary (commands, which must stay one line to be copied, aside).
    let mut texts: Vec<String> = report
        .results
        .iter()
        .filter(|(_, r)| !r.passed())
        .map(|(_, r)| r.explain(&rerun(design)))
        .collect();
    texts.push(report.summary(design.name));
    for text in &texts {
        if let Some(line) = text
            .lines()
            // A command, or a replay variable naming a file under the target directory, is
            // copied whole, not read: its length is the path's.
            .find(|l| {
                l.chars().count() > 120
                    && !l.contains("cargo ")
                    && !l.trim_start().starts_with("RATELIMIT_LAB_REPLAY=")
            })
        {
            return Err(format!(
                "{}: a line of {} columns in what a person reads:\n{line}",
                design.name,
                line.chars().count()
            )
            .into());
        }
    }
    match design.contradiction(report) {
        None => Ok(()),
        Some(why) => Err(format!(
            "{why} ({} of {} checks passed in {:.1} s); first failure:\n{}",
            report.passed(),
            report.results.len(),
            g.wall.as_secs_f64(),
            first_failure_text(design, report)
        )
        .into()),
    }
}

/// Every check fails on at least one wrong design, and on at least one that breaks the
/// requirement the check guards, and on no correct design; prints the matrix.
fn coverage_trial() -> Result<(), Failed> {
    let all: Vec<&Graded> = (0..DESIGNS.len()).map(graded).collect();
    let mut problems = Vec::new();
    for (d, g) in DESIGNS.iter().zip(&all) {
        let in_order = g.report.results.len() == CHECKS.len()
            && g.report
                .results
                .iter()
                .zip(CHECKS)
                .all(|((_, r), c)| r.check.name == c.name);
        if !in_order {
            problems.push(format!("{}'s report is not in suite order", d.name));
        }
    }
    let wrong_total = DESIGNS.iter().filter(|d| !d.should_pass()).count();
    let mut text = format!(
        "\ncoverage: the catalogued wrong designs ({wrong_total}) that fail each check\n\
         (same req: how many of them break the requirement the check guards; own mistake: \
         whether one of them makes the mistake the check names)\n\n"
    );
    let width = CHECKS.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let _ = writeln!(
        text,
        "  {:width$} | req | fail | same req | own mistake | wrong designs failing it",
        "check"
    );
    let (mut uncaught, mut other_requirement, mut false_alarms, mut no_own_mistake) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (position, check) in CHECKS.iter().enumerate() {
        let failing: Vec<(&Design, bool)> = DESIGNS
            .iter()
            .zip(&all)
            .filter_map(|(d, g)| {
                let (_, r) = g.report.results.get(position)?;
                (r.check.name == check.name && !r.passed()).then_some((d, d.should_pass()))
            })
            .collect();
        let wrong: Vec<&Design> = failing
            .iter()
            .filter(|(_, c)| !c)
            .map(|(d, _)| *d)
            .collect();
        let correct: Vec<&str> = failing
            .iter()
            .filter(|(_, c)| *c)
            .map(|(d, _)| d.name)
            .collect();
        let same_requirement = wrong
            .iter()
            .filter(|d| matches!(d.role, Role::Wrong { breaks, .. } if breaks == check.requirement))
            .count();
        let own_mistake = check.mistake.map(|m| {
            wrong
                .iter()
                .any(|d| matches!(d.role, Role::Wrong { mistake, .. } if mistake == m))
        });
        let names: Vec<&str> = wrong.iter().map(|d| d.name).collect();
        let _ = writeln!(
            text,
            "  {:width$} | {:3} | {:>4} | {:>8} | {:11} | {}",
            check.name,
            check.requirement.to_string(),
            wrong.len(),
            same_requirement,
            match own_mistake {
                None => "-",
                Some(true) => "yes",
                Some(false) => "no",
            },
            names.join(", ")
        );
        // A concurrency check's catches on real threads come by chance (a race shows in some
        // runs only), so nothing is required of them here: the matrix shows this run's.
        // What always holds is required of every check: no correct design fails it.
        if check.kind != Kind::Concurrency || Backend::current().is_controlled() {
            if wrong.is_empty() {
                uncaught.push(check.name);
            } else if same_requirement == 0 {
                other_requirement.push(check.name);
            }
        }
        if own_mistake == Some(false) {
            no_own_mistake.push(check.name);
        }
        if !correct.is_empty() {
            false_alarms.push(format!("{} (fails {})", check.name, correct.join(", ")));
        }
    }
    if !no_own_mistake.is_empty() {
        let _ = writeln!(
            text,
            "\nnote: no failing wrong design makes the mistake these checks name: {}",
            no_own_mistake.join(", ")
        );
    }
    let slowest = DESIGNS
        .iter()
        .zip(&all)
        .max_by_key(|(_, g)| g.wall)
        .map(|(d, g)| format!("{} at {:.1} s", d.name, g.wall.as_secs_f64()))
        .unwrap_or_default();
    let _ = writeln!(text, "slowest grade: {slowest}");
    print!("{text}");
    if !uncaught.is_empty() {
        problems.push(format!(
            "no catalogued wrong design fails {}: add one that breaks what each guards",
            uncaught.join(", ")
        ));
    }
    if !other_requirement.is_empty() {
        problems.push(format!(
            "only designs breaking another requirement fail {}: add one that breaks what each \
             guards",
            other_requirement.join(", ")
        ));
    }
    if !false_alarms.is_empty() {
        problems.push(format!(
            "checks that fail a correct design: {}",
            false_alarms.join(", ")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Each failed check's evidence, the design itself left out: `check: designs reproducing it`
/// (`-` for none), then the mistakes of the designs departing alike, if any.
fn evidence(report: &Report, left_out: &str) -> String {
    let mut parts = Vec::new();
    for (name, r) in &report.results {
        if let Status::Failed(f) = &r.status {
            let like: Vec<String> = f
                .resembles
                .iter()
                .filter(|l| l.design != left_out)
                .map(|l| l.design.clone())
                .collect();
            let kin: Vec<String> = f
                .kin
                .iter()
                .filter(|l| l.design != left_out)
                .map(|l| format!("{:?}", l.mistake))
                .collect();
            let mut kin_mistakes = kin.clone();
            kin_mistakes.dedup();
            parts.push(format!(
                "{name}: {}{}",
                if like.is_empty() {
                    "-".to_owned()
                } else {
                    like.join("/")
                },
                if kin_mistakes.is_empty() {
                    String::new()
                } else {
                    format!(" (alike: {})", kin_mistakes.join("/"))
                }
            ));
        }
    }
    parts.join(", ")
}

/// Right or silent, on designs the catalog does not hold: each wrong design is diagnosed with
/// its own entry left out of the catalog, as an unseen design with the same flaw would be.
/// The diagnosis must then name its mistake (another design makes it too) or none; never
/// another mistake. Prints how many are named right and how many are left unnamed.
fn leave_one_out_trial() -> Result<(), Failed> {
    let mut text =
        String::from("\nleave-one-out diagnosis (each wrong design graded as if uncatalogued):\n");
    let (mut right, mut silent, mut wrong) = (0, 0, Vec::new());
    for (i, design) in DESIGNS.iter().enumerate() {
        let Role::Wrong { mistake, .. } = design.role else {
            continue;
        };
        if mistake.is_race() && !Backend::current().is_controlled() {
            continue; // caught by chance on real threads: no steady evidence to judge
        }
        let g = graded(i);
        match g.report.diagnosis_without(&[design.name]) {
            Some(m) if m == mistake => right += 1,
            None => {
                silent += 1;
                let _ = writeln!(
                    text,
                    "  {}: no mistake named ({mistake:?}); {}",
                    design.name,
                    evidence(&g.report, design.name)
                );
            }
            Some(m) => {
                wrong.push(format!(
                    "{} ({mistake:?}) was named {m:?}; {}",
                    design.name,
                    evidence(&g.report, design.name)
                ));
            }
        }
    }
    let _ = writeln!(
        text,
        "  named right: {right}, no name: {silent}, named wrong: {}",
        wrong.len()
    );
    print!("{text}");
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "a wrong name for an uncatalogued design: {}",
            wrong.join("; ")
        )
        .into())
    }
}

fn main() {
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    let mut trials: Vec<Trial> = (0..DESIGNS.len())
        .map(|i| Trial::test(DESIGNS[i].name, move || design_trial(i)))
        .collect();
    // Listed last, so the per-design trials have graded most of the catalog by the time it
    // runs; it waits for (or grades) the rest.
    trials.push(Trial::test(
        "every_check_fails_on_some_wrong_design",
        coverage_trial,
    ));
    trials.push(Trial::test(
        "diagnosis_is_right_or_silent_without_the_design",
        leave_one_out_trial,
    ));
    libtest_mimic::run(&args, trials).exit();
}
