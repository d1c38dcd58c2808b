//! Naming the mistake: the suspects a failing trace is replayed on, and the battery that checks a
//! lookalike is consistent with the design.
//!
//! Imports `core`, `host` and `oracle`.

pub(crate) mod battery;
pub(crate) mod detectors;
pub(crate) mod signature;
pub(crate) mod suspects;
