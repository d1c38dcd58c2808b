//! `grade --timings`: how fast the harness grades each design, from the times its report
//! records (each check's own wall time; checks run one after another).
//!
//! - *property cases/s*: the cases the passed property checks ran (each runs
//!   [`env::cases`] of them unless it fails) over the time they took;
//! - *rounds/s*: under `std`, the stress rounds the passed concurrency checks ran (as their
//!   coverage counts them) over their time; not shown where none ran: under shuttle and
//!   loom, which explore schedules instead, and for a design the perturbed scenarios reach,
//!   which gets no stress rounds;
//! - *first counterexample*: for a design that fails a check, the time from the start of
//!   its grade until the first failing check (in suite order) had its counterexample.
use std::time::Duration;

use ratelimit_lab::suite::{env, Kind, Report};

use super::table;

/// One design's timings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Timings {
    /// The whole grade, wall time.
    pub wall: Duration,
    /// Property cases per second over the passed property checks.
    pub cases_per_sec: Option<f64>,
    /// Stress rounds per second over the passed concurrency checks (std only).
    pub rounds_per_sec: Option<f64>,
    /// Time until the first failing check finished, for a design that fails one.
    pub first_counterexample: Option<Duration>,
}

/// Work done per unit of time, or `None` when no time was spent on it.
fn rate(work: f64, time: Duration) -> Option<f64> {
    (time > Duration::ZERO && work > 0.0).then(|| work / time.as_secs_f64())
}

/// The timings of one graded `report` that took `wall`.
pub(super) fn of(report: &Report, wall: Duration) -> Timings {
    let passed_time = |kind: Kind| -> (usize, Duration) {
        report
            .results
            .iter()
            .filter(|(_, r)| r.check.kind == kind && r.passed())
            .fold((0, Duration::ZERO), |(n, t), (_, r)| (n + 1, t + r.elapsed))
    };
    let (properties, property_time) = passed_time(Kind::Property);
    let (stress_time, rounds) = report
        .results
        .iter()
        .filter(|(_, r)| r.check.kind == Kind::Concurrency && r.passed())
        .fold((Duration::ZERO, 0u64), |(t, n), (_, r)| {
            (t + r.elapsed, n + r.coverage.map_or(0, |c| c.rounds))
        });
    let mut elapsed = Duration::ZERO;
    let mut first_counterexample = None;
    for (_, r) in &report.results {
        elapsed += r.elapsed;
        if !r.passed() {
            first_counterexample = Some(elapsed);
            break;
        }
    }
    Timings {
        wall,
        cases_per_sec: rate(properties as f64 * f64::from(env::cases()), property_time),
        rounds_per_sec: rate(rounds as f64, stress_time),
        first_counterexample,
    }
}

/// The timings of every design as a table, one row each.
pub(super) fn render(rows: &[(&str, Timings)]) -> String {
    let shown = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, t)| {
            vec![
                (*name).to_owned(),
                format!("{:.2}", t.wall.as_secs_f64()),
                shown(t.cases_per_sec),
                shown(t.rounds_per_sec),
                t.first_counterexample
                    .map_or_else(|| "-".to_owned(), |d| format!("{:.3}", d.as_secs_f64())),
            ]
        })
        .collect();
    table::render(
        &[
            "design",
            "grade (s)",
            "property cases/s",
            "stress rounds/s",
            "first counterexample (s)",
        ],
        &body,
    )
}
