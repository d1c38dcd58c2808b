//! ratelimit-lab: an exact token-bucket limiter, its executable specification, and a harness
//! that grades any design against the Rate Limiter lesson's contract.
//!
//! A learner depends on this crate alone: it re-exports the contract ([`Policy`],
//! [`Decision`], [`LimitError`], [`Limiter`], [`sync`], the input [`rules`]), the
//! [`reference`](mod@reference) designs, the [`model`] and the [`catalog`] of correct and
//! wrong designs.
#![deny(missing_docs, missing_debug_implementations)]

pub use ratelimit_lab_api::*;
pub use ratelimit_lab_model as model;
pub use ratelimit_lab_reference as reference;
pub mod catalog;
mod grade_card;
pub use grade_card::grade_card;
pub mod fixtures;
pub mod lesson;
pub use suite::explore;
// Checks return `Result<(), Failure>`: a failure carries its whole trace, and it is the cold
// path, so its size is not worth a box on every `?`.
#[allow(clippy::result_large_err, clippy::large_enum_variant)]
pub mod suite;

mod macros;

#[doc(hidden)]
pub mod _macro_support;
