//! Where time comes from: a trait, a real monotonic clock and a manual one for tests.
use std::time::Instant;

use ratelimit_lab_api::sync::atomic::{AtomicU64, Ordering};

/// A source of nanoseconds since one fixed origin, never decreasing across calls.
pub trait Clock: Send + Sync + 'static {
    /// Nanoseconds since this clock's origin.
    fn now_nanos(&self) -> u64;
}

/// The machine's monotonic clock (`std::time::Instant`), measured from when it was created.
///
/// Saturates at `u64::MAX` nanoseconds (about 584 years after its origin).
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now_nanos(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A clock that moves only when told: deterministic time for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: u64) -> Self {
        ManualClock {
            now: AtomicU64::new(start),
        }
    }

    /// Moves the clock forward by `nanos` (saturating), returning the new reading.
    pub fn advance(&self, nanos: u64) -> u64 {
        let mut cur = self.now.load(Ordering::SeqCst);
        loop {
            let next = cur.saturating_add(nanos);
            match self
                .now
                .compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return next,
                Err(seen) => cur = seen,
            }
        }
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}
