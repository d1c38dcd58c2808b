//! Correct designs built differently from the reference `TokenBucket`: the
//! conformance suite must accept each of them.

mod rwlock_bucket;
pub use rwlock_bucket::RwLockBucket;

mod sharded_locks;
pub use sharded_locks::ShardedLocks;

mod lazy_migration;
pub use lazy_migration::LazyMigration;

mod checked_u64_bucket;
pub use checked_u64_bucket::CheckedU64Bucket;

mod owner_thread;
pub use owner_thread::OwnerThread;

mod gcra_bucket;
pub use gcra_bucket::GcraBucket;

mod observed_time_snapshot;
pub use observed_time_snapshot::ObservedTimeSnapshot;

/// Random sequential histories compared with the reference, for the designs' own tests.
#[cfg(all(test, not(loom), not(feature = "shuttle")))]
pub(crate) mod differential;
