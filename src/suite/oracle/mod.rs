//! What is right: the differential probe (a design and the specification side by side) and how a
//! difference is told, the linearizability checker, the one rule for "the same state", and the
//! shrinking of a failing sequential trace to a minimal one.
//!
//! Imports `core` and `host`.

pub(crate) mod broken_requirement;
pub(crate) mod difference;
pub mod linearizability;
pub(crate) mod minimal;
pub(crate) mod probe;
pub(crate) mod recorder;
pub(crate) mod sequential;
