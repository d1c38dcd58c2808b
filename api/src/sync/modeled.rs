//! What loom or shuttle lacks of `std::sync`, built from that backend's own `Mutex`,
//! `Condvar` and atomics, so that the model explores it like any other code.
//!
//! - [`OnceLock`] and [`LazyLock`] (neither backend has them), on [`Once`];
//! - [`Once`] and [`OnceState`] (loom has none; shuttle's own are the facade's there);
//! - `Barrier` and `BarrierWaitResult` under loom, whose `Barrier` is a stub that panics
//!   (shuttle's own are the facade's there);
//! - `Condvar` and `WaitTimeoutResult` under loom, whose `Condvar` has no `wait_while`
//!   or `wait_timeout_while`;
//! - `Weak` under loom: a type whose every use is a compile error that says why.
//!
//! None of them has a `const fn new`: a value in a `static` would outlive the execution that
//! initialized it, so that the next execution (loom and shuttle run the test body many times
//! in one process) would find it initialized, and tests running at once would share it.
//! Under these backends such a value lives in the design (or in the test body), and a
//! `static` of one does not compile.
use std::cell::UnsafeCell;
use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::PoisonError;

#[cfg(all(not(loom), feature = "shuttle"))]
use shuttle::sync as backend;

#[cfg(loom)]
use loom::sync as backend;

use backend::atomic::{AtomicBool, Ordering};

/// The states of a [`Once`], kept under its mutex.
const INCOMPLETE: u8 = 0;
/// An initialization runs (without holding the mutex).
const RUNNING: u8 = 1;
/// An initialization panicked.
const POISONED: u8 = 2;
/// An initialization finished.
const COMPLETE: u8 = 3;

/// `std::sync::Once`, from the backend's `Mutex`, `Condvar` and `AtomicBool`: one
/// initialization, which every other caller waits for.
pub struct Once {
    /// `true` once an initialization finished; read with `Acquire` on the fast path.
    complete: AtomicBool,
    /// One of `INCOMPLETE`, `RUNNING`, `POISONED`, `COMPLETE`.
    state: backend::Mutex<u8>,
    /// Notified when the state leaves `RUNNING`.
    changed: backend::Condvar,
}

// Under shuttle, only `OnceLock` and `LazyLock` use it: the facade's `Once` is shuttle's.
#[cfg_attr(not(loom), allow(dead_code))]
impl Once {
    /// A new `Once`, not yet run (not a `const fn`: see the module docs).
    #[allow(clippy::new_without_default)] // as `std`'s `Once`, which has no `Default`
    pub fn new() -> Once {
        Once {
            complete: AtomicBool::new(false),
            state: backend::Mutex::new(INCOMPLETE),
            changed: backend::Condvar::new(),
        }
    }

    /// Runs `f` if no initialization has finished yet, else waits for the one running; panics
    /// if an earlier one panicked.
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        if !self.is_completed() {
            self.run(false, "Once instance has previously been poisoned", |_| f());
        }
    }

    /// [`call_once`](Self::call_once), running `f` even after an initialization panicked
    /// ([`OnceState::is_poisoned`] says so).
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        if !self.is_completed() {
            self.run(true, "", f);
        }
    }

    /// Whether an initialization has finished.
    pub fn is_completed(&self) -> bool {
        self.complete.load(Ordering::Acquire)
    }

    /// Blocks until an initialization has finished; panics if one panicked.
    pub fn wait(&self) {
        self.wait_until_complete(false);
    }

    /// Blocks until an initialization has finished, whatever panicked before.
    pub fn wait_force(&self) {
        self.wait_until_complete(true);
    }

    fn lock(&self) -> backend::MutexGuard<'_, u8> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` unless an initialization finished (waiting while one runs); panics with
    /// `poisoned` after a panicked one unless `force`.
    fn run(&self, force: bool, poisoned: &str, f: impl FnOnce(&OnceState)) {
        let mut state = self.lock();
        loop {
            match *state {
                COMPLETE => return,
                RUNNING => {
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                POISONED if !force => {
                    drop(state);
                    panic!("{poisoned}");
                }
                _ => break,
            }
        }
        let was_poisoned = *state == POISONED;
        *state = RUNNING;
        drop(state);
        let mut ending = Ending {
            once: self,
            to: POISONED,
        };
        f(&OnceState {
            poisoned: was_poisoned,
        });
        ending.to = COMPLETE;
    }

    fn wait_until_complete(&self, force: bool) {
        if self.is_completed() {
            return;
        }
        let mut state = self.lock();
        loop {
            match *state {
                COMPLETE => return,
                POISONED if !force => {
                    drop(state);
                    panic!("Once instance has previously been poisoned");
                }
                _ => {
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

/// The end of an initialization: `COMPLETE` when it returned, `POISONED` when it panicked.
struct Ending<'a> {
    once: &'a Once,
    to: u8,
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        let mut state = self.once.lock();
        *state = self.to;
        if self.to == COMPLETE {
            self.once.complete.store(true, Ordering::Release);
        }
        drop(state);
        self.once.changed.notify_all();
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Once").finish_non_exhaustive()
    }
}

/// `std::sync::OnceState`: what [`Once::call_once_force`] tells its closure.
#[derive(Debug)]
#[cfg_attr(not(loom), allow(dead_code))]
pub struct OnceState {
    poisoned: bool,
}

#[cfg_attr(not(loom), allow(dead_code))]
impl OnceState {
    /// Whether an earlier initialization panicked.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

/// `std::sync::OnceLock`, on this module's `Once`: a cell written once, by the first caller of
/// [`get_or_init`](Self::get_or_init) or [`set`](Self::set).
pub struct OnceLock<T> {
    once: Once,
    /// `Some` once `once` completed; written only by the initializing thread before that.
    value: UnsafeCell<Option<T>>,
}

// SAFETY: as `std`'s: the value is written once, by one thread, before `once` completes, and
// only read after; a `&OnceLock` moves a `T` between threads (`set`), hence `T: Send`.
unsafe impl<T: Sync + Send> Sync for OnceLock<T> {}

impl<T: RefUnwindSafe + UnwindSafe> RefUnwindSafe for OnceLock<T> {}
impl<T: UnwindSafe> UnwindSafe for OnceLock<T> {}

impl<T> OnceLock<T> {
    /// An empty cell (not a `const fn`: see the module docs).
    pub fn new() -> OnceLock<T> {
        OnceLock {
            once: Once::new(),
            value: UnsafeCell::new(None),
        }
    }

    /// The value, if the cell is initialized.
    pub fn get(&self) -> Option<&T> {
        if self.once.is_completed() {
            // SAFETY: written before `once` completed (which the `Acquire` load saw) and never
            // again through a shared reference.
            unsafe { (*self.value.get()).as_ref() }
        } else {
            None
        }
    }

    /// The value, through a unique reference.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut().as_mut()
    }

    /// Initializes the cell with `value` if it is empty; `Err(value)` if it was not.
    pub fn set(&self, value: T) -> Result<(), T> {
        let mut value = Some(value);
        self.get_or_init(|| match value.take() {
            Some(value) => value,
            None => unreachable!("an initialization runs once"),
        });
        match value {
            None => Ok(()),
            Some(value) => Err(value),
        }
    }

    /// The value, initializing the cell with `f()` if it is empty (waiting while another
    /// thread initializes it). If `f` panics, the panic propagates and the cell stays empty.
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        if let Some(value) = self.get() {
            return value;
        }
        self.once.call_once_force(|_| {
            let value = f();
            // SAFETY: only the initializing thread writes, before `once` completes; no reader
            // looks before that.
            unsafe { *self.value.get() = Some(value) };
        });
        match self.get() {
            Some(value) => value,
            None => unreachable!("`call_once_force` returns once the cell is initialized"),
        }
    }

    /// Blocks until the cell is initialized; the value.
    pub fn wait(&self) -> &T {
        self.once.wait_force();
        match self.get() {
            Some(value) => value,
            None => unreachable!("`wait_force` returns once the cell is initialized"),
        }
    }

    /// The value, consuming the cell.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
    }

    /// The value, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        std::mem::take(self).into_inner()
    }
}

impl<T> Default for OnceLock<T> {
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T> From<T> for OnceLock<T> {
    fn from(value: T) -> OnceLock<T> {
        let cell = OnceLock::new();
        let _ = cell.set(value);
        cell
    }
}

impl<T: Clone> Clone for OnceLock<T> {
    fn clone(&self) -> OnceLock<T> {
        let cell = OnceLock::new();
        if let Some(value) = self.get() {
            let _ = cell.set(value.clone());
        }
        cell
    }
}

impl<T: PartialEq> PartialEq for OnceLock<T> {
    fn eq(&self, other: &OnceLock<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceLock<T> {}

impl<T: fmt::Debug> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("OnceLock");
        match self.get() {
            Some(value) => d.field(value),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}

/// `std::sync::LazyLock`, on this module's `Once`: a value computed by `F` on first use.
pub struct LazyLock<T, F = fn() -> T> {
    once: Once,
    /// Taken by the initializing thread.
    init: UnsafeCell<Option<F>>,
    /// `Some` once `once` completed.
    value: UnsafeCell<Option<T>>,
}

// SAFETY: as `std`'s: `init` is taken and `value` written by one thread before `once`
// completes, and `value` only read after.
unsafe impl<T: Sync + Send, F: Send> Sync for LazyLock<T, F> {}

impl<T: RefUnwindSafe + UnwindSafe, F: UnwindSafe> RefUnwindSafe for LazyLock<T, F> {}
impl<T: UnwindSafe, F: UnwindSafe> UnwindSafe for LazyLock<T, F> {}

impl<T, F: FnOnce() -> T> LazyLock<T, F> {
    /// A value to be computed by `f` on first use (not a `const fn`: see the module docs).
    pub fn new(f: F) -> LazyLock<T, F> {
        LazyLock {
            once: Once::new(),
            init: UnsafeCell::new(Some(f)),
            value: UnsafeCell::new(None),
        }
    }

    /// The value, computing it first if no thread has (waiting while another thread does);
    /// panics if an earlier computation panicked.
    pub fn force(this: &LazyLock<T, F>) -> &T {
        if !this.once.is_completed() {
            this.once.run(
                false,
                "LazyLock instance has previously been poisoned",
                |_| {
                    // SAFETY: only the initializing thread touches `init` and `value`, before
                    // `once` completes.
                    let init = unsafe { (*this.init.get()).take() };
                    let value = match init {
                        Some(init) => init(),
                        None => unreachable!("a panicked initialization poisons the `Once`"),
                    };
                    // SAFETY: as above.
                    unsafe { *this.value.get() = Some(value) };
                },
            );
        }
        // SAFETY: written before `once` completed, never again through a shared reference.
        match unsafe { (*this.value.get()).as_ref() } {
            Some(value) => value,
            None => unreachable!("`run` returns once the value is computed"),
        }
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
        let mut d = f.debug_tuple("LazyLock");
        if self.once.is_completed() {
            // SAFETY: written before `once` completed, never again through a shared reference.
            match unsafe { (*self.value.get()).as_ref() } {
                Some(value) => d.field(value),
                None => d.field(&format_args!("<uninit>")),
            };
        } else {
            d.field(&format_args!("<uninit>"));
        }
        d.finish()
    }
}

#[cfg(loom)]
pub use loom_barrier::{Barrier, BarrierWaitResult};

/// `Barrier` under loom, whose own is a stub that panics.
#[cfg(loom)]
mod loom_barrier {
    use std::fmt;
    use std::sync::PoisonError;

    use loom::sync as backend;

    /// `std::sync::Barrier`, from the backend's `Mutex` and `Condvar`: `n` threads wait until
    /// all of them have arrived.
    pub struct Barrier {
        state: backend::Mutex<BarrierState>,
        all_in: backend::Condvar,
        threads: usize,
    }

    /// How many threads wait now, and which round they wait in.
    struct BarrierState {
        waiting: usize,
        generation: u64,
    }

    impl Barrier {
        /// A barrier for `n` threads (as `std`'s, `0` acts as `1`; not a `const fn`: see the
        /// module docs).
        pub fn new(n: usize) -> Barrier {
            Barrier {
                state: backend::Mutex::new(BarrierState {
                    waiting: 0,
                    generation: 0,
                }),
                all_in: backend::Condvar::new(),
                threads: n,
            }
        }

        /// Blocks until `n` threads wait here; one of each round is the leader.
        pub fn wait(&self) -> BarrierWaitResult {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let generation = state.generation;
            state.waiting += 1;
            if state.waiting < self.threads {
                while state.generation == generation {
                    state = self
                        .all_in
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                BarrierWaitResult { is_leader: false }
            } else {
                state.waiting = 0;
                state.generation = state.generation.wrapping_add(1);
                drop(state);
                self.all_in.notify_all();
                BarrierWaitResult { is_leader: true }
            }
        }
    }

    impl fmt::Debug for Barrier {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Barrier").finish_non_exhaustive()
        }
    }

    /// `std::sync::BarrierWaitResult`: what [`Barrier::wait`] returns.
    #[derive(Debug)]
    pub struct BarrierWaitResult {
        is_leader: bool,
    }

    impl BarrierWaitResult {
        /// Whether this thread is its round's leader (one per round).
        pub fn is_leader(&self) -> bool {
            self.is_leader
        }
    }
}

#[cfg(loom)]
pub use loom_only::{Condvar, WaitTimeoutResult, Weak};

/// What only loom lacks.
#[cfg(loom)]
mod loom_only {
    use std::fmt;
    use std::marker::PhantomData;
    use std::sync::{LockResult, PoisonError};
    use std::time::Duration;

    use loom::sync::{Arc, MutexGuard};

    use super::super::unavailable;

    /// `std::sync::Condvar`: loom's, with the `wait_while` and `wait_timeout_while` loom lacks.
    /// Loom has no clock: a timed wait never times out.
    #[derive(Debug, Default)]
    pub struct Condvar {
        inner: loom::sync::Condvar,
    }

    /// `std::sync::WaitTimeoutResult`: whether a timed wait timed out (never, under loom).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct WaitTimeoutResult(bool);

    impl WaitTimeoutResult {
        /// Whether the wait timed out.
        pub fn timed_out(&self) -> bool {
            self.0
        }
    }

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Condvar {
            Condvar {
                inner: loom::sync::Condvar::new(),
            }
        }

        /// Releases `guard`'s mutex and blocks until notified (or woken spuriously), then
        /// retakes it.
        #[track_caller]
        pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
            self.inner.wait(guard)
        }

        /// [`wait`](Self::wait) until `condition` returns `false`.
        #[track_caller]
        pub fn wait_while<'a, T, F: FnMut(&mut T) -> bool>(
            &self,
            mut guard: MutexGuard<'a, T>,
            mut condition: F,
        ) -> LockResult<MutexGuard<'a, T>> {
            while condition(&mut *guard) {
                guard = self.inner.wait(guard)?;
            }
            Ok(guard)
        }

        /// [`wait`](Self::wait) for at most `timeout` (under loom, a wait that does not time
        /// out).
        #[track_caller]
        pub fn wait_timeout<'a, T>(
            &self,
            guard: MutexGuard<'a, T>,
            timeout: Duration,
        ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
            match self.inner.wait_timeout(guard, timeout) {
                Ok((guard, result)) => Ok((guard, WaitTimeoutResult(result.timed_out()))),
                Err(poisoned) => {
                    let (guard, result) = poisoned.into_inner();
                    Err(PoisonError::new((
                        guard,
                        WaitTimeoutResult(result.timed_out()),
                    )))
                }
            }
        }

        /// [`wait_while`](Self::wait_while) for at most `timeout` (under loom, a wait that
        /// does not time out).
        #[track_caller]
        pub fn wait_timeout_while<'a, T, F: FnMut(&mut T) -> bool>(
            &self,
            mut guard: MutexGuard<'a, T>,
            timeout: Duration,
            mut condition: F,
        ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
            loop {
                if !condition(&mut *guard) {
                    return Ok((guard, WaitTimeoutResult(false)));
                }
                let (next, result) = self.wait_timeout(guard, timeout)?;
                guard = next;
                if result.timed_out() {
                    let timed_out = condition(&mut *guard);
                    return Ok((guard, WaitTimeoutResult(timed_out)));
                }
            }
        }

        /// Wakes one waiting thread.
        #[track_caller]
        pub fn notify_one(&self) {
            self.inner.notify_one();
        }

        /// Wakes every waiting thread.
        #[track_caller]
        pub fn notify_all(&self) {
            self.inner.notify_all();
        }
    }

    /// `std::sync::Weak`, which loom cannot offer (its `Arc` keeps no weak count): every
    /// method is a compile error that says so, and no value of the type exists.
    pub struct Weak<T: ?Sized> {
        never: std::convert::Infallible,
        _of: PhantomData<fn(&T)>,
    }

    impl<T> Weak<T> {
        /// Not offered under loom (a compile error that says why).
        #[allow(clippy::new_without_default)]
        pub fn new<'a>() -> Weak<T>
        where
            &'a (): unavailable::WeakReference,
        {
            unreachable!("a bound no type meets keeps this from being called")
        }
    }

    impl<T: ?Sized> Weak<T> {
        /// Not offered under loom (a compile error that says why).
        pub fn upgrade<'a>(&'a self) -> Option<Arc<T>>
        where
            &'a (): unavailable::WeakReference,
        {
            match self.never {}
        }

        /// Not offered under loom (a compile error that says why).
        pub fn strong_count<'a>(&'a self) -> usize
        where
            &'a (): unavailable::WeakReference,
        {
            match self.never {}
        }

        /// Not offered under loom (a compile error that says why).
        pub fn weak_count<'a>(&'a self) -> usize
        where
            &'a (): unavailable::WeakReference,
        {
            match self.never {}
        }
    }

    impl<T: ?Sized> fmt::Debug for Weak<T> {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.never {}
        }
    }
}
