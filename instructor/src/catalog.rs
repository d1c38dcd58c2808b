//! Every design the project ships, with what the suite must conclude about it: the
//! reference and the specification pass, the correct alternatives pass, and each wrong design
//! fails first on the requirement it breaks, matched to the seed mistake it makes.
//!
//! The designs themselves live in crates below the harness: the reference in
//! `ratelimit-lab-reference`, the specification in `ratelimit-lab-model`, the alternatives
//! and the wrong designs in `ratelimit-lab-catalog` (re-exported here as [`alternatives`] and
//! [`mistakes`]). This module joins them to the suite: [`DESIGNS`] grades each one, against
//! the suite's [`suspects`] (the wrong designs a learner's failing trace is replayed on to
//! name the mistake).
use std::fmt;

pub use ratelimit_lab::suspects;
pub use ratelimit_lab_catalog::{alternatives, mistakes, Verdict};

use ratelimit_lab::suite::backend::Backend;
use ratelimit_lab::suite::{explore_concurrency, grade, Kind, Report, Suspect};
use ratelimit_lab::{LimitError, Limiter, Mistake, Policy, Requirement};
use ratelimit_lab_model::ModelLimiter;
use ratelimit_lab_reference::{ShardedBucket, TokenBucket};

/// What a design is in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The exact reference design.
    Reference,
    /// The executable specification, run as a limiter.
    Specification,
    /// A correct design built differently.
    Correct,
    /// A deliberately wrong design.
    Wrong {
        /// The requirement its first failed check must guard.
        breaks: Requirement,
        /// The seed mistake it makes.
        mistake: Mistake,
    },
}

/// One catalogued design.
pub struct Design {
    /// The type's name, e.g. `SplitReadWrite`.
    pub name: &'static str,
    /// What the suite must conclude.
    pub role: Role,
    build: fn(Policy, usize) -> Result<Box<dyn Limiter>, LimitError>,
    grade: fn(&[Suspect]) -> Report,
    explore: fn(&[Suspect]) -> Report,
}

impl fmt::Debug for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Design")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Design {
    /// A fresh instance behind a trait object.
    ///
    /// # Errors
    ///
    /// Whatever the design's `new` returns.
    pub fn build(&self, policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
        (self.build)(policy, max_keys)
    }

    /// Runs the whole suite on it, diagnosing failures against [`suspects`].
    pub fn grade(&self) -> Report {
        (self.grade)(suspects())
    }

    /// Runs only the suite's concurrency checks on it (exploring schedules under shuttle and
    /// loom), diagnosing failures against [`suspects`].
    pub fn explore(&self) -> Report {
        (self.explore)(suspects())
    }

    /// Why `report` contradicts what the catalog says the suite must conclude about this
    /// design; `None` when it does not. A correct design must pass every check. A wrong one
    /// must fail, first on a check guarding the requirement it breaks, and be diagnosed with
    /// its mistake; except a race ([`Mistake::is_race`]) in the std mode, which real threads
    /// show only by chance: of it, only what always holds is required there (every
    /// sequential check passes). Under shuttle or loom a race is held to the full rule.
    pub fn contradiction(&self, report: &Report) -> Option<String> {
        let first = report.first_failure();
        match (self.role, first) {
            (Role::Wrong { mistake, .. }, _)
                if mistake.is_race() && !Backend::current().is_controlled() =>
            {
                let sequential: Vec<&str> = report
                    .results
                    .iter()
                    .filter(|(_, r)| !r.passed() && r.check.kind != Kind::Concurrency)
                    .map(|(name, _)| name.as_str())
                    .collect();
                (!sequential.is_empty()).then(|| {
                    format!(
                        "{} is sequentially correct but failed the sequential check{} {}",
                        self.name,
                        if sequential.len() > 1 { "s" } else { "" },
                        sequential.join(", ")
                    )
                })
            }
            (Role::Wrong { breaks, .. }, None) => Some(format!(
                "{} is wrong (breaks {breaks}) but passed every check",
                self.name
            )),
            (Role::Wrong { breaks, mistake }, Some(first)) => {
                let mut problems = Vec::new();
                if first.requirement() != breaks {
                    problems.push(format!(
                        "its first failure, {}, is filed under {}, not {breaks}",
                        first.check.name,
                        first.requirement()
                    ));
                }
                let diagnosis = report.diagnosis();
                if diagnosis != Some(mistake) {
                    problems.push(format!(
                        "it is diagnosed as {}, not {mistake:?}",
                        diagnosis.map_or_else(|| "no mistake".to_owned(), |m| format!("{m:?}"))
                    ));
                }
                (!problems.is_empty())
                    .then(|| format!("{} is misdiagnosed: {}", self.name, problems.join("; ")))
            }
            (_, Some(first)) => Some(format!(
                "{} is correct but failed {} of {} checks, first {} ({})",
                self.name,
                report.results.len() - report.passed(),
                report.results.len(),
                first.check.name,
                first.check.requirement
            )),
            (_, None) => None,
        }
    }

    /// `true` for the reference, the specification and the correct alternatives.
    pub fn should_pass(&self) -> bool {
        !matches!(self.role, Role::Wrong { .. })
    }
}

use ratelimit_lab_catalog::boxed;

macro_rules! harness_table {
    ($( $path:path => $name:ident: $verdict:ident $(($req:ident, $mistake:ident))?; )*) => {
        /// Every catalogued design: the reference, the specification, the correct
        /// alternatives, then the wrong designs.
        pub static DESIGNS: &[Design] = &[
            Design {
                name: "TokenBucket",
                role: Role::Reference,
                build: boxed::<TokenBucket>,
                grade: grade::<TokenBucket>,
                explore: explore_concurrency::<TokenBucket>,
            },
            Design {
                name: "ModelLimiter",
                role: Role::Specification,
                build: boxed::<ModelLimiter>,
                grade: grade::<ModelLimiter>,
                explore: explore_concurrency::<ModelLimiter>,
            },
            Design {
                name: "ShardedBucket",
                role: Role::Correct,
                build: boxed::<ShardedBucket>,
                grade: grade::<ShardedBucket>,
                explore: explore_concurrency::<ShardedBucket>,
            },
            $( Design {
                name: stringify!($name),
                role: harness_table!(@role $verdict $(($req, $mistake))?),
                build: boxed::<$path>,
                grade: grade::<$path>,
                explore: explore_concurrency::<$path>,
            }, )*
        ];
    };
    (@role Correct) => { Role::Correct };
    (@role Wrong ($req:ident, $mistake:ident)) => {
        Role::Wrong { breaks: Requirement::$req, mistake: Mistake::$mistake }
    };
}

ratelimit_lab_catalog::for_each_design!(harness_table);

/// The catalogued design called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Design> {
    DESIGNS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// The requirement the catalogued wrong design called `name` breaks and the mistake it
/// makes; `None` for a correct design or an unknown name.
pub fn wrong(name: &str) -> Option<(Requirement, Mistake)> {
    match find(name)?.role {
        Role::Wrong { breaks, mistake } => Some((breaks, mistake)),
        _ => None,
    }
}
