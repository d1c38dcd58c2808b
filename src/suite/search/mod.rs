//! Concurrent scenarios and the search for a failing execution: a scenario run on threads and
//! judged ([`scenario`]), the backends' searches with shrinking, saving and replay ([`explorer`]),
//! saved counterexamples, and the kind of race a failing history shows.
//!
//! Imports `core`, `host` and `oracle`.

pub mod counterexample;
pub mod explorer;
pub(crate) mod race_kind;
pub mod scenario;
