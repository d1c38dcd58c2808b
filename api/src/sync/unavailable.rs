//! Why a name of `std::sync` is not offered under the backend this crate is built with.
//!
//! Under loom and shuttle, a few things `std` offers cannot be modelled: a raw pointer to an
//! atomic's value, a plain `&mut` to it under loom, a `Weak` under loom. The facade still
//! has the method or type, with a bound that no type meets: a design that uses one does not
//! compile, and the error is this module's message, which says why and what to use instead.
//! No type implements these traits; they exist for their messages.

/// The bound of `as_ptr` and `from_ptr` on the atomics under loom and shuttle.
#[diagnostic::on_unimplemented(
    message = "`as_ptr` and `from_ptr` are not offered by `ratelimit_lab::sync::atomic` under loom or shuttle: a raw pointer would read and write the value behind the model's back",
    label = "not offered under this backend",
    note = "use the atomic's own operations (`load`, `store`, `swap`, `compare_exchange`, `fetch_*`)"
)]
pub trait RawPointer {}

/// The bound of `get_mut` on the atomics under loom.
#[diagnostic::on_unimplemented(
    message = "`get_mut` is not offered by `ratelimit_lab::sync::atomic` under loom: loom checks every access to an atomic, and a plain `&mut` to its value would escape the check",
    label = "not offered under loom",
    note = "with `&mut self` no other thread runs: `load(Ordering::Relaxed)`, `store(.., Ordering::Relaxed)` or `into_inner()` do the same in every backend"
)]
pub trait MutableReference {}

/// The bound of every method of `sync::Weak` under loom.
#[diagnostic::on_unimplemented(
    message = "`ratelimit_lab::sync::Weak` is not offered under loom: loom's `Arc` keeps no weak count, so there is no `Arc::downgrade` to make one",
    label = "not offered under loom",
    note = "keep an `Arc`, or an index into a table the owner holds, instead of a `Weak`"
)]
pub trait WeakReference {}
