//! The catalog's designs as the suite uses them inside the harness: the wrong ones, replayed
//! on a learner's failing trace to name the mistake ([`suspects`]), and any of them by name
//! for the lesson's contrasts and the fixtures' counterexamples ([`wrong`], and the catalog
//! crate's `find`). Nothing here is public: a design that passes the suite, or one that
//! passes it behind a lock, is not part of a learner's API.
use std::sync::OnceLock;

#[cfg(test)]
pub(crate) use ratelimit_lab_catalog::mistakes;
pub(crate) use ratelimit_lab_catalog::Verdict;

use crate::suite::diagnose::suspects::Suspect;

/// The catalog's wrong designs, which a failing trace is replayed on to name the mistake a
/// design makes, in catalog order: pass them to [`grade`](crate::suite::grade),
/// [`explore_concurrency`](crate::suite::explore_concurrency) or
/// [`run_check`](crate::suite::run_check) (an empty slice grades without naming mistakes).
/// Each shows its name, the requirement it breaks and its mistake; the designs themselves
/// stay inside the harness.
pub fn suspects() -> &'static [Suspect] {
    static SUSPECTS: OnceLock<Vec<Suspect>> = OnceLock::new();
    SUSPECTS.get_or_init(|| {
        ratelimit_lab_catalog::DESIGNS
            .iter()
            .filter_map(|d| match d.verdict {
                Verdict::Correct => None,
                Verdict::Wrong { breaks, mistake } => Some(Suspect {
                    name: d.name,
                    breaks,
                    mistake,
                    says: ratelimit_lab_catalog::mistakes::in_words(d.name).unwrap_or_default(),
                    build: d.build,
                }),
            })
            .collect()
    })
}
