use std::fmt;

use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy};
use serde::{Deserialize, Serialize};

/// One call on a limiter, with its arguments.
///
/// Serialized with an `"op"` tag: `{"op":"allow","key":"a","cost":1,"now":0}`,
/// `{"op":"evict_full","now":5}`,
/// `{"op":"replace_policy","next":{"version":2,"capacity":20,"tokens_per_second":4},"expected_version":1,"now":5}`,
/// `{"op":"key_count"}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// [`Limiter::allow`].
    Allow {
        /// The key.
        key: String,
        /// The cost in whole tokens.
        cost: u64,
        /// The time in nanoseconds.
        now: u64,
    },
    /// [`Limiter::evict_full`].
    EvictFull {
        /// The time in nanoseconds.
        now: u64,
    },
    /// [`Limiter::replace_policy`].
    ReplacePolicy {
        /// The proposed policy.
        next: Policy,
        /// The version the caller expects to replace.
        expected_version: u64,
        /// The time in nanoseconds.
        now: u64,
    },
    /// [`Limiter::key_count`].
    KeyCount,
}

/// What one [`Op`] returned.
///
/// Serialized with an `"outcome"` tag: `{"outcome":"decision","allowed":true,...}`,
/// `{"outcome":"evicted","removed":2}`, `{"outcome":"replaced"}`,
/// `{"outcome":"key_count","keys":3}`, `{"outcome":"error","error":"invalid_key"}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// `allow` returned a decision (allowed or rejected).
    Decision(Decision),
    /// `evict_full` removed this many buckets.
    Evicted {
        /// How many buckets were removed.
        removed: usize,
    },
    /// `replace_policy` succeeded.
    Replaced,
    /// `key_count` returned this.
    KeyCount {
        /// The number of tracked keys.
        keys: usize,
    },
    /// The call failed and changed nothing.
    Error(LimitError),
}

impl Op {
    /// The time the operation carries, if any.
    pub fn now(&self) -> Option<u64> {
        match self {
            Op::Allow { now, .. } | Op::EvictFull { now } | Op::ReplacePolicy { now, .. } => {
                Some(*now)
            }
            Op::KeyCount => None,
        }
    }

    /// Runs this operation on any [`Limiter`] and wraps what it returned.
    pub fn run_on<L: Limiter + ?Sized>(&self, limiter: &L) -> Outcome {
        match self {
            Op::Allow { key, cost, now } => limiter.allow(key, *cost, *now).into(),
            Op::EvictFull { now } => limiter.evict_full(*now).into(),
            Op::ReplacePolicy {
                next,
                expected_version,
                now,
            } => limiter
                .replace_policy(*next, *expected_version, *now)
                .into(),
            Op::KeyCount => Outcome::KeyCount {
                keys: limiter.key_count(),
            },
        }
    }
}

impl From<Result<Decision, LimitError>> for Outcome {
    fn from(r: Result<Decision, LimitError>) -> Self {
        r.map_or_else(Outcome::Error, Outcome::Decision)
    }
}

impl From<Result<usize, LimitError>> for Outcome {
    fn from(r: Result<usize, LimitError>) -> Self {
        r.map_or_else(Outcome::Error, |removed| Outcome::Evicted { removed })
    }
}

impl From<Result<(), LimitError>> for Outcome {
    fn from(r: Result<(), LimitError>) -> Self {
        r.map_or_else(Outcome::Error, |()| Outcome::Replaced)
    }
}

/// `allow("k", cost 1, at 250000000 ns)`, `evict_full(at 5500000000 ns)`,
/// `replace_policy(v2: capacity 20, 4/s; expecting v1, at 500000000 ns)`, `key_count()`.
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Allow { key, cost, now } => write!(f, "allow({key:?}, cost {cost}, at {now} ns)"),
            Op::EvictFull { now } => write!(f, "evict_full(at {now} ns)"),
            Op::ReplacePolicy {
                next,
                expected_version,
                now,
            } => write!(
                f,
                "replace_policy(v{}: capacity {}, {}/s; expecting v{expected_version}, at {now} ns)",
                next.version(),
                next.capacity(),
                next.tokens_per_second()
            ),
            Op::KeyCount => f.write_str("key_count()"),
        }
    }
}

/// `n tokens left`, with `1 token left` in the singular.
struct TokensLeft(u64);

impl fmt::Display for TokensLeft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 token left"),
            n => write!(f, "{n} tokens left"),
        }
    }
}

/// `allowed, 0 tokens left`, `rejected, retry after 500000000 ns, 1 token left`,
/// `evicted 2`, `replaced`, `3 keys`, `error: <the error's message>`.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Decision(d) if d.allowed => {
                write!(f, "allowed, {}", TokensLeft(d.whole_tokens))?;
                if d.retry_after_nanos != 0 {
                    write!(
                        f,
                        " (retry_after_nanos {} on an allowed call)",
                        d.retry_after_nanos
                    )?;
                }
                Ok(())
            }
            Outcome::Decision(d) => write!(
                f,
                "rejected, retry after {} ns, {}",
                d.retry_after_nanos,
                TokensLeft(d.whole_tokens)
            ),
            Outcome::Evicted { removed } => write!(f, "evicted {removed}"),
            Outcome::Replaced => f.write_str("replaced"),
            Outcome::KeyCount { keys: 1 } => f.write_str("1 key"),
            Outcome::KeyCount { keys } => write!(f, "{keys} keys"),
            Outcome::Error(e) => write!(f, "error: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_and_outcomes_round_trip_through_json() {
        let ops = vec![
            Op::Allow {
                key: "a".into(),
                cost: 1,
                now: 0,
            },
            Op::EvictFull { now: 5 },
            Op::ReplacePolicy {
                next: Policy::new(2, 20, 4).unwrap(),
                expected_version: 1,
                now: 5,
            },
            Op::KeyCount,
        ];
        let json = serde_json::to_string(&ops).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Op>>(&json).unwrap(), ops);
        let outcomes = vec![
            Outcome::Decision(Decision {
                allowed: false,
                whole_tokens: 0,
                retry_after_nanos: 500_000_000,
            }),
            Outcome::Evicted { removed: 2 },
            Outcome::Replaced,
            Outcome::KeyCount { keys: 3 },
            Outcome::Error(LimitError::InvalidCost {
                cost: 11,
                capacity: 10,
            }),
            Outcome::Error(LimitError::InvalidKey),
        ];
        let json = serde_json::to_string(&outcomes).unwrap();
        assert!(
            json.contains(r#"{"outcome":"error","error":"invalid_cost","cost":11,"capacity":10}"#),
            "{json}"
        );
        assert_eq!(
            serde_json::from_str::<Vec<Outcome>>(&json).unwrap(),
            outcomes
        );
    }

    #[test]
    fn counts_of_one_are_singular() {
        let decision = |allowed, whole_tokens| {
            Outcome::Decision(Decision {
                allowed,
                whole_tokens,
                retry_after_nanos: if allowed { 0 } else { 5 },
            })
        };
        assert_eq!(decision(true, 1).to_string(), "allowed, 1 token left");
        assert_eq!(decision(true, 2).to_string(), "allowed, 2 tokens left");
        assert_eq!(
            decision(false, 1).to_string(),
            "rejected, retry after 5 ns, 1 token left"
        );
        assert_eq!(
            decision(false, 0).to_string(),
            "rejected, retry after 5 ns, 0 tokens left"
        );
        assert_eq!(Outcome::KeyCount { keys: 1 }.to_string(), "1 key");
        assert_eq!(Outcome::KeyCount { keys: 0 }.to_string(), "0 keys");
    }
}
