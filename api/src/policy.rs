use serde::{Deserialize, Serialize};

use crate::{LimitError, MAX_QUANTITY};

/// A validated, immutable limiter policy: a version, a burst `capacity` in whole tokens and
/// a refill rate in whole tokens per second.
///
/// Every field lies in `1..=`[`MAX_QUANTITY`]; a `Policy` that exists is valid, whether it
/// was built with [`Policy::new`] or deserialized (deserialization runs the same check).
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::{LimitError, Policy};
///
/// let p = Policy::new(1, 10, 2)?;
/// assert_eq!((p.version(), p.capacity(), p.tokens_per_second()), (1, 10, 2));
/// assert!(Policy::new(1, 0, 2).is_err());
/// # Ok::<(), LimitError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawPolicy", into = "RawPolicy")]
pub struct Policy {
    version: u64,
    capacity: u64,
    tokens_per_second: u64,
}

/// A policy in words: `v2, capacity 20, 4 tokens/s`.
impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "v{}, capacity {}, {} tokens/s",
            self.version, self.capacity, self.tokens_per_second
        )
    }
}

impl Policy {
    /// Builds a policy.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidPolicy`] (carrying all three values) when any of them is `0` or
    /// above [`MAX_QUANTITY`].
    pub const fn new(
        version: u64,
        capacity: u64,
        tokens_per_second: u64,
    ) -> Result<Policy, LimitError> {
        const fn in_range(v: u64) -> bool {
            v >= 1 && v <= MAX_QUANTITY
        }
        if in_range(version) && in_range(capacity) && in_range(tokens_per_second) {
            Ok(Policy {
                version,
                capacity,
                tokens_per_second,
            })
        } else {
            Err(LimitError::InvalidPolicy {
                version,
                capacity,
                tokens_per_second,
            })
        }
    }

    /// The version; a replacement must carry a strictly larger one.
    pub const fn version(&self) -> u64 {
        self.version
    }

    /// The burst budget in whole tokens: a bucket never holds more.
    pub const fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The refill rate in whole tokens per second, that is units per nanosecond.
    pub const fn tokens_per_second(&self) -> u64 {
        self.tokens_per_second
    }
}

/// The serialized form of a [`Policy`], checked on the way in.
#[derive(Serialize, Deserialize)]
struct RawPolicy {
    version: u64,
    capacity: u64,
    tokens_per_second: u64,
}

impl TryFrom<RawPolicy> for Policy {
    type Error = LimitError;

    fn try_from(raw: RawPolicy) -> Result<Self, Self::Error> {
        Policy::new(raw.version, raw.capacity, raw.tokens_per_second)
    }
}

impl From<Policy> for RawPolicy {
    fn from(p: Policy) -> Self {
        RawPolicy {
            version: p.version,
            capacity: p.capacity,
            tokens_per_second: p.tokens_per_second,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_checked_at_both_ends() {
        let max = MAX_QUANTITY;
        assert!(Policy::new(1, 1, 1).is_ok());
        assert!(Policy::new(max, max, max).is_ok());
        for (v, c, r) in [
            (0, 1, 1),
            (1, 0, 1),
            (1, 1, 0),
            (max + 1, 1, 1),
            (1, max + 1, 1),
        ] {
            assert_eq!(
                Policy::new(v, c, r),
                Err(LimitError::InvalidPolicy {
                    version: v,
                    capacity: c,
                    tokens_per_second: r
                })
            );
        }
        assert!(Policy::new(1, 1, u64::MAX).is_err());
    }

    #[test]
    fn deserializing_validates() {
        let ok: Policy =
            serde_json::from_str(r#"{"version":2,"capacity":20,"tokens_per_second":4}"#).unwrap();
        assert_eq!(ok, Policy::new(2, 20, 4).unwrap());
        let bad =
            serde_json::from_str::<Policy>(r#"{"version":2,"capacity":0,"tokens_per_second":4}"#);
        assert!(bad.unwrap_err().to_string().contains("capacity"));
        assert_eq!(
            serde_json::to_string(&ok).unwrap(),
            r#"{"version":2,"capacity":20,"tokens_per_second":4}"#
        );
    }
}
