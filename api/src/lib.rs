//! The contract every ratelimit-lab design implements.
//!
//! This crate holds the vocabulary of the Rate Limiter lesson: a validated [`Policy`], the
//! [`Decision`] an admission returns, the [`LimitError`]s a design reports, the [`Limiter`]
//! trait a design implements and, for white-box checks, the [`Snapshot`] of its state; the
//! input [`rules`] every design applies before it changes state; and the lesson's
//! [`Requirement`]s, [`Invariant`]s and named [`Mistake`]s, which every check and every
//! catalogued design is labelled with.
//! Learners depend on `ratelimit-lab`, which re-exports all of it.
//!
//! # Units
//!
//! Time is a `u64` count of nanoseconds from one monotonic origin. Balances are fixed-point
//! *units*: one token is [`UNITS_PER_TOKEN`] units, and a policy with rate `r` earns exactly
//! `r` units per elapsed nanosecond (`r` tokens per second). Every quantity a caller passes
//! (version, capacity, rate, cost) lies in `1..=`[`MAX_QUANTITY`], the range of Java's
//! positive `long`, so that the largest balance, `MAX_QUANTITY × UNITS_PER_TOKEN`, is below
//! 2^93 and every product of an elapsed time and a rate is below 2^127: `u128` holds them
//! all exactly.
#![deny(missing_docs, missing_debug_implementations)]

mod decision;
mod error;
mod key;
mod limiter;
mod mistake;
mod policy;
mod requirement;
pub mod rules;
mod snapshot;
pub mod sync;

pub use decision::Decision;
pub use error::LimitError;
pub use key::is_blank_key;
pub use limiter::Limiter;
pub use mistake::Mistake;
pub use policy::Policy;
pub use requirement::{Invariant, Requirement};
pub use snapshot::{BucketState, Snapshot};

/// Fixed-point units in one token: balances are kept in billionths of a token so that an
/// integer rate (tokens per second) times elapsed nanoseconds is an exact number of units.
pub const UNITS_PER_TOKEN: u64 = 1_000_000_000;

/// The largest version, capacity, rate or cost a policy or request may carry: `i64::MAX`,
/// the largest positive Java `long`. Retry estimates saturate at this value.
pub const MAX_QUANTITY: u64 = i64::MAX as u64;
