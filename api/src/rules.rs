//! The contract's input rules, one function each: each returns the [`LimitError`] the
//! contract names, or `Ok(())`.
//!
//! A design calls them in the order [`Limiter`](crate::Limiter) documents (key, cost, time,
//! then key capacity for `allow`; time, then version for `replace_policy`) *before* it changes
//! any state, so that the first error wins and an error changes nothing. The reference and
//! the catalogued designs use them; the executable specification derives its own checks
//! independently. Arithmetic is not here: each design derives its own.
use crate::{is_blank_key, LimitError, Policy};

/// `max_keys` must be at least 1.
pub fn check_max_keys(max_keys: usize) -> Result<(), LimitError> {
    if max_keys == 0 {
        Err(LimitError::InvalidMaxKeys)
    } else {
        Ok(())
    }
}

/// A key must not be blank ([`is_blank_key`]).
#[inline]
pub fn check_key(key: &str) -> Result<(), LimitError> {
    if is_blank_key(key) {
        Err(LimitError::InvalidKey)
    } else {
        Ok(())
    }
}

/// A cost must be in `1..=capacity` of the policy in force.
#[inline]
pub fn check_cost(policy: &Policy, cost: u64) -> Result<(), LimitError> {
    let capacity = policy.capacity();
    if cost == 0 || cost > capacity {
        Err(LimitError::InvalidCost { cost, capacity })
    } else {
        Ok(())
    }
}

/// `now` must not be below the largest time a successful call has seen.
#[inline]
pub fn check_time(now: u64, observed: u64) -> Result<(), LimitError> {
    if now < observed {
        Err(LimitError::TimeWentBackwards { now, observed })
    } else {
        Ok(())
    }
}

/// `expected` must be the version in force and `next` must carry a larger one.
pub fn check_version(current: &Policy, next: &Policy, expected: u64) -> Result<(), LimitError> {
    let version = current.version();
    if expected != version || next.version() <= version {
        Err(LimitError::StalePolicyVersion {
            expected,
            current: version,
            next: next.version(),
        })
    } else {
        Ok(())
    }
}
