//! The conformance suite: every check a design must pass, what each guards, and how a
//! failure is explained.
//!
//! # Writing it in a learner's crate
//!
//! ```ignore
//! // tests/conformance.rs
//! use my_crate::MyLimiter;
//! ratelimit_lab::conformance_suite!(MyLimiter);
//! ```
//!
//! `cargo test` then runs one test per check in [`CHECKS`], named by what it guards
//! (`seed_…`, `r1_…` … `r4_…`, `i1_…` … `i3_…`). Each check drives the design and the
//! executable specification side by side and fails with the requirement broken, the
//! minimal trace (step | action | expected | got), the seed mistake it most resembles with a
//! hint, and the command that reruns it alone.
//!
//! # What a design gets checked on
//!
//! - **Scenarios**: the seed's worked examples, trace table and change exercise, and each
//!   requirement's edge cases (boundaries, errors and their order, extremes, eviction,
//!   cutover).
//! - **Properties**: quickcheck properties of the arithmetic derived from first principles;
//!   proptest sequences compared with the specification and shrunk to a minimal trace.
//! - **Invariants after every step**: black-box always (key count at most `max_keys` and
//!   equal to the specification's; outcomes equal); white-box when
//!   [`Limiter::snapshot`] returns `Some` (I1 on every stored
//!   bucket, I3, the stored state equivalent to the specification's, an error changes
//!   nothing).
//! - **Concurrency**: small scenarios (the seed's races and generated ones), each history
//!   checked for linearizability: explored under shuttle and loom, run on real threads with
//!   the facade's perturbation under std, followed there by stress rounds (the twenty
//!   contenders, cost accounting, key-bound races, randomized histories).
//!
//! # Tuning
//!
//! Every knob is an environment variable, named in [`env`](mod@env): cases, seed, per-check timeout,
//! concurrency rounds, and the directory for graded reports.
mod arithmetic;
pub mod backend;
mod behaviour;
mod budget;
mod card;
mod check;
pub mod classroom;
mod concurrency;
pub mod counterexample;
mod diagnosis;
pub mod env;
pub mod explore;
mod failure;
pub mod generate;
mod host;
// Only loom builds use it; its tests run in every mode.
#[cfg_attr(not(loom), allow(dead_code))]
mod hosted;
pub mod junit;
mod lesson_fixtures;
pub mod level;
pub mod linearizability;
mod minimal;
mod panics;
mod probe;
mod properties;
mod quiet_panics;
mod race_kind;
mod races;
#[cfg(all(feature = "shuttle", not(loom)))]
mod replay_guard;
mod report;
mod runner;
pub mod running;
pub(crate) mod same_state;
mod scenarios;
pub mod schedule;
pub mod subject;
mod test_code;
pub mod unfinished;
mod watch;

pub use crate::{Invariant, Mistake, Requirement};
pub use budget::Coverage;
pub use check::{find, CheckInfo, Kind, CHECKS};
pub use diagnosis::{resembling, Suspect};
pub use failure::{Failure, Lookalike, Replay, TraceRow};
pub use probe::Probe;
pub use report::{cargo_in_this_mode, collect, rerun, write_reports, Report};
pub use runner::{run_check, run_check_within, CheckResult, Status};
pub use subject::Subject;

use crate::Limiter;

/// Runs only the concurrency checks on `L`, in suite order: under shuttle and loom each
/// explores its scenarios' schedules (a failure comes with a shrunk counterexample, saved for
/// replay); under std each runs stress rounds on real threads. `Report::explanations`
/// prints the result for a person.
///
/// A learner can call it from an example of their own crate, built in the mode to explore:
///
/// ```ignore
/// // examples/explore.rs
/// fn main() {
///     let report = ratelimit_lab::explore_concurrency::<my_crate::MyLimiter>(ratelimit_lab::suite::suspects());
///     print!("{}", report.explanations());
/// }
/// ```
pub fn explore_concurrency<L: Limiter>(suspects: &[Suspect]) -> Report {
    let subject = Subject::of::<L>();
    Report {
        results: CHECKS
            .iter()
            .filter(|c| c.kind == Kind::Concurrency)
            .map(|c| {
                (
                    c.name.to_string(),
                    runner::run_subject(subject, c.name, env::timeout(), suspects),
                )
            })
            .collect(),
        rerun_command: None,
        wall: None,
    }
}

/// The catalog's wrong designs, which a failing trace is replayed on to name the mistake a
/// design makes: pass them to [`grade`], [`explore_concurrency`] or [`run_check`] (an empty
/// slice grades without naming mistakes). Each shows its name, the requirement it breaks and
/// its mistake; the designs themselves stay inside the harness.
pub fn suspects() -> &'static [Suspect] {
    crate::catalog::suspects()
}

/// Runs every check on `L` in suite order and returns the report; sequential failures are
/// diagnosed against `suspects`.
pub fn grade<L: Limiter>(suspects: &[Suspect]) -> Report {
    grade_subject(Subject::of::<L>(), suspects)
}

/// [`grade`] on a design given as a [`Subject`].
pub fn grade_subject(subject: Subject, suspects: &[Suspect]) -> Report {
    Report {
        results: CHECKS
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    runner::run_subject(subject, c.name, env::timeout(), suspects),
                )
            })
            .collect(),
        rerun_command: None,
        wall: None,
    }
}
