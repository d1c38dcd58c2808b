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
//! wrappers with `std`'s methods otherwise.
use std::fmt;
use std::sync::atomic::AtomicU64 as Taker;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{LockResult, TryLockError, TryLockResult, WaitTimeoutResult};
use std::time::Duration;

use super::waits;

pub use std::sync::{Arc, MutexGuard, RwLockReadGuard, RwLockWriteGuard};

/// Switching perturbation on and off for the current thread.
pub mod perturbation {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    /// Whether any thread of this process has ever switched perturbation on. Until one does
    /// (a process that only uses the designs, not the suite), a perturbation point is one
    /// relaxed load of this flag, with no thread-local access.
    static EVER_ENABLED: AtomicBool = AtomicBool::new(false);

    std::thread_local! {
        /// The state of this thread's random choices; `0` while perturbation is off.
        static STATE: Cell<u64> = const { Cell::new(0) };
    }

    /// Perturbation on for the current thread (and the threads it spawns through the
    /// facade) until the guard is dropped; `seed` varies the random choices.
    #[must_use = "perturbation ends when the guard is dropped"]
    pub fn enable(seed: u64) -> Enabled {
        EVER_ENABLED.store(true, Ordering::Relaxed);
        let before = STATE.with(|s| s.replace(seed | 1));
        Enabled { before }
    }

    /// Perturbation stays on while this is alive (see [`enable`]).
    #[derive(Debug)]
    pub struct Enabled {
        before: u64,
    }

    impl Drop for Enabled {
        fn drop(&mut self) {
            STATE.with(|s| s.set(self.before));
        }
    }

    /// `true` while perturbation is on for the current thread.
    pub fn is_enabled() -> bool {
        STATE.with(Cell::get) != 0
    }

    /// A seed for a thread spawned now, when perturbation is on; `None` when it is off.
    pub(super) fn seed_for_child() -> Option<u64> {
        STATE.with(|s| {
            let x = s.get();
            (x != 0).then(|| {
                let next = step(x);
                s.set(next);
                next ^ 0x9e37_79b9_7f4a_7c15
            })
        })
    }

    /// xorshift64: the next state, never `0` for a state that is not `0`.
    fn step(mut x: u64) -> u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }

    /// A perturbation point: when perturbation is on, one time in four yields the processor
    /// (another runnable thread goes first), one in eight spins for up to a few
    /// microseconds (the thread on the other core runs ahead) and one in thirty-two sleeps
    /// for about 50 µs (long enough for another thread to run whole calls); otherwise
    /// nothing.
    #[inline(always)]
    pub(super) fn point() {
        if EVER_ENABLED.load(Ordering::Relaxed) {
            perturb();
        }
    }

    /// [`point`] once some thread has switched perturbation on: this thread's choice.
    #[cold]
    #[inline(never)]
    fn perturb() {
        let x = STATE.with(Cell::get);
        if x == 0 {
            return;
        }
        let next = step(x);
        STATE.with(|s| s.set(next));
        match next % 32 {
            0..=7 => std::thread::yield_now(),
            8..=11 => {
                for _ in 0..(next >> 8) % 4096 {
                    std::hint::spin_loop();
                }
            }
            12 => std::thread::sleep(Duration::from_micros(1 + (next >> 8) % 50)),
            _ => {}
        }
    }
}

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

/// `std::sync::atomic`, with a perturbation point before each operation on a shared atomic.
pub mod atomic {
    use super::point;
    pub use std::sync::atomic::{compiler_fence, fence, Ordering};

    /// Each operation: a perturbation point, then `std`'s operation of the same name.
    macro_rules! perturbed {
        ($( $(#[$doc:meta])* fn $op:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {$(
            $(#[$doc])*
            pub fn $op(&self $(, $arg: $ty)*) -> $ret {
                point();
                self.inner.$op($($arg),*)
            }
        )*};
    }

    /// The type, construction, and the operations every atomic has (`bool` and integers).
    macro_rules! atomic {
        ($($name:ident $value:ty;)*) => {$(
            #[doc = concat!("`std::sync::atomic::", stringify!($name), "` with a perturbation point before each operation.")]
            #[derive(Default)]
            pub struct $name {
                inner: std::sync::atomic::$name,
            }

            impl $name {
                /// A new atomic holding `value`.
                pub const fn new(value: $value) -> Self {
                    Self { inner: std::sync::atomic::$name::new(value) }
                }
                /// The value, consuming the atomic.
                pub fn into_inner(self) -> $value {
                    self.inner.into_inner()
                }
                /// The value, through a unique reference.
                pub fn get_mut(&mut self) -> &mut $value {
                    self.inner.get_mut()
                }
                /// Applies `f` until it succeeds or returns `None`; returns the previous value.
                pub fn fetch_update<F: FnMut($value) -> Option<$value>>(&self, set: Ordering, fetch: Ordering, f: F) -> Result<$value, $value> {
                    point();
                    self.inner.fetch_update(set, fetch, f)
                }
                perturbed! {
                    /// Loads the value.
                    fn load(&self, order: Ordering) -> $value;
                    /// Stores `value`.
                    fn store(&self, value: $value, order: Ordering) -> ();
                    /// Stores `value`, returning the previous value.
                    fn swap(&self, value: $value, order: Ordering) -> $value;
                    /// Stores `new` if the value is `current`; returns the previous value.
                    fn compare_exchange(&self, current: $value, new: $value, success: Ordering, failure: Ordering) -> Result<$value, $value>;
                    /// `compare_exchange` that may fail spuriously.
                    fn compare_exchange_weak(&self, current: $value, new: $value, success: Ordering, failure: Ordering) -> Result<$value, $value>;
                    /// Bitwise (logical for `bool`) and; returns the previous value.
                    fn fetch_and(&self, value: $value, order: Ordering) -> $value;
                    /// Bitwise (logical for `bool`) or; returns the previous value.
                    fn fetch_or(&self, value: $value, order: Ordering) -> $value;
                    /// Bitwise (logical for `bool`) xor; returns the previous value.
                    fn fetch_xor(&self, value: $value, order: Ordering) -> $value;
                    /// Bitwise (logical for `bool`) nand; returns the previous value.
                    fn fetch_nand(&self, value: $value, order: Ordering) -> $value;
                }
            }

            impl From<$value> for $name {
                fn from(value: $value) -> Self {
                    Self::new(value)
                }
            }

            impl std::fmt::Debug for $name {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    self.inner.fmt(f)
                }
            }
        )*};
    }

    /// The arithmetic only the integer atomics have.
    macro_rules! arithmetic {
        ($($name:ident $value:ty;)*) => {$(
            impl $name {
                perturbed! {
                    /// Adds, wrapping; returns the previous value.
                    fn fetch_add(&self, value: $value, order: Ordering) -> $value;
                    /// Subtracts, wrapping; returns the previous value.
                    fn fetch_sub(&self, value: $value, order: Ordering) -> $value;
                    /// Stores the maximum; returns the previous value.
                    fn fetch_max(&self, value: $value, order: Ordering) -> $value;
                    /// Stores the minimum; returns the previous value.
                    fn fetch_min(&self, value: $value, order: Ordering) -> $value;
                }
            }
        )*};
    }

    atomic! {
        AtomicBool bool;
        AtomicU8 u8; AtomicU16 u16; AtomicU32 u32; AtomicU64 u64; AtomicUsize usize;
        AtomicI8 i8; AtomicI16 i16; AtomicI32 i32; AtomicI64 i64; AtomicIsize isize;
    }

    arithmetic! {
        AtomicU8 u8; AtomicU16 u16; AtomicU32 u32; AtomicU64 u64; AtomicUsize usize;
        AtomicI8 i8; AtomicI16 i16; AtomicI32 i32; AtomicI64 i64; AtomicIsize isize;
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
        let seed = super::perturbation::seed_for_child();
        let group = super::waits::group();
        if seed.is_none() && group.is_none() {
            return std::thread::spawn(f);
        }
        std::thread::spawn(move || {
            let _on = seed.map(super::perturbation::enable);
            let _member = super::waits::rejoin(group);
            f()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::atomic::{AtomicU64, Ordering};
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
