//! Real time for any [`Limiter`]: the clock is read *inside* the serialized admission
//! boundary, as the seed requires.
//!
//! A caller that reads the clock and then calls `allow(key, cost, now)` can be overtaken
//! between the two: thread A reads 100, thread B reads 101 and calls first, and A's call
//! arrives with a time the limiter has already passed (`TimeWentBackwards`). [`Clocked`]
//! takes its gate, *then* reads the clock, then calls the limiter, so samples reach the
//! limiter in the order they were taken.
use std::sync::TryLockError;

use ratelimit_lab_api::{
    sync::{Mutex, MutexGuard},
    Decision, LimitError, Limiter, Policy,
};

use crate::Clock;

/// A limiter driven by a [`Clock`] sampled inside one gate.
#[derive(Debug)]
pub struct Clocked<L, C> {
    limiter: L,
    clock: C,
    gate: Mutex<()>,
}

impl<L: Limiter, C: Clock> Clocked<L, C> {
    /// Wraps `limiter`; every call reads `clock` inside the gate.
    pub fn new(limiter: L, clock: C) -> Self {
        Clocked {
            limiter,
            clock,
            gate: Mutex::new(()),
        }
    }

    fn enter(&self) -> (MutexGuard<'_, ()>, u64) {
        let guard = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.now_nanos();
        (guard, now)
    }

    /// [`Limiter::allow`] at the clock's current reading.
    ///
    /// # Errors
    ///
    /// As [`Limiter::allow`]; never [`LimitError::TimeWentBackwards`] while the clock is
    /// monotonic and nothing else drives the limiter.
    pub fn allow(&self, key: &str, cost: u64) -> Result<Decision, LimitError> {
        let (_gate, now) = self.enter();
        self.limiter.allow(key, cost, now)
    }

    /// [`Clocked::allow`] if no other call is inside the gate right now; `None`, without
    /// reading the clock, if one is. A caller that must not wait behind another uses this; a
    /// test uses it to show that nobody can sample the clock while a call sits between its
    /// sample and its decision.
    ///
    /// # Errors
    ///
    /// As [`Clocked::allow`].
    pub fn try_allow(&self, key: &str, cost: u64) -> Option<Result<Decision, LimitError>> {
        let _gate = match self.gate.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(self.limiter.allow(key, cost, self.clock.now_nanos()))
    }

    /// [`Limiter::evict_full`] at the clock's current reading.
    ///
    /// # Errors
    ///
    /// As [`Limiter::evict_full`].
    pub fn evict_full(&self) -> Result<usize, LimitError> {
        let (_gate, now) = self.enter();
        self.limiter.evict_full(now)
    }

    /// [`Limiter::replace_policy`] at the clock's current reading.
    ///
    /// # Errors
    ///
    /// As [`Limiter::replace_policy`].
    pub fn replace_policy(&self, next: Policy, expected_version: u64) -> Result<(), LimitError> {
        let (_gate, now) = self.enter();
        self.limiter.replace_policy(next, expected_version, now)
    }

    /// The wrapped limiter, for observation.
    pub fn limiter(&self) -> &L {
        &self.limiter
    }
}
