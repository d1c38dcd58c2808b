//! The seed's fixed-window baseline: at most `capacity` admissions per one-second window
//! `[k × 10⁹, (k + 1) × 10⁹)` ns, the count reset at each boundary.
//!
//! Correct for *its* contract, which permits `2 × capacity` admissions within one
//! nanosecond across a boundary (ten at 999 999 999 ns, ten more at 1 000 000 000 ns). That is
//! the burst a token bucket refuses: compare with [`TokenBucket`](crate::TokenBucket).
use ratelimit_lab_api::{sync::Mutex, LimitError, MAX_QUANTITY, UNITS_PER_TOKEN};

/// One key's fixed one-second window counter.
#[derive(Debug)]
pub struct FixedWindow {
    capacity: u64,
    state: Mutex<WindowState>,
}

#[derive(Debug)]
struct WindowState {
    window: Option<u64>,
    used: u64,
    observed: u64,
}

impl FixedWindow {
    /// A counter admitting at most `capacity` calls per one-second window.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidPolicy`] when `capacity` is `0` or above
    /// [`MAX_QUANTITY`] (reported with version and rate `1`).
    pub fn new(capacity: u64) -> Result<Self, LimitError> {
        if capacity == 0 || capacity > MAX_QUANTITY {
            return Err(LimitError::InvalidPolicy {
                version: 1,
                capacity,
                tokens_per_second: 1,
            });
        }
        Ok(FixedWindow {
            capacity,
            state: Mutex::new(WindowState {
                window: None,
                used: 0,
                observed: 0,
            }),
        })
    }

    /// Admits one call at `now` if the current window has room.
    ///
    /// # Errors
    ///
    /// [`LimitError::TimeWentBackwards`] when `now` is below the last time seen; the state is
    /// unchanged.
    pub fn allow(&self, now: u64) -> Result<bool, LimitError> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if now < s.observed {
            return Err(LimitError::TimeWentBackwards {
                now,
                observed: s.observed,
            });
        }
        let window = now / UNITS_PER_TOKEN;
        if s.window != Some(window) {
            s.window = Some(window);
            s.used = 0;
        }
        s.observed = now;
        if s.used == self.capacity {
            return Ok(false);
        }
        s.used += 1;
        Ok(true)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn twenty_pass_across_one_boundary() {
        let w = FixedWindow::new(10).unwrap();
        let before = (0..10).filter(|_| w.allow(999_999_999).unwrap()).count();
        let after = (0..10).filter(|_| w.allow(1_000_000_000).unwrap()).count();
        assert_eq!((before, after), (10, 10));
        assert!(!w.allow(1_000_000_001).unwrap());
        assert!(w.allow(5).is_err());
        assert!(FixedWindow::new(0).is_err());
    }
}
