use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a limiter refused to act. An error changes no state.
///
/// A rate rejection is *not* an error: it is a [`Decision`](crate::Decision) with
/// `allowed == false`. Errors are "never" (bad input, a full key table, a stale
/// administrator), not "not yet".
///
/// When several apply, the first in this order wins: in `allow`, [`InvalidKey`], then
/// [`InvalidCost`], then [`TimeWentBackwards`], then [`KeyCapacityReached`]; in `evict_full`,
/// [`TimeWentBackwards`]; in `replace_policy`, [`TimeWentBackwards`], then
/// [`StalePolicyVersion`].
///
/// [`InvalidKey`]: LimitError::InvalidKey
/// [`InvalidCost`]: LimitError::InvalidCost
/// [`TimeWentBackwards`]: LimitError::TimeWentBackwards
/// [`KeyCapacityReached`]: LimitError::KeyCapacityReached
/// [`StalePolicyVersion`]: LimitError::StalePolicyVersion
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum LimitError {
    /// The key is empty or only white space (see [`is_blank_key`](crate::is_blank_key)).
    InvalidKey,
    /// The cost is `0` or above the current policy's capacity, so it could never be admitted.
    InvalidCost {
        /// The cost asked for.
        cost: u64,
        /// The capacity of the policy in force.
        capacity: u64,
    },
    /// `now` is below the largest time a successful call has seen.
    TimeWentBackwards {
        /// The time passed.
        now: u64,
        /// The largest time a successful call has seen.
        observed: u64,
    },
    /// A new key arrived while `max_keys` keys are already tracked. Existing keys still work.
    KeyCapacityReached {
        /// The configured bound on tracked keys.
        max_keys: usize,
    },
    /// `expected` is not the current version, or `next` is not above it.
    StalePolicyVersion {
        /// The version the caller expected to replace.
        expected: u64,
        /// The version in force.
        current: u64,
        /// The version of the proposed policy.
        next: u64,
    },
    /// A policy field is `0` or above [`MAX_QUANTITY`](crate::MAX_QUANTITY).
    InvalidPolicy {
        /// The version asked for.
        version: u64,
        /// The capacity asked for.
        capacity: u64,
        /// The rate asked for.
        tokens_per_second: u64,
    },
    /// `max_keys` is `0`.
    InvalidMaxKeys,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::InvalidKey => f.write_str("invalid key: a key must not be empty or blank"),
            LimitError::InvalidCost { cost, capacity } => write!(
                f,
                "invalid cost {cost}: a cost must be in 1..={capacity} (the capacity), or it can never be admitted"
            ),
            LimitError::TimeWentBackwards { now, observed } => write!(
                f,
                "time went backwards: now={now} ns is before the last observed time {observed} ns"
            ),
            LimitError::KeyCapacityReached { max_keys } => write!(
                f,
                "key capacity reached: {max_keys} keys are tracked, a new key is refused"
            ),
            LimitError::StalePolicyVersion {
                expected,
                current,
                next,
            } => write!(
                f,
                "stale policy version: expected {expected}, current {current}, next {next} (expected must equal current and next must be greater)"
            ),
            LimitError::InvalidPolicy {
                version,
                capacity,
                tokens_per_second,
            } => {
                let bad: Vec<&str> = [
                    ("version", version),
                    ("capacity", capacity),
                    ("tokens_per_second", tokens_per_second),
                ]
                .into_iter()
                .filter(|(_, v)| **v == 0 || **v > crate::MAX_QUANTITY)
                .map(|(name, _)| name)
                .collect();
                write!(
                    f,
                    "invalid policy (version={version}, capacity={capacity}, tokens_per_second={tokens_per_second}): {} must be in 1..={}",
                    bad.join(", "),
                    crate::MAX_QUANTITY
                )
            }
            LimitError::InvalidMaxKeys => f.write_str("invalid max_keys: it must be at least 1"),
        }
    }
}

impl std::error::Error for LimitError {}
