//! Panics on a check's own thread, in every mode: the suite catches every one and reports
//! its message in the check's explanation, so the default hook printing each again is noise
//! (a property check can panic hundreds of times while it shrinks, each with a backtrace when
//! `RUST_BACKTRACE` is set). While a check runs, its thread's panics print nothing; the place
//! of the first is kept for the report instead. Shuttle's and loom's threads run on the OS
//! thread that started the execution, so a design's panic on one of them is the check's too.
//! Panics on any other thread reach the hook that was there before, unchanged.
use std::cell::RefCell;
use std::sync::Once;

std::thread_local! {
    /// `None`: this thread is not a check's (panics print as usual). `Some(first)`: it is,
    /// with the place of its first panic so far.
    static FIRST: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Makes the calling thread's panics quiet until [`end`], installing the filtering hook the
/// first time.
pub(crate) fn begin() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = FIRST
                .try_with(|first| match first.borrow_mut().as_mut() {
                    Some(place) => {
                        if place.is_none() {
                            *place = info
                                .location()
                                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                        }
                        true
                    }
                    None => false,
                })
                .unwrap_or(false);
            if !quiet {
                before(info);
            }
        }));
    });
    FIRST.with(|first| *first.borrow_mut() = Some(None));
}

/// Forgets the place of the calling thread's first panic so far, if [`begin`] made its
/// panics quiet: the next panic's place is kept instead.
#[cfg(loom)]
pub(crate) fn forget_place() {
    FIRST.with(|first| {
        if let Some(place) = first.borrow_mut().as_mut() {
            *place = None;
        }
    });
}

/// Ends what [`begin`] started on this thread and returns the place of its first panic.
pub(crate) fn end() -> Option<String> {
    FIRST.with(|first| first.borrow_mut().take().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checks_panics_are_quiet_and_the_first_place_is_kept() {
        let place = std::thread::spawn(|| {
            begin();
            let _ = std::panic::catch_unwind(|| panic!("first"));
            let _ = std::panic::catch_unwind(|| panic!("second"));
            end()
        })
        .join()
        .expect("the thread itself does not panic");
        let place = place.expect("a place was kept");
        assert!(
            place.starts_with("src/suite/core/quiet_panics.rs:"),
            "{place}"
        );
        // Ended: nothing is kept any more.
        assert_eq!(end(), None);
    }
}
