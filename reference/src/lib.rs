//! Reference designs.
//!
//! - [`TokenBucket`]: the seed's single-owner design, exact in `u128` fixed point.
//! - [`ShardedBucket`]: the same contract with keys in independently locked shards, for
//!   admissions that scale with threads; [`ClockedShardedBucket`], the same shards reading
//!   their own clock inside each call's boundary, with no lock shared by every call.
//! - [`FixedWindow`] and [`SlidingLog`]: baselines with *different* contracts, kept to show
//!   what a token bucket is not.
//! - [`Clock`], [`MonotonicClock`], [`ManualClock`] and [`Clocked`]: real time for a limiter,
//!   sampled inside the admission boundary so that samples can never arrive out of order.
//!
//! Correct designs built differently, and deliberately wrong ones, live in the catalog crate
//! (`ratelimit-lab-catalog`), which depends on the contract alone.
#![deny(missing_docs, missing_debug_implementations)]

mod arithmetic;
mod clock;
mod clocked;
mod fixed_window;
mod sharded;
mod sliding_log;
mod token_bucket;

pub use clock::{Clock, ManualClock, MonotonicClock};
pub use clocked::Clocked;
pub use fixed_window::FixedWindow;
pub use sharded::{ClockedShardedBucket, ShardedBucket, SHARDS};
pub use sliding_log::SlidingLog;
pub use token_bucket::TokenBucket;
