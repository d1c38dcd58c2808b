//! Each check settled once per design and process, and the earlier check whose failure has
//! the same cause.
//!
//! A learner's `cargo test` runs every check of the suite in one process. One slip of a
//! design (a retry estimate a nanosecond early) fails many checks for the same reason; the
//! first of them in suite order explains it in full and lists the later ones, one line each,
//! and the later ones print nothing of their own. Which check is first must not depend on
//! which test thread finished first, so a failing check settles the checks before it (and
//! the first, those after it; each at most once per process: the result one test computes
//! is the result every other test sees) and compares causes. Nothing about a check's own
//! outcome changes.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::suite::checks::table::CHECKS;
use crate::suite::diagnose::suspects::Suspect;
use crate::suite::run::isolation::{run_check, CheckResult};
use crate::suite::run::marks::Running;
use crate::suite::run::selection::Selection;
use crate::Limiter;

/// One slot per (design, check): the check's result, computed by whichever test needs it
/// first.
type Slots = BTreeMap<(String, String), Arc<OnceLock<CheckResult>>>;

static SETTLED: Mutex<Slots> = Mutex::new(BTreeMap::new());

/// Where a design's tests are: the design's key and the prefix of its tests' names.
#[derive(Clone, Debug)]
pub(crate) struct Tests<'a> {
    /// What tells this design's checks from another design's in the same process.
    pub(crate) design: String,
    /// What comes before `cNN::name` in its tests' names (`""`, or `lazy_migration::`).
    pub(crate) prefix: String,
    /// Where running checks are marked, when the process writes reports.
    pub(crate) report_dir: Option<&'a Path>,
}

impl Tests<'_> {
    /// The name of the test that runs the check at `position` (from 0) in the suite.
    pub(crate) fn test_name(&self, position: usize) -> String {
        let name = CHECKS.get(position).map_or("", |c| c.name);
        format!("{}c{:02}::{name}", self.prefix, position + 1)
    }

    /// The result of `check` on `L`: run now (marked as running meanwhile when `mark`; the
    /// check's own test marks itself), or the one already computed in this process.
    pub(crate) fn settle<L: Limiter>(
        &self,
        check: &str,
        suspects: &[Suspect],
        mark: bool,
    ) -> CheckResult {
        let slot = {
            let mut slots = SETTLED.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(
                slots
                    .entry((self.design.clone(), check.to_string()))
                    .or_default(),
            )
        };
        slot.get_or_init(|| {
            let position = CHECKS.iter().position(|c| c.name == check).unwrap_or(0);
            let _running = mark.then(|| Running::mark(self.report_dir, &self.test_name(position)));
            run_check::<L>(check, suspects)
        })
        .clone()
    }

    /// The first check before `result`'s in suite order that `selection` runs and that failed
    /// with the same cause: its test's name. `None` when `result` has no known cause, or is
    /// the first.
    pub(crate) fn same_cause_before<L: Limiter>(
        &self,
        result: &CheckResult,
        suspects: &[Suspect],
        selection: &Selection,
    ) -> Option<String> {
        let cause = result.cause()?;
        let position = CHECKS.iter().position(|c| c.name == result.check.name)?;
        CHECKS[..position]
            .iter()
            .enumerate()
            .filter(|(j, _)| selection.selects(&self.test_name(*j)))
            .find(|(_, earlier)| {
                self.settle::<L>(earlier.name, suspects, true).cause() == Some(cause)
            })
            .map(|(j, _)| self.test_name(j))
    }

    /// The later checks in suite order that `selection` runs and whose failure points at
    /// `result`'s ([`Tests::same_cause_before`] names it): each test's name and what the
    /// check checks. Empty when `result` has no known cause. Settles every later selected
    /// check first (each once per process), so the first failure of a slip can list them.
    pub(crate) fn same_cause_after<L: Limiter>(
        &self,
        result: &CheckResult,
        suspects: &[Suspect],
        selection: &Selection,
    ) -> Vec<(String, &'static str)> {
        let Some(cause) = result.cause() else {
            return Vec::new();
        };
        let Some(position) = CHECKS.iter().position(|c| c.name == result.check.name) else {
            return Vec::new();
        };
        let me = self.test_name(position);
        CHECKS
            .iter()
            .enumerate()
            .skip(position + 1)
            .filter(|(j, _)| selection.selects(&self.test_name(*j)))
            .filter_map(|(j, later)| {
                let r = self.settle::<L>(later.name, suspects, true);
                // Comparing causes first spares the scan of earlier checks for most.
                (r.cause() == Some(cause)
                    && self
                        .same_cause_before::<L>(&r, suspects, selection)
                        .as_ref()
                        == Some(&me))
                .then(|| (self.test_name(j), later.guards))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::mistakes::FloorRetryEstimate;
    use crate::reference::TokenBucket;
    use crate::suite::checks::table::Kind;

    fn tests(design: &str) -> Tests<'static> {
        Tests {
            design: format!("settled::tests {design}"),
            prefix: String::new(),
            report_dir: None,
        }
    }

    #[test]
    fn every_failure_of_one_slip_points_at_the_first_and_a_filter_moves_it() {
        // A retry estimate floored instead of rounded up: one slip, many failed checks.
        let suspects = crate::catalog::suspects();
        let design = tests("FloorRetryEstimate");
        let everything = Selection::default();
        let results: Vec<CheckResult> = CHECKS
            .iter()
            .filter(|c| c.kind != Kind::Concurrency)
            .map(|c| design.settle::<FloorRetryEstimate>(c.name, suspects, false))
            .collect();
        // The concurrency checks run on real threads here: left out, so that the count
        // does not depend on scheduling.
        let failed: Vec<&CheckResult> = results
            .iter()
            .filter(|r| !r.passed() && r.check.kind != Kind::Concurrency)
            .collect();
        assert!(failed.len() > 3, "{} failed", failed.len());
        let first = failed[0];
        let first_name = design.test_name(
            CHECKS
                .iter()
                .position(|c| c.name == first.check.name)
                .unwrap_or(0),
        );
        assert_eq!(
            design.same_cause_before::<FloorRetryEstimate>(first, suspects, &everything),
            None
        );
        let pointing = failed
            .iter()
            .filter(|r| {
                design.same_cause_before::<FloorRetryEstimate>(r, suspects, &everything)
                    == Some(first_name.clone())
            })
            .count();
        assert_eq!(
            pointing,
            failed.len() - 1,
            "every later failure points at {first_name}"
        );
        // The first lists exactly those that point at it, in suite order.
        let listed = design.same_cause_after::<FloorRetryEstimate>(first, suspects, &everything);
        let later: Vec<String> = failed[1..]
            .iter()
            .map(|r| {
                design.test_name(
                    CHECKS
                        .iter()
                        .position(|c| c.name == r.check.name)
                        .unwrap_or(0),
                )
            })
            .collect();
        let listed_names: Vec<String> = listed.iter().map(|(n, _)| n.clone()).collect();
        // The concurrency checks left out above may be listed too when they fail alike.
        assert!(
            later.iter().all(|n| listed_names.contains(n)),
            "{listed_names:?} lists {later:?}"
        );
        assert!(listed_names.windows(2).all(|w| w[0] < w[1]));
        // Settled once: the result a later test sees is the one computed first.
        assert_eq!(
            design
                .settle::<FloorRetryEstimate>(first.check.name, suspects, false)
                .status,
            first.status
        );
        // With the first one filtered out, the next failure explains itself.
        let skip_first = Selection::from_args(["--skip".to_string(), first_name.clone()]);
        assert_eq!(
            design.same_cause_before::<FloorRetryEstimate>(failed[1], suspects, &skip_first),
            None
        );
    }

    #[test]
    fn a_correct_design_has_no_cause_to_share() {
        let suspects = crate::catalog::suspects();
        let design = tests("TokenBucket");
        let result = design.settle::<TokenBucket>("seed_trace_table", suspects, false);
        assert!(result.passed());
        assert_eq!(
            design.same_cause_before::<TokenBucket>(&result, suspects, &Selection::default()),
            None
        );
    }
}
