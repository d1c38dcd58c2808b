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
//! Each backend offers `std::sync`'s names, with their stable methods as of Rust 1.88 (this
//! workspace's `rust-version`), so that one design builds under all three:
//!
//! | name                                        | std (perturbed)   | shuttle            | loom               |
//! |---------------------------------------------|-------------------|--------------------|--------------------|
//! | `Arc`                                       | `std`'s           | shuttle's (`std`'s)| loom's             |
//! | `Weak`                                      | `std`'s           | shuttle's (`std`'s)| compile error¹     |
//! | `Mutex`, `MutexGuard`                       | wrapped `std`     | shuttle's          | loom's²            |
//! | `RwLock`, `RwLockReadGuard`, `RwLockWriteGuard` | wrapped `std` | shuttle's          | loom's²            |
//! | `Condvar`, `WaitTimeoutResult`              | wrapped `std`     | shuttle's          | loom's, + `wait_while`, `wait_timeout_while` (no timeouts) |
//! | `Barrier`, `BarrierWaitResult`              | wrapped `std`     | shuttle's          | built³             |
//! | `Once`, `OnceState`                         | wrapped `std`     | shuttle's (no `wait`, `wait_force`) | built³ |
//! | `OnceLock`                                  | wrapped `std`     | built³             | built³             |
//! | `LazyLock`                                  | wrapped `std`     | built³             | built³             |
//! | `LockResult`, `TryLockResult`, `PoisonError`, `TryLockError` | `std`'s | `std`'s  | `std`'s            |
//! | `atomic`: every type of `std`, `AtomicPtr` included, with `std`'s methods | [`atomic`] | [`atomic`] (no `as_ptr`, `from_ptr`¹) | [`atomic`] (no `as_ptr`, `from_ptr`, `get_mut`¹; no `const fn new`) |
//! | `mpsc` (`channel`, `Sender`, `Receiver`)     | wrapped `std`     | shuttle's          | loom's (`channel` only) |
//! | `thread`                                    | `std`'s, `spawn` wrapped | shuttle's   | loom's             |
//!
//! ¹ The name exists, and using it is a compile error whose message says why (see
//! `unavailable`): a raw pointer or a plain `&mut` would reach an atomic's value behind the
//! model's back, and loom's `Arc` keeps no weak count.
//! ² Loom's locks have no `is_poisoned` or `clear_poison` (shuttle's have `clear_poison` but
//! not `is_poisoned`): a panic ends a loom or shuttle execution as a failure anyway.
//! ³ Built from that backend's `Mutex`, `Condvar` and atomics, so that the model explores it
//! too (see `modeled`). They have no `const fn new`, so under loom and shuttle they cannot
//! be `static`s (nor can loom's atomics and locks): a `static` would outlive the execution
//! that initialized it, and the next one would find it initialized. Keep such a value in
//! the design, or create it inside the test body; under `std` a `static` works as usual.
//!
//! Not offered in any backend: what `std` marks unstable, stabilized after 1.88, or
//! deprecated, so that a design using it fails under every backend alike.
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

pub mod atomic;
#[cfg(any(loom, feature = "shuttle"))]
mod modeled;
#[cfg(any(loom, feature = "shuttle"))]
pub mod unavailable;

pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

#[cfg(loom)]
pub use loom::{
    sync::{mpsc, Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard},
    thread,
};
#[cfg(loom)]
pub use modeled::{
    Barrier, BarrierWaitResult, Condvar, LazyLock, Once, OnceLock, OnceState, WaitTimeoutResult,
    Weak,
};

#[cfg(all(not(loom), feature = "shuttle"))]
pub use modeled::{LazyLock, OnceLock};
#[cfg(all(not(loom), feature = "shuttle"))]
pub use shuttle::{
    sync::{
        mpsc, Arc, Barrier, BarrierWaitResult, Condvar, Mutex, MutexGuard, Once, OnceState, RwLock,
        RwLockReadGuard, RwLockWriteGuard, WaitTimeoutResult, Weak,
    },
    thread,
};

#[cfg(all(not(loom), not(feature = "shuttle")))]
mod perturbed;
#[cfg(all(not(loom), not(feature = "shuttle")))]
pub mod waits;
#[cfg(all(not(loom), not(feature = "shuttle")))]
pub use perturbed::{
    mpsc, perturbation, thread, Arc, Barrier, Condvar, LazyLock, Mutex, MutexGuard, Once, OnceLock,
    RwLock, RwLockReadGuard, RwLockWriteGuard,
};
#[cfg(all(not(loom), not(feature = "shuttle")))]
pub use std::sync::{BarrierWaitResult, OnceState, WaitTimeoutResult, Weak};
