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
//!
//! # Layers
//!
//! Each folder is a layer that imports only the layers before it in this list, and no two
//! of its files import each other (`tests/layers.rs` keeps it so):
//!
//! | layer | job |
//! |---|---|
//! | `core` | backend, knobs, budget, failures, generator, panics, the watch on calls |
//! | `host` | the backends' runtime, hosted instances, the design under test |
//! | `oracle` | the differential probe, linearizability, state equivalence, trace shrinking |
//! | `search` | concurrent scenarios, the backends' searches, counterexamples |
//! | `checks` | the check table and the checks |
//! | `diagnose` | suspects and the consistency battery |
//! | `run` | one check in isolation |
//! | `report` | reports for people and platforms, the card |
//!
//! This file, above them all, holds the entry points ([`grade`], [`explore_concurrency`]).
pub(crate) mod checks;
pub(crate) mod core;
pub(crate) mod diagnose;
pub(crate) mod host;
pub(crate) mod oracle;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod search;

pub use self::core::{backend, env, generate, level};
pub use host::subject;
pub use oracle::linearizability;
pub use report::{classroom, junit};
pub use search::counterexample;
pub use search::explorer::{replay, replay_subject};
pub use search::scenario as explore;

/// What the `ratelimit-lab` command's submission runner needs beside the public API: the
/// marks of running checks a test process leaves on disk, and the completion of the reports
/// of a run cut short. Not part of the suite's API.
#[doc(hidden)]
pub mod _runner_support {
    pub use super::report::unfinished;
    pub use super::run::marks;
}

pub use self::core::budget::Coverage;
pub use self::core::cause::Cause;
pub use self::core::failure::{FailingTrace, Failure, Lookalike, TraceRow};
pub use crate::{Invariant, Mistake, Requirement};
pub use checks::table::{find, CheckInfo, Kind, CHECKS};
pub use diagnose::suspects::{resembling, Suspect};
pub use host::subject::Subject;
pub use oracle::probe::Probe;
pub use report::results::{cargo_in_this_mode, collect, rerun, write_reports, Report};
pub use run::isolation::{run_check, run_check_within, CheckResult, Status};

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
///     let report = ratelimit_lab::suite::explore_concurrency::<my_crate::MyLimiter>(ratelimit_lab::suspects());
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
                    run::isolation::run_subject(subject, c.name, env::timeout(), suspects),
                )
            })
            .collect(),
        rerun_command: None,
        wall: None,
    }
}

/// The seed mistake that the diagnosis's probes find in `L` itself, without running the
/// checks: `None` when no probe shows a symptom, or when probes of different mistakes do
/// (the evidence then contradicts itself). A correct design gives `None`. This is the
/// evidence a failed check's diagnosis starts from ([`Failure::detected`]); the diagnosis also
/// replays the failing trace on the catalog, so a design this names nothing can still be
/// named by [`grade`]. The design's panics are quiet while the probes run (a panic is no
/// evidence). The answer is settled once per process and design.
pub fn probed_mistake<L: Limiter>() -> Option<Mistake> {
    self::core::quiet_panics::begin();
    let found = diagnose::detectors::detected(host::subject::boxed::<L>);
    self::core::quiet_panics::end();
    found
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
                    run::isolation::run_subject(subject, c.name, env::timeout(), suspects),
                )
            })
            .collect(),
        rerun_command: None,
        wall: None,
    }
}
