//! The seed's contract with the key space split into independently locked shards, for
//! admissions that scale with threads.
//!
//! Two designs share one shard table ([`SHARDS`] maps of buckets, each behind its own
//! `Mutex` with its own copy of the policy in force, and the key count behind a lock of its
//! own, taken only by the calls that can change it or must see it exactly: a new key's
//! `allow`, `evict_full`, `key_count`, `snapshot`). They differ in where a call's time comes
//! from, and so in what they must share:
//!
//! - [`ShardedBucket`] implements [`Limiter`](ratelimit_lab_api::Limiter): every call is
//!   given its time, which must not be below any earlier call's, so it keeps one observed
//!   time for all shards.
//! - [`ClockedShardedBucket`] reads its own clock inside each call's boundary, after taking
//!   the call's locks: readings then reach the shards in time order, and each shard keeps
//!   its own observed time, with no memory written by every call.
//!
//! Each type's docs prove that every call is one indivisible decision.
//!
//! # Arithmetic
//!
//! The reference's (the crate's `arithmetic` module, with its bounds).
mod clocked;
mod given;
mod table;

pub use clocked::ClockedShardedBucket;
pub use given::ShardedBucket;
pub use table::SHARDS;
