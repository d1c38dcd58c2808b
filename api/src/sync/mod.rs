//! Synchronization primitives for designs, mirroring `std`'s paths.
//!
//! Designs written against `ratelimit_lab::sync` run unchanged under three backends:
//!
//! | build                                 | backend                          |
//! |---------------------------------------|----------------------------------|
//! | `RUSTFLAGS="--cfg loom"`              | `loom` (exhaustive exploration)  |
//! | cargo feature `shuttle`               | `shuttle` (randomized scheduler) |
//! | otherwise                             | `std`, perturbed while the suite explores |
//!
//! Each backend offers the same names: `Arc`, `Mutex` (and `MutexGuard`), `RwLock` (and its
//! guards), `Condvar`, the `atomic` types, `mpsc` channels (for an actor design: one owner
//! thread behind a channel) and `thread`.
//!
//! One difference to know: under loom, `Receiver::recv` does not return an error when every
//! `Sender` is gone; it waits, and loom reports a deadlock. An owner thread that waits for its
//! inbox to close never ends there: stop it with a message of its own (say, from `Drop`).
//! Loom also allows five threads per execution in all: the suite reruns a sequential check
//! that runs out of them with each instance in an execution of its own, and keeps its
//! concurrent scenarios to three threads, so a design may spawn one thread per instance.
//!
//! Under `std` the locks and atomics are `std`'s behind thin wrappers with `std`'s methods: a
//! perturbation point before each acquisition and atomic operation lets the suite shake the
//! schedule of a concurrency scenario on real threads (see `perturbation`); outside a
//! scenario it costs one thread-local read. A thread blocked in a lock or a `Condvar` records
//! what it waits on (see `waits`), so that a hang is reported as which threads wait; loom and
//! shuttle report a deadlock themselves.
//!
//! The switch is `cfg(loom)` and the feature, not `cfg(test)`: `cfg(test)` is off when a
//! learner's crate builds this one as a dependency.

#[cfg(loom)]
pub use loom::{
    sync::{
        atomic, mpsc, Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
    thread,
};

#[cfg(all(not(loom), feature = "shuttle"))]
pub use shuttle::{
    sync::{
        atomic, mpsc, Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
    thread,
};

#[cfg(all(not(loom), not(feature = "shuttle")))]
mod perturbed;
#[cfg(all(not(loom), not(feature = "shuttle")))]
pub mod waits;
#[cfg(all(not(loom), not(feature = "shuttle")))]
pub use perturbed::{
    atomic, mpsc, perturbation, thread, Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard,
    RwLockWriteGuard,
};
