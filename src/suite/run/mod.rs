//! One check in isolation: on a thread of its own, within its time limit, diagnosed, with its
//! running mark on disk.
//!
//! Imports the layers before it: `core` to `diagnose`.

pub(crate) mod isolation;
pub mod marks;
pub(crate) mod selection;
pub(crate) mod settled;
pub(crate) mod wait;
