//! The backend's runtime and the design under test: running the suite's code once or under a search
//! of schedules (std, shuttle, loom), a design instance hosted in an execution of its own,
//! shuttle's replay guard, the suite's side of the facade's perturbation, the threads a scenario runs on, and [`Subject`](subject::Subject) (a design with its type erased).
//!
//! Imports `core` only.

pub(crate) mod crew;
pub(crate) mod perturbation;
pub(crate) mod runtime;
// Only loom builds use it; its tests run in every mode.
#[cfg_attr(not(loom), allow(dead_code))]
pub(crate) mod hosted;
#[cfg(all(feature = "shuttle", not(loom)))]
pub(crate) mod replay_guard;
pub mod subject;
