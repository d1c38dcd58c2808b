//! The suite's side of the facade's perturbation (std builds): which of its waits are the
//! harness's own, and whether a design's calls reach any perturbation point at all.
//!
//! A design built on [`sync`](crate::sync) passes perturbation points inside its calls, so
//! the perturbed scenarios shake its schedule; a design on raw `std::sync` passes none, and
//! only the stress rounds that follow can show its races. Under shuttle and loom there is no
//! perturbation: every call is controlled, [`idle`] just runs its closure and no call is
//! counted as reached.
use std::cell::Cell;

std::thread_local! {
    /// Perturbation points this thread's recorded design calls have passed.
    static REACHED: Cell<u64> = const { Cell::new(0) };
}

/// Runs one call into the design, counting the perturbation points it passes on this thread.
pub(crate) fn design_call<T>(call: impl FnOnce() -> T) -> T {
    let before = passed();
    let out = call();
    let after = passed();
    REACHED.with(|r| r.set(r.get() + after.saturating_sub(before)));
    out
}

/// The perturbation points this thread's design calls have passed so far, plus what
/// [`credit`] added: a count that grows during a search only if the design is reachable.
pub(crate) fn reached() -> u64 {
    REACHED.with(Cell::get)
}

/// Adds the points a scenario thread's calls passed (read there with [`reached`] before it
/// ended) to the calling thread's count.
pub(crate) fn credit(points: u64) {
    REACHED.with(|r| r.set(r.get().saturating_add(points)));
}

/// Runs `wait`, which only waits for the scenario's other threads to end (the harness
/// joining them), with the calling thread counted as not running: the others' perturbation
/// points need not leave it gaps.
pub(crate) fn idle<T>(wait: impl FnOnce() -> T) -> T {
    #[cfg(not(any(loom, feature = "shuttle")))]
    {
        crate::sync::perturbation::idle(wait)
    }
    #[cfg(any(loom, feature = "shuttle"))]
    {
        wait()
    }
}

#[cfg(not(any(loom, feature = "shuttle")))]
fn passed() -> u64 {
    crate::sync::perturbation::points_passed()
}

#[cfg(any(loom, feature = "shuttle"))]
fn passed() -> u64 {
    0
}

#[cfg(all(test, not(any(loom, feature = "shuttle"))))]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_passes_points_is_counted_and_one_that_passes_none_is_not() {
        let _on = crate::sync::perturbation::enable(3);
        let start = reached();
        design_call(|| std::sync::Mutex::new(1).lock().map(|g| *g).ok());
        assert_eq!(reached(), start, "raw std::sync passes no point");
        let facade = crate::sync::Mutex::new(1);
        design_call(|| facade.lock().map(|g| *g).ok());
        assert_eq!(reached(), start + 1, "the facade's lock is one point");
        credit(5);
        assert_eq!(reached(), start + 6);
    }
}
