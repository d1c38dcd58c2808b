//! The `std` backend: `std`'s own primitives, with a scheduling perturbation point before
//! every lock acquisition and atomic operation.
//!
//! A race between two critical sections (read under one lock, write under another) shows on
//! real threads only when another thread runs in the gap between them, which is a matter of
//! luck on an idle machine. While perturbation is on for a thread (see [`perturbation`]),
//! each point may yield the processor or sleep for a few microseconds, chosen at random, so
//! that other threads run inside such gaps often. The suite turns it on while it runs a
//! concurrency scenario, for the scenario's threads and the threads they spawn through
//! [`thread::spawn`]; everywhere else a point costs one thread-local read.
//!
//! A thread that blocks in a lock, a condition variable or a channel's `recv` records itself
//! for [`waits`](super::waits), so that a hang can be reported as which threads wait on what.
//!
//! The types are `std`'s where nothing is needed (`Arc`, the guards, the senders), and thin
//! wrappers with `std`'s methods otherwise (the atomics are in [`atomic`](super::atomic),
//! shared with the other backends). A thread blocked in a `Barrier`, or in `Once::wait` or
//! `OnceLock::wait`, records itself too; one that waits inside `call_once` or `get_or_init`
//! for another thread's initialization does not.
use std::fmt;
use std::sync::atomic::AtomicU64 as Taker;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{
    BarrierWaitResult, LockResult, OnceState, TryLockError, TryLockResult, WaitTimeoutResult,
};
use std::time::Duration;

use super::waits;

pub use std::sync::{Arc, MutexGuard, RwLockReadGuard, RwLockWriteGuard};

pub mod perturbation;

use perturbation::point;

/// `std::sync::Mutex` with a perturbation point before each acquisition.
#[derive(Default)]
pub struct Mutex<T: ?Sized> {
    /// The thread that took it last ([`waits`] numbering; `0` for none).
    taker: Taker,
    inner: std::sync::Mutex<T>,
}

/// Takes a lock without blocking if `attempt` can, else records the thread as waiting for
/// it (in `what`, on `object`, last taken by `taker`) while `block` waits; then records the
/// calling thread as the lock's last taker.
#[inline(always)]
fn acquire<G>(
    what: &'static str,
    object: usize,
    taker: &Taker,
    attempt: impl FnOnce() -> TryLockResult<G>,
    block: impl FnOnce() -> LockResult<G>,
) -> LockResult<G> {
    point();
    let result = match attempt() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(poisoned)) => Err(poisoned),
        Err(TryLockError::WouldBlock) => wait_for(what, object, taker, block),
    };
    waits::record_taker(taker);
    result
}

/// [`acquire`] when the lock is taken: records the thread as waiting while `block` waits.
#[cold]
#[inline(never)]
fn wait_for<G>(
    what: &'static str,
    object: usize,
    taker: &Taker,
    block: impl FnOnce() -> LockResult<G>,
) -> LockResult<G> {
    let _blocked = waits::blocked(what, object, taker.load(Relaxed));
    block()
}

/// [`acquire`] without blocking: `None` when the lock is taken.
fn try_acquire<G>(taker: &Taker, attempt: impl FnOnce() -> TryLockResult<G>) -> TryLockResult<G> {
    point();
    let result = attempt();
    if !matches!(result, Err(TryLockError::WouldBlock)) {
        waits::record_taker(taker);
    }
    result
}

impl<T> Mutex<T> {
    /// A new mutex holding `value`.
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            taker: Taker::new(0),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the mutex, blocking until it is free.
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        acquire(
            "Mutex::lock",
            waits::address(self),
            &self.taker,
            || self.inner.try_lock(),
            || self.inner.lock(),
        )
    }

    /// Acquires the mutex if it is free.
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        try_acquire(&self.taker, || self.inner.try_lock())
    }

    /// Whether a holder panicked.
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poisoned state (after a panicking holder).
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique reference (no locking needed).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::RwLock` with a perturbation point before each acquisition.
#[derive(Default)]
pub struct RwLock<T: ?Sized> {
    /// The thread that took it last, to read or to write ([`waits`] numbering; `0` for none).
    taker: Taker,
    inner: std::sync::RwLock<T>,
}

impl<T> RwLock<T> {
    /// A new lock holding `value`.
    pub const fn new(value: T) -> RwLock<T> {
        RwLock {
            taker: Taker::new(0),
            inner: std::sync::RwLock::new(value),
        }
    }

    /// The value, consuming the lock.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Acquires shared read access, blocking while a writer holds the lock.
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        acquire(
            "RwLock::read",
            waits::address(self),
            &self.taker,
            || self.inner.try_read(),
            || self.inner.read(),
        )
    }

    /// Acquires exclusive write access, blocking while anyone holds the lock.
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        acquire(
            "RwLock::write",
            waits::address(self),
            &self.taker,
            || self.inner.try_write(),
            || self.inner.write(),
        )
    }

    /// Shared read access if no writer holds the lock.
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        try_acquire(&self.taker, || self.inner.try_read())
    }

    /// Exclusive write access if nobody holds the lock.
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        try_acquire(&self.taker, || self.inner.try_write())
    }

    /// Whether a holder panicked.
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poisoned state (after a panicking holder).
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique reference (no locking needed).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::Condvar`; a waiting thread records itself for [`waits`].
#[derive(Default)]
pub struct Condvar {
    inner: std::sync::Condvar,
}

impl Condvar {
    /// A new condition variable.
    pub const fn new() -> Condvar {
        Condvar {
            inner: std::sync::Condvar::new(),
        }
    }

    /// Releases `guard`'s mutex and blocks until notified (or woken spuriously), then
    /// retakes it.
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let _blocked = waits::blocked("Condvar::wait", waits::address(self), 0);
        self.inner.wait(guard)
    }

    /// [`wait`](Self::wait) until `condition` returns `false`.
    pub fn wait_while<'a, T, F: FnMut(&mut T) -> bool>(
        &self,
        guard: MutexGuard<'a, T>,
        condition: F,
    ) -> LockResult<MutexGuard<'a, T>> {
        let _blocked = waits::blocked("Condvar::wait", waits::address(self), 0);
        self.inner.wait_while(guard, condition)
    }

    /// [`wait`](Self::wait) for at most `timeout`.
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let _blocked = waits::blocked("Condvar::wait", waits::address(self), 0);
        self.inner.wait_timeout(guard, timeout)
    }

    /// [`wait_while`](Self::wait_while) for at most `timeout`.
    pub fn wait_timeout_while<'a, T, F: FnMut(&mut T) -> bool>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
        condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let _blocked = waits::blocked("Condvar::wait", waits::address(self), 0);
        self.inner.wait_timeout_while(guard, timeout, condition)
    }

    /// Wakes one waiting thread.
    pub fn notify_one(&self) {
        point();
        self.inner.notify_one();
    }

    /// Wakes every waiting thread.
    pub fn notify_all(&self) {
        point();
        self.inner.notify_all();
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::Barrier` with a perturbation point before each wait; a waiting thread records
/// itself for [`waits`].
pub struct Barrier {
    inner: std::sync::Barrier,
}

impl Barrier {
    /// A barrier for `n` threads (`0` acts as `1`).
    pub const fn new(n: usize) -> Barrier {
        Barrier {
            inner: std::sync::Barrier::new(n),
        }
    }

    /// Blocks until `n` threads wait here; one of each round is the leader.
    pub fn wait(&self) -> BarrierWaitResult {
        point();
        let _blocked = waits::blocked("Barrier::wait", waits::address(self), 0);
        self.inner.wait()
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::Once` with a perturbation point before each call.
pub struct Once {
    inner: std::sync::Once,
}

impl Once {
    /// A new `Once`, not yet run.
    #[allow(clippy::new_without_default)] // as `std`'s `Once`, which has no `Default`
    pub const fn new() -> Once {
        Once {
            inner: std::sync::Once::new(),
        }
    }

    /// Runs `f` if no initialization has finished yet, else waits for the one running; panics
    /// if an earlier one panicked.
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        point();
        self.inner.call_once(f);
    }

    /// [`call_once`](Self::call_once), running `f` even after an initialization panicked
    /// ([`OnceState::is_poisoned`] says so).
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        point();
        self.inner.call_once_force(f);
    }

    /// Whether an initialization has finished.
    pub fn is_completed(&self) -> bool {
        point();
        self.inner.is_completed()
    }

    /// Blocks until an initialization has finished; panics if one panicked.
    pub fn wait(&self) {
        point();
        if !self.inner.is_completed() {
            let _blocked = waits::blocked("Once::wait", waits::address(self), 0);
            self.inner.wait();
        }
    }

    /// Blocks until an initialization has finished, whatever panicked before.
    pub fn wait_force(&self) {
        point();
        if !self.inner.is_completed() {
            let _blocked = waits::blocked("Once::wait", waits::address(self), 0);
            self.inner.wait_force();
        }
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::OnceLock` with a perturbation point before each access through a shared
/// reference.
#[derive(Clone, PartialEq, Eq)]
pub struct OnceLock<T> {
    inner: std::sync::OnceLock<T>,
}

impl<T> OnceLock<T> {
    /// An empty cell.
    pub const fn new() -> OnceLock<T> {
        OnceLock {
            inner: std::sync::OnceLock::new(),
        }
    }

    /// The value, if the cell is initialized.
    pub fn get(&self) -> Option<&T> {
        point();
        self.inner.get()
    }

    /// The value, through a unique reference.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.inner.get_mut()
    }

    /// Initializes the cell with `value` if it is empty; `Err(value)` if it was not.
    pub fn set(&self, value: T) -> Result<(), T> {
        point();
        self.inner.set(value)
    }

    /// The value, initializing the cell with `f()` if it is empty (waiting while another
    /// thread initializes it). If `f` panics, the panic propagates and the cell stays empty.
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        point();
        self.inner.get_or_init(f)
    }

    /// Blocks until the cell is initialized; the value.
    pub fn wait(&self) -> &T {
        point();
        if let Some(value) = self.inner.get() {
            return value;
        }
        let _blocked = waits::blocked("OnceLock::wait", waits::address(self), 0);
        self.inner.wait()
    }

    /// The value, consuming the cell.
    pub fn into_inner(self) -> Option<T> {
        self.inner.into_inner()
    }

    /// The value, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        self.inner.take()
    }
}

impl<T> Default for OnceLock<T> {
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T> From<T> for OnceLock<T> {
    fn from(value: T) -> OnceLock<T> {
        OnceLock {
            inner: std::sync::OnceLock::from(value),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::LazyLock` with a perturbation point before each use.
pub struct LazyLock<T, F = fn() -> T> {
    inner: std::sync::LazyLock<T, F>,
}

impl<T, F: FnOnce() -> T> LazyLock<T, F> {
    /// A value to be computed by `f` on first use.
    pub const fn new(f: F) -> LazyLock<T, F> {
        LazyLock {
            inner: std::sync::LazyLock::new(f),
        }
    }

    /// The value, computing it first if no thread has (waiting while another thread does);
    /// panics if an earlier computation panicked.
    pub fn force(this: &LazyLock<T, F>) -> &T {
        point();
        std::sync::LazyLock::force(&this.inner)
    }
}

impl<T, F: FnOnce() -> T> std::ops::Deref for LazyLock<T, F> {
    type Target = T;

    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T: Default> Default for LazyLock<T> {
    fn default() -> LazyLock<T> {
        LazyLock::new(T::default)
    }
}

impl<T: fmt::Debug, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `std::sync::mpsc`, whose [`Receiver`](mpsc::Receiver) records a thread blocked in `recv`
/// for [`waits`](super::waits) (an actor's caller waiting for a reply that never comes).
pub mod mpsc {
    use super::waits;
    pub use std::sync::mpsc::{
        RecvError, RecvTimeoutError, SendError, Sender, SyncSender, TryRecvError, TrySendError,
    };
    use std::time::Duration;

    /// A channel: [`std::sync::mpsc::channel`] with this module's [`Receiver`].
    pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
        let (tx, rx) = std::sync::mpsc::channel();
        (tx, Receiver { inner: rx })
    }

    /// A bounded channel: [`std::sync::mpsc::sync_channel`] with this module's [`Receiver`].
    pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(bound);
        (tx, Receiver { inner: rx })
    }

    /// `std::sync::mpsc::Receiver`; a thread blocked in [`recv`](Self::recv) records itself.
    pub struct Receiver<T> {
        inner: std::sync::mpsc::Receiver<T>,
    }

    impl<T> Receiver<T> {
        /// Waits for a value; an error once every sender is gone and the channel is empty.
        pub fn recv(&self) -> Result<T, RecvError> {
            match self.inner.try_recv() {
                Ok(value) => Ok(value),
                Err(TryRecvError::Disconnected) => Err(RecvError),
                Err(TryRecvError::Empty) => {
                    let _blocked = waits::blocked("Receiver::recv", waits::address(self), 0);
                    self.inner.recv()
                }
            }
        }

        /// A value if one is waiting.
        pub fn try_recv(&self) -> Result<T, TryRecvError> {
            self.inner.try_recv()
        }

        /// [`recv`](Self::recv) for at most `timeout`.
        pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
            let _blocked = waits::blocked("Receiver::recv", waits::address(self), 0);
            self.inner.recv_timeout(timeout)
        }

        /// The values, each by [`recv`](Self::recv), until every sender is gone.
        pub fn iter(&self) -> Iter<'_, T> {
            Iter { rx: self }
        }

        /// The values waiting now.
        pub fn try_iter(&self) -> std::sync::mpsc::TryIter<'_, T> {
            self.inner.try_iter()
        }
    }

    impl<T> std::fmt::Debug for Receiver<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.inner.fmt(f)
        }
    }

    /// [`Receiver::iter`].
    #[derive(Debug)]
    pub struct Iter<'a, T> {
        rx: &'a Receiver<T>,
    }

    impl<T> Iterator for Iter<'_, T> {
        type Item = T;
        fn next(&mut self) -> Option<T> {
            self.rx.recv().ok()
        }
    }

    impl<'a, T> IntoIterator for &'a Receiver<T> {
        type Item = T;
        type IntoIter = Iter<'a, T>;
        fn into_iter(self) -> Iter<'a, T> {
            self.iter()
        }
    }

    /// [`Receiver`], by value.
    #[derive(Debug)]
    pub struct IntoIter<T> {
        rx: Receiver<T>,
    }

    impl<T> Iterator for IntoIter<T> {
        type Item = T;
        fn next(&mut self) -> Option<T> {
            self.rx.recv().ok()
        }
    }

    impl<T> IntoIterator for Receiver<T> {
        type Item = T;
        type IntoIter = IntoIter<T>;
        fn into_iter(self) -> IntoIter<T> {
            IntoIter { rx: self }
        }
    }
}

/// `std::thread`, whose [`spawn`](thread::spawn) carries the spawning thread's perturbation
/// to the new one.
pub mod thread {
    pub use std::thread::*;

    /// [`std::thread::spawn`]; when perturbation is on for the caller, it is on for the new
    /// thread too, with a seed of its own, and the new thread is in the caller's
    /// [`waits`](super::super::waits) group.
    pub fn spawn<F, T>(f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let inherited = inheritance();
        if inherited.is_empty() {
            return std::thread::spawn(f);
        }
        std::thread::spawn(move || inherited.run(f))
    }

    /// What [`spawn`] carries from the calling thread to a new one, taken now: perturbation
    /// with a seed of its own and a place in the caller's scenario, and the caller's
    /// [`waits`](super::super::waits) group. [`Inheritance::run`] runs a closure with it on
    /// a thread that already exists (a reused worker), as if that thread had been spawned
    /// here.
    pub fn inheritance() -> Inheritance {
        Inheritance {
            child: super::perturbation::for_child(),
            group: super::waits::group(),
        }
    }

    /// What a spawned thread inherits (see [`inheritance`]).
    #[derive(Debug)]
    pub struct Inheritance {
        child: Option<super::perturbation::Child>,
        group: Option<std::sync::Arc<str>>,
    }

    impl Inheritance {
        /// `true` when there is nothing to carry: perturbation off, and no group.
        pub fn is_empty(&self) -> bool {
            self.child.is_none() && self.group.is_none()
        }

        /// Runs `f` on the calling thread with what was inherited, and restores the thread's
        /// own state afterwards.
        pub fn run<T>(self, f: impl FnOnce() -> T) -> T {
            let _on = self.child.map(super::perturbation::Child::enter);
            let _member = super::waits::rejoin(self.group);
            f()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::atomic::{AtomicU64, Ordering};
    use super::{perturbation, thread, Mutex, RwLock};

    #[test]
    fn perturbation_is_per_thread_inherited_by_spawn_and_ends_with_its_guard() {
        assert!(!perturbation::is_enabled());
        {
            let _on = perturbation::enable(7);
            assert!(perturbation::is_enabled());
            let child = thread::spawn(perturbation::is_enabled);
            assert_eq!(child.join().ok(), Some(true));
            let other = std::thread::spawn(perturbation::is_enabled);
            assert_eq!(
                other.join().ok(),
                Some(false),
                "std's own spawn carries nothing"
            );
        }
        assert!(!perturbation::is_enabled());
        let child = thread::spawn(perturbation::is_enabled);
        assert_eq!(child.join().ok(), Some(false));
    }

    #[test]
    fn the_wrappers_behave_as_std_with_perturbation_on() {
        let _on = perturbation::enable(11);
        let counter = std::sync::Arc::new(Mutex::new(0u64));
        let total = std::sync::Arc::new(AtomicU64::new(0));
        let readers = std::sync::Arc::new(RwLock::new(5u64));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (counter, total, readers) = (
                    std::sync::Arc::clone(&counter),
                    std::sync::Arc::clone(&total),
                    std::sync::Arc::clone(&readers),
                );
                thread::spawn(move || {
                    for _ in 0..250 {
                        *counter.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                        total.fetch_add(2, Ordering::SeqCst);
                        assert_eq!(*readers.read().unwrap_or_else(|p| p.into_inner()), 5);
                    }
                })
            })
            .collect();
        for handle in handles {
            assert!(handle.join().is_ok());
        }
        assert_eq!(*counter.lock().unwrap_or_else(|p| p.into_inner()), 1000);
        assert_eq!(total.load(Ordering::SeqCst), 2000);
        assert_eq!(
            total.compare_exchange(2000, 1, Ordering::SeqCst, Ordering::SeqCst),
            Ok(2000)
        );
        assert_eq!(total.fetch_max(9, Ordering::SeqCst), 1);
        assert_eq!(total.load(Ordering::SeqCst), 9);
        assert_eq!(AtomicU64::new(3).into_inner(), 3);
    }
}
