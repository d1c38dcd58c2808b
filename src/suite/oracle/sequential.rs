//! Sequential first: before a concurrent history is called non-linearizable, its calls run
//! one at a time on a fresh instance, and a design that is already wrong there is told that
//! difference, never "not atomic" (the race checks cannot judge atomicity until the
//! sequential behaviour is right).
use crate::model::Op;
use crate::suite::core::failure::Failure;
use crate::suite::host::subject::Subject;
use crate::suite::oracle::minimal::shrunk;
use crate::suite::oracle::probe::Probe;
use crate::Policy;

/// Runs `calls` one at a time, in the order given, on a fresh instance of `subject` built
/// with `policy` and `max_keys`, beside the specification.
///
/// # Errors
///
/// The first difference from the specification (or the design's failure to build), as the
/// probe reports it, with its trace shrunk to the calls it needs
/// ([`shrunk`](crate::suite::oracle::minimal::shrunk)).
pub(crate) fn one_at_a_time(
    subject: Subject,
    policy: Policy,
    max_keys: usize,
    calls: impl IntoIterator<Item = Op>,
) -> Result<(), Failure> {
    let mut probe = Probe::of(subject, policy, max_keys)?;
    for op in calls {
        probe.run(op).map_err(|failure| shrunk(subject, failure))?;
    }
    Ok(())
}

/// `failure`, found running `calls` one at a time (for example "a concurrent scenario, run
/// one at a time on a fresh instance"), as the failure of a concurrency check: the design is
/// already wrong without concurrency, and that is to be fixed first.
pub(crate) fn already_wrong(failure: Failure, calls: &str) -> Failure {
    let advice = format!(
        "The calls of {calls}, already disagree with the specification: fix this first; the \
         race checks cannot judge atomicity until then."
    );
    Failure {
        summary: format!(
            "the design is already wrong without concurrency: {}",
            failure.summary
        ),
        detail: Some(match &failure.detail {
            Some(d) => format!("{d}\n{advice}"),
            None => advice,
        }),
        ..failure
    }
}
