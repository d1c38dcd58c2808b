//! Stateful property checks: random operation sequences, every step compared with the
//! specification through [`Probe`], shrunk by proptest to a minimal failing sequence.
//!
//! Runs are deterministic (a fixed seed) so that every learner gets the same grade for the
//! same design; `RATELIMIT_LAB_SEED` changes the seed and `RATELIMIT_LAB_CASES` the number
//! of cases.
use crate::suite::host::subject::Subject;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::core::generate::{case, Case, Mix, ADMISSIONS, CUTOVERS, EVICTIONS, EXTREMES};
use crate::suite::oracle::probe::Probe;

fn replay(subject: Subject, case: &Case) -> Result<(), Failure> {
    let mut probe = Probe::of(subject, case.policy, case.max_keys)?;
    for op in &case.ops {
        probe.run(op.clone())?;
    }
    Ok(())
}

fn config() -> Config {
    Config {
        cases: env::cases(),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

/// Runs one family of sequences; on failure, the shrunk sequence's trace.
fn run(subject: Subject, mix: Mix) -> Result<(), Failure> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &env::seed_bytes());
    let mut runner = TestRunner::new_with_rng(config(), rng);
    let result = runner.run(&case(mix), |case| {
        replay(subject, &case).map_err(|f| TestCaseError::fail(f.summary))
    });
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(_, minimal)) => {
            let failure = match replay(subject, &minimal) {
                Err(f) => f,
                Ok(()) => Failure::new(
                    "a generated sequence failed, but the shrunk one passed when replayed: the design is not deterministic for the same calls",
                ),
            };
            let header = format!(
                "starting from {}, max_keys {} ({} operations after shrinking)",
                minimal.policy,
                minimal.max_keys,
                minimal.ops.len()
            );
            let detail = match failure.detail.clone() {
                Some(d) => format!("{header}\n{d}"),
                None => header,
            };
            Err(failure.with_detail(detail))
        }
        Err(TestError::Abort(why)) => {
            Err(Failure::new(format!("the property run was aborted: {why}")))
        }
    }
}

/// `r1_random_admissions_match_the_model`.
pub(crate) fn r1_random_admissions_match_the_model(subject: Subject) -> Result<(), Failure> {
    run(subject, ADMISSIONS)
}

/// `r3_random_evictions_match_the_model`.
pub(crate) fn r3_random_evictions_match_the_model(subject: Subject) -> Result<(), Failure> {
    run(subject, EVICTIONS)
}

/// `r4_random_cutovers_match_the_model`.
pub(crate) fn r4_random_cutovers_match_the_model(subject: Subject) -> Result<(), Failure> {
    run(subject, CUTOVERS)
}

/// `i1_extreme_sequences_stay_exact`.
pub(crate) fn i1_extreme_sequences_stay_exact(subject: Subject) -> Result<(), Failure> {
    run(subject, EXTREMES)
}
