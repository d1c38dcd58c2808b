//! The suite run the way a learner runs it: one macro line per design. The reference, the
//! specification itself and every correct alternative must pass every check.
use ratelimit_lab_catalog::alternatives::{
    CheckedU64Bucket, LazyMigration, OwnerThread, RwLockBucket, ShardedLocks,
};
use ratelimit_lab_model::ModelLimiter;
use ratelimit_lab_reference::TokenBucket;

ratelimit_lab::conformance_suite!(reference => TokenBucket);
ratelimit_lab::conformance_suite!(specification => ModelLimiter);
ratelimit_lab::conformance_suite!(rwlock => RwLockBucket);
ratelimit_lab::conformance_suite!(lazy_migration => LazyMigration);
ratelimit_lab::conformance_suite!(sharded_locks => ShardedLocks);
ratelimit_lab::conformance_suite!(checked_u64 => CheckedU64Bucket);
ratelimit_lab::conformance_suite!(owner_thread => OwnerThread);
