//! One check in isolation: on a thread of its own, within its time limit, diagnosed, with its running mark on disk.
//!
//! Imports every layer above it in this list: `core` to `diagnose`.

pub(crate) mod runner;
pub mod running;
