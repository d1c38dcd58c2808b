//! The one call recorder: a call made on a design, stamped with logical invocation and return
//! times from a clock its history's threads share, as the [`Event`] the linearizability
//! checker judges. The clock is the caller's: a scenario explored under shuttle or loom ticks
//! an atomic of [`sync`](crate::sync), so that the backend schedules around it; stress rounds
//! on real threads tick a `std` one.

use crate::model::Op;
use crate::suite::core::panics::guarded;
use crate::suite::host::perturbation::design_call;
use crate::suite::oracle::linearizability::Event;
use crate::Limiter;

/// Calls `op` on `design` from `thread` (0 for a history's init and post parts, from 1 for
/// its concurrent threads), between two ticks of the shared clock (`tick` returns the time
/// and advances it).
///
/// # Errors
///
/// The message of the design's panic.
pub(crate) fn record(
    design: &dyn Limiter,
    tick: impl Fn() -> u64,
    thread: usize,
    op: &Op,
) -> Result<Event, String> {
    let invoked = tick();
    let outcome = design_call(|| guarded(|| op.run_on(design)))?;
    let returned = tick();
    Ok(Event {
        thread,
        op: op.clone(),
        outcome,
        invoked,
        returned,
    })
}
