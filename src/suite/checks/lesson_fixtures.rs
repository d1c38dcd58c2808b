//! The shipped walkthrough fixtures as one check: every step of every fixture runs on the
//! design beside the specification, and a failure says which fixture and step, in the
//! lesson's words.
use crate::fixtures::{self, Fixture};
use crate::suite::core::failure::Failure;
use crate::suite::host::subject::Subject;
use crate::suite::oracle::probe::Probe;
use crate::Requirement;

type Check = Result<(), Failure>;

/// The lesson's fixtures about fractional refill and input behavior (no cutover, no
/// eviction, no key bound reached), step by step.
pub(crate) fn r1_lesson_fixtures_replay(subject: Subject) -> Check {
    replay_all(subject, Requirement::R1)
}

/// The lesson's fixtures that evict or reach the key bound (and cut over no policy).
pub(crate) fn r3_lesson_fixtures_replay(subject: Subject) -> Check {
    replay_all(subject, Requirement::R3)
}

/// The lesson's fixtures that cut over a policy.
pub(crate) fn r4_lesson_fixtures_replay(subject: Subject) -> Check {
    replay_all(subject, Requirement::R4)
}

/// Every shipped fixture (`fixtures/walkthroughs/*.json`) of `requirement`, step by step:
/// the design must return each step's outcome and hold the specification's state after it.
fn replay_all(subject: Subject, requirement: Requirement) -> Check {
    let all = fixtures::shipped()
        .map_err(|e| Failure::new(format!("the check itself is broken: {e}")))?;
    for fixture in all.iter().filter(|f| f.requirement() == requirement) {
        replay(subject, fixture)?;
    }
    Ok(())
}

fn replay(subject: Subject, fixture: &Fixture) -> Check {
    let mut probe = Probe::of(subject, fixture.policy, fixture.max_keys)?;
    for step in &fixture.steps {
        let in_words = |mut failure: Failure| {
            failure.summary = format!(
                "{} ({}), step {}, \"{}\": {}",
                fixture.file, fixture.title, step.number, step.action, failure.summary
            );
            let mut lesson = format!("this step shows: {}", step.invariant);
            if let Some(words) = &step.seed_outcome {
                lesson.push_str(&format!("\nthe lesson says: {words}"));
            }
            lesson.push_str(&format!("\nfrom the lesson: {}", fixture.seed));
            failure.push_detail(&lesson);
            failure
        };
        let mut got = probe.run(step.op.clone()).map_err(in_words)?;
        // Many callers at once in the walkthrough: here one after another, each checked.
        for _ in 1..step.repeat() {
            got = probe.run(step.op.clone()).map_err(in_words)?;
        }
        // The fixture was verified against the specification when it was built, so this
        // holds whenever the design agrees with the specification; it guards the fixture.
        if got != step.outcome {
            return Err(in_words(Failure::new(format!(
                "the fixture holds \"{}\" but the specification and the design returned \"{got}\"",
                step.outcome
            ))));
        }
    }
    Ok(())
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::catalog::mistakes::{RejectionForgetsCredit, RetroactiveRate};
    use crate::reference::TokenBucket;

    #[test]
    fn a_failure_names_the_fixture_the_step_and_the_lesson_words() {
        let failure = r1_lesson_fixtures_replay(Subject::of::<RejectionForgetsCredit>())
            .expect_err("the design forgets fractional credit");
        assert!(
            failure
                .summary
                .starts_with("walkthroughs/burst_rejection_fractional_refill.json"),
            "{}",
            failure.summary
        );
        assert!(failure.summary.contains("step 3"), "{}", failure.summary);
        let detail = failure.detail.unwrap_or_default();
        assert!(detail.contains("this step shows:"), "{detail}");
        assert!(detail.contains("from the lesson:"), "{detail}");
        assert!(!failure.trace.is_empty());
        // A cutover flaw fails the R4 fixtures, not the R1 ones.
        assert!(r1_lesson_fixtures_replay(Subject::of::<RetroactiveRate>()).is_ok());
        assert!(r4_lesson_fixtures_replay(Subject::of::<RetroactiveRate>()).is_err());
        for check in [
            r1_lesson_fixtures_replay,
            r3_lesson_fixtures_replay,
            r4_lesson_fixtures_replay,
        ] {
            assert!(check(Subject::of::<TokenBucket>()).is_ok());
        }
    }
}
