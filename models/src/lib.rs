//! The executable specification of the Rate Limiter contract.
//!
//! [`Model`] is a sequential, pure "state in → state out" description of a limiter, written
//! straight from the seed's equations with arbitrary-precision integers:
//!
//! ```text
//! refill(b, t) = min(capacity × 10⁹, b.units + (t − b.last) × tokens_per_second)
//! allowed      = refill ≥ cost × 10⁹
//! retry        = ⌈(cost × 10⁹ − balance) / tokens_per_second⌉, at most i64::MAX
//! ```
//!
//! It shares no arithmetic with the reference designs: agreement between two independent
//! derivations is what makes a passing comparison mean something. It is slow on purpose
//! (every step allocates big integers) and is never used to admit real traffic.
//!
//! The [`Op`] / [`Outcome`] vocabulary (serde) is what the suite, the fixtures and the CLI
//! speak: a [`Trace`] is a policy, a key bound and a list of operations.
#![deny(missing_docs, missing_debug_implementations)]

mod limiter;
mod op;
pub mod same_state;
mod state;
mod trace;

pub use limiter::ModelLimiter;
pub use op::{Op, Outcome, ShownKey, ShownKeys};
pub use state::{Model, ModelBucket};
pub use trace::Trace;
