//! `std::sync::atomic`: every atomic type of `std` with its stable method set (as of Rust
//! 1.88, this workspace's `rust-version`), the same in all three backends.
//!
//! Each type wraps the backend's own: `std`'s with a perturbation point before each operation
//! on a shared atomic (see `perturbation`), loom's or shuttle's so that the model sees every
//! operation. The wrapper gives each backend the same names and signatures:
//!
//! | item                                   | std | shuttle | loom |
//! |----------------------------------------|-----|---------|------|
//! | `AtomicBool`, `AtomicI8`..`AtomicI64`, `AtomicIsize`, `AtomicU8`..`AtomicU64`, `AtomicUsize`, `AtomicPtr<T>` | yes | yes | yes |
//! | `load`, `store`, `swap`, `compare_exchange`, `compare_exchange_weak`, `fetch_update`, `into_inner` | yes | yes | yes |
//! | integers: `fetch_add`, `fetch_sub`, `fetch_and`, `fetch_nand`, `fetch_or`, `fetch_xor`, `fetch_max`, `fetch_min` | yes | yes | yes |
//! | `AtomicBool`: `fetch_and`, `fetch_nand`, `fetch_or`, `fetch_xor`, `fetch_not` | yes | yes | yes (`fetch_not` is `fetch_xor(true)`) |
//! | `Default`, `From<value>`, `Debug` (the value), `AtomicPtr`: `fmt::Pointer` | yes | yes | yes |
//! | `new` as a `const fn` (an atomic in a `static`) | yes | yes | no: loom registers each atomic with the running execution |
//! | `get_mut`                              | yes | yes | compile error: a plain `&mut` would escape loom's checks |
//! | `as_ptr`, `unsafe from_ptr`            | yes | compile error | compile error: a raw pointer would reach the value behind the model's back |
//! | `fence`, `compiler_fence`, `Ordering`  | yes | yes | yes (`compiler_fence` is `std`'s: it orders nothing between threads) |
//!
//! A "compile error" above is a method that exists with a bound no type meets, so that using
//! it fails to compile with a message that says why (see `sync::unavailable`, under loom
//! and shuttle).
//!
//! Not offered in any backend: what `std` marks unstable, or stable only after Rust 1.88
//! (`AtomicPtr::fetch_ptr_add` and the other pointer arithmetic and bit operations, 1.91;
//! `try_update` and `update`, 1.95), and what it deprecates (`compare_and_swap`,
//! `spin_loop_hint`, the `ATOMIC_*_INIT` constants): a design that uses one does not compile
//! under any backend, rather than under one alone.
use std::fmt;

#[cfg(all(not(loom), feature = "shuttle"))]
use shuttle::sync::atomic as backend;
#[cfg(all(not(loom), not(feature = "shuttle")))]
use std::sync::atomic as backend;

#[cfg(loom)]
use loom::sync::atomic as backend;

#[cfg(any(loom, feature = "shuttle"))]
use super::unavailable;

pub use std::sync::atomic::{compiler_fence, Ordering};

/// A perturbation point under `std`; nothing under loom and shuttle, whose scheduler
/// switches threads at every atomic operation itself.
#[inline(always)]
fn point() {
    #[cfg(all(not(loom), not(feature = "shuttle")))]
    super::perturbed::perturbation::point();
}

/// `std::sync::atomic::fence`: a memory fence (after a perturbation point under `std`).
#[track_caller]
pub fn fence(order: Ordering) {
    point();
    backend::fence(order);
}

/// Each operation: a perturbation point, then the backend's operation of the same name.
macro_rules! delegate {
    ($( $(#[$doc:meta])* fn $op:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {$(
        $(#[$doc])*
        #[inline]
        #[track_caller]
        pub fn $op(&self $(, $arg: $ty)*) -> $ret {
            point();
            self.inner.$op($($arg),*)
        }
    )*};
}

/// The methods whose form depends on the backend, for an atomic holding `$value`
/// (`$inner` is the backend's type).
macro_rules! by_backend {
    ($inner:ty, $value:ty) => {
        /// A new atomic holding `value`.
        #[cfg(not(loom))]
        #[inline]
        pub const fn new(value: $value) -> Self {
            Self {
                inner: <$inner>::new(value),
            }
        }

        /// A new atomic holding `value` (not a `const fn` under loom, which registers each
        /// atomic with the running execution).
        #[cfg(loom)]
        #[inline]
        #[track_caller]
        pub fn new(value: $value) -> Self {
            Self {
                inner: <$inner>::new(value),
            }
        }

        /// The value, consuming the atomic.
        #[cfg(all(not(loom), not(feature = "shuttle")))]
        #[inline]
        pub const fn into_inner(self) -> $value {
            self.inner.into_inner()
        }

        /// The value, consuming the atomic.
        #[cfg(any(loom, feature = "shuttle"))]
        #[inline]
        #[track_caller]
        pub fn into_inner(self) -> $value {
            self.inner.into_inner()
        }

        /// The value, through a unique reference.
        #[cfg(not(loom))]
        #[inline]
        pub fn get_mut(&mut self) -> &mut $value {
            self.inner.get_mut()
        }

        /// Not offered under loom (a compile error that says why): loom checks every access
        /// to an atomic, and a plain `&mut` to its value would escape the check.
        #[cfg(loom)]
        pub fn get_mut<'a>(&'a mut self) -> &'a mut $value
        where
            &'a (): unavailable::MutableReference,
        {
            unreachable!("a bound no type meets keeps this from being called")
        }

        /// A raw pointer to the value.
        #[cfg(all(not(loom), not(feature = "shuttle")))]
        #[inline]
        pub const fn as_ptr(&self) -> *mut $value {
            self.inner.as_ptr()
        }

        /// Not offered under loom or shuttle (a compile error that says why): a raw pointer
        /// would reach the value behind the model's back.
        #[cfg(any(loom, feature = "shuttle"))]
        pub fn as_ptr<'a>(&'a self) -> *mut $value
        where
            &'a (): unavailable::RawPointer,
        {
            unreachable!("a bound no type meets keeps this from being called")
        }

        /// The atomic at `ptr`.
        ///
        /// # Safety
        ///
        /// As for `std`'s `from_ptr`: `ptr` is aligned for this type, valid for reads and
        /// writes for `'a`, and accessed only atomically (and never with different sizes)
        /// while the reference lives.
        #[cfg(all(not(loom), not(feature = "shuttle")))]
        #[inline]
        pub const unsafe fn from_ptr<'a>(ptr: *mut $value) -> &'a Self {
            // SAFETY: the caller's promise is `std`'s, and `Self` is `repr(transparent)`
            // over `std`'s atomic, so the reference `std` returns is one to `Self`.
            unsafe { &*(<$inner>::from_ptr(ptr) as *const $inner as *const Self) }
        }

        /// Not offered under loom or shuttle (a compile error that says why): a raw pointer
        /// would reach the value behind the model's back.
        ///
        /// # Safety
        ///
        /// It cannot be called.
        #[cfg(any(loom, feature = "shuttle"))]
        pub unsafe fn from_ptr<'a>(_ptr: *mut $value) -> &'a Self
        where
            &'a (): unavailable::RawPointer,
        {
            unreachable!("a bound no type meets keeps this from being called")
        }

        /// Applies `f` until it returns `None` or the value has not changed in between (then
        /// it stores `f`'s result); returns the previous value, `Ok` when it stored.
        #[inline]
        #[track_caller]
        pub fn fetch_update<F: FnMut($value) -> Option<$value>>(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            f: F,
        ) -> Result<$value, $value> {
            point();
            self.inner.fetch_update(set_order, fetch_order, f)
        }

        delegate! {
            /// Loads the value.
            fn load(&self, order: Ordering) -> $value;
            /// Stores `value`.
            fn store(&self, value: $value, order: Ordering) -> ();
            /// Stores `value`, returning the previous value.
            fn swap(&self, value: $value, order: Ordering) -> $value;
            /// Stores `new` if the value is `current`; returns the previous value, `Ok` when
            /// it stored.
            fn compare_exchange(&self, current: $value, new: $value, success: Ordering, failure: Ordering) -> Result<$value, $value>;
            /// [`compare_exchange`](Self::compare_exchange) that may fail spuriously.
            fn compare_exchange_weak(&self, current: $value, new: $value, success: Ordering, failure: Ordering) -> Result<$value, $value>;
        }
    };
}

/// The type, construction, and the operations every `bool` and integer atomic has.
macro_rules! atomic {
    ($($name:ident $value:ty;)*) => {$(
        #[doc = concat!("`std::sync::atomic::", stringify!($name), "`: the backend's, with a perturbation point before each operation under `std`.")]
        #[repr(transparent)]
        pub struct $name {
            inner: backend::$name,
        }

        impl $name {
            by_backend!(backend::$name, $value);

            delegate! {
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

        impl Default for $name {
            fn default() -> Self {
                Self::new(<$value>::default())
            }
        }

        impl From<$value> for $name {
            fn from(value: $value) -> Self {
                Self::new(value)
            }
        }

        impl fmt::Debug for $name {
            /// The value, as `std` shows it (a relaxed load).
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.inner.load(Ordering::Relaxed), f)
            }
        }
    )*};
}

/// The arithmetic only the integer atomics have.
macro_rules! arithmetic {
    ($($name:ident $value:ty;)*) => {$(
        impl $name {
            delegate! {
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

impl AtomicBool {
    /// Logical not; returns the previous value.
    #[cfg(not(loom))]
    #[inline]
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        point();
        self.inner.fetch_not(order)
    }

    /// Logical not; returns the previous value (loom's `fetch_xor(true)`, the same
    /// operation).
    #[cfg(loom)]
    #[inline]
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        self.inner.fetch_xor(true, order)
    }
}

/// `std::sync::atomic::AtomicPtr`: the backend's, with a perturbation point before each
/// operation under `std`.
#[repr(transparent)]
pub struct AtomicPtr<T> {
    inner: backend::AtomicPtr<T>,
}

impl<T> AtomicPtr<T> {
    by_backend!(backend::AtomicPtr<T>, *mut T);
}

impl<T> Default for AtomicPtr<T> {
    /// A null pointer.
    fn default() -> Self {
        Self::new(std::ptr::null_mut())
    }
}

impl<T> From<*mut T> for AtomicPtr<T> {
    fn from(value: *mut T) -> Self {
        Self::new(value)
    }
}

impl<T> fmt::Debug for AtomicPtr<T> {
    /// The pointer, as `std` shows it (a relaxed load).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner.load(Ordering::Relaxed), f)
    }
}

impl<T> fmt::Pointer for AtomicPtr<T> {
    /// The pointer's address (a relaxed load).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.inner.load(Ordering::Relaxed), f)
    }
}
