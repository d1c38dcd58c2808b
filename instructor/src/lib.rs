//! The instructor's side of ratelimit-lab, above the crate a learner depends on.
//!
//! - [`catalog`]: every design the project ships (the reference, the specification, the
//!   correct alternatives and the wrong designs) joined to the suite, with what the suite
//!   must conclude about each.
//! - [`site`]: the lesson's fixtures built, verified, drawn and shown on one page.
//! - [`run`]: the `ratelimit-lab` command (`grade`, `walkthrough`, `fixtures`, `replay`,
//!   `explore`, `submission`); see `ratelimit-lab --help`.
//!
//! The designs that pass the suite are reached here, through this crate's own dependencies on
//! `ratelimit-lab-reference`, `ratelimit-lab-model` and `ratelimit-lab-catalog`; the crate a
//! learner depends on (`ratelimit-lab`) does not hand them out.
#![deny(missing_docs, missing_debug_implementations)]

pub mod catalog;
mod cli;
pub mod site;

pub use cli::run;
