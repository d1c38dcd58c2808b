//! ratelimit-lab: an exact token-bucket limiter, its executable specification, and a harness
//! that grades any design against the Rate Limiter lesson's contract.
//!
//! A learner depends on this crate alone: it re-exports the contract ([`Policy`],
//! [`Decision`], [`LimitError`], [`Limiter`], [`sync`]), the [`reference`] designs and the
//! [`model`].
#![deny(missing_docs, missing_debug_implementations)]

pub use ratelimit_lab_api::*;
pub use ratelimit_lab_model as model;
pub use ratelimit_lab_reference as reference;
pub mod lesson;
pub mod suite;

mod macros;

#[doc(hidden)]
pub mod _macro_support;
