//! ratelimit-lab: an exact token-bucket limiter, its executable specification, and a harness
//! that grades any design against the Rate Limiter lesson's contract.
//!
//! A learner's crate depends on this crate alone. It offers the contract ([`Policy`], [`Decision`],
//! [`LimitError`], [`Limiter`], [`Snapshot`], [`sync`], the input [`rules`]) and the suite
//! ([`conformance_suite!`], [`grade_card`], [`explore_concurrency`](suite::explore_concurrency)),
//! and nothing that passes the suite: the reference designs, the executable specification and the
//! catalog's designs are private dependencies. The suite still judges with the specification and
//! diagnoses with the catalog; it does not hand them out. A crate that names
//! `ratelimit_lab::reference`, `::model` or `::catalog` does not compile, and the compiler quotes
//! the line below that says why. The instructor's tools (the `ratelimit-lab` command, the catalog
//! joined to the suite) live in the `ratelimit-lab-instructor` crate above this one.
//!
//! # Layers
//!
//! Beneath everything, the contract (`ratelimit-lab-api`), the specification, the reference
//! and the catalog's designs (crates of their own). Above them, this crate's modules, each
//! importing only those before it in this table (`tests/layers.rs` checks it):
//!
//! | module | job |
//! |---|---|
//! | `lesson` | the lesson's walkthroughs as data, in its words, replayed on the specification |
//! | `fixtures` | the verified fixtures as documents, and their loader |
//! | `suite` | the conformance checks, in layers of their own |
//! | `catalog` | the catalog's wrong designs as the suite's suspects |
//! | `grade_card` | a learner's whole grade on one screen |
//! | `_macro_support` | what `conformance_suite!` expands to |
#![deny(missing_docs, missing_debug_implementations)]

pub use ratelimit_lab_api::*;
// Each of the next two lines, and the `catalog` line below, is what rustc quotes when a
// learner's crate names the module ("the crate `reference` is defined here"): keep each
// reason short enough to fit its line.
pub(crate) use ratelimit_lab_model as model; // passes the suite: not in a learner's API
pub(crate) use ratelimit_lab_reference as reference; // passes the suite: not in a learner's API

// The modules in layer order, as in the table above: each imports only those before it.

// The lesson's walkthroughs as data, replayed on the specification.
pub mod lesson;
// The verified fixtures as documents, and their loader.
pub mod fixtures;
// The conformance checks. They return `Result<(), Failure>`: a failure carries its whole
// trace, and it is the cold path, so its size is not worth a box on every `?`.
#[allow(clippy::result_large_err, clippy::large_enum_variant)]
pub mod suite;
// The catalog's wrong designs as the suite's suspects.
pub(crate) mod catalog; // designs that pass the suite are not part of a learner's API

// A learner's whole grade on one screen.
mod grade_card;
// What `conformance_suite!` expands to, and the macro itself.
#[doc(hidden)]
pub mod _macro_support;
mod macros;

pub use catalog::suspects;
pub use grade_card::grade_card;
pub use suite::explore;
