//! A design's panics, caught: every call the suite makes into a design goes through
//! [`guarded`], so a panic becomes its message in a check's explanation, never the end of the
//! test (see [`quiet_panics`](crate::suite::core::quiet_panics) for keeping them off the screen).
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into its message.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_message(payload.as_ref()))
}

/// The message a panic carried.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}
