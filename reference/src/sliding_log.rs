//! An exact rolling-window baseline: a call at `t` is admitted when fewer than `capacity`
//! admitted calls lie in the window `(t − window, t]`.
//!
//! Its contract is a count over *any* window of the given length, so no boundary burst
//! passes; the price is memory proportional to the admissions in the window (O(A)) and
//! the work to expire them.
use std::collections::VecDeque;

use ratelimit_lab_api::{sync::Mutex, LimitError, MAX_QUANTITY};

/// One key's log of admission times over a rolling window.
#[derive(Debug)]
pub struct SlidingLog {
    capacity: u64,
    window_nanos: u64,
    state: Mutex<LogState>,
}

#[derive(Debug)]
struct LogState {
    admitted: VecDeque<u64>,
    observed: u64,
}

impl SlidingLog {
    /// A log admitting at most `capacity` calls in any `window_nanos`-long window.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidPolicy`] when `capacity` or `window_nanos` is `0` or above
    /// [`MAX_QUANTITY`] (the window reported as the rate).
    pub fn new(capacity: u64, window_nanos: u64) -> Result<Self, LimitError> {
        let bad = |v: u64| v == 0 || v > MAX_QUANTITY;
        if bad(capacity) || bad(window_nanos) {
            return Err(LimitError::InvalidPolicy {
                version: 1,
                capacity,
                tokens_per_second: window_nanos,
            });
        }
        Ok(SlidingLog {
            capacity,
            window_nanos,
            state: Mutex::new(LogState {
                admitted: VecDeque::new(),
                observed: 0,
            }),
        })
    }

    /// Admits one call at `now` if fewer than `capacity` admissions lie in
    /// `(now − window, now]`.
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
        s.observed = now;
        // An admission at `a` is still inside the window while now − a < window.
        while s
            .admitted
            .front()
            .is_some_and(|&a| now - a >= self.window_nanos)
        {
            s.admitted.pop_front();
        }
        if s.admitted.len() as u64 >= self.capacity {
            return Ok(false);
        }
        s.admitted.push_back(now);
        Ok(true)
    }

    /// Admissions currently retained (the memory the design pays for exactness).
    pub fn retained(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admitted
            .len()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn no_boundary_burst() {
        let log = SlidingLog::new(10, 1_000_000_000).unwrap();
        let before = (0..10).filter(|_| log.allow(999_999_999).unwrap()).count();
        let after = (0..10)
            .filter(|_| log.allow(1_000_000_000).unwrap())
            .count();
        assert_eq!((before, after), (10, 0));
        assert!(!log.allow(1_999_999_998).unwrap());
        assert!(
            log.allow(1_999_999_999).unwrap(),
            "the first ten left the window"
        );
        assert_eq!(log.retained(), 1);
        assert!(log.allow(0).is_err());
        assert!(SlidingLog::new(1, 0).is_err());
    }
}
