//! The suite's base: what every other layer uses. The backend the build runs under and its `cargo`
//! line, the knobs read from the environment, the search budget, a check's failure and its trace,
//! the seeded generator, caught and quieted panics, the watch on every call into a design, the
//! levels of the card.
//!
//! Imports nothing from the suite.

pub mod backend;
pub(crate) mod budget;
pub(crate) mod cause;
pub mod env;
pub(crate) mod failure;
pub mod generate;
pub mod level;
pub(crate) mod panics;
pub(crate) mod quiet_panics;
pub(crate) mod random;
pub(crate) mod watch;
