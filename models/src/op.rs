use std::fmt;

use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy, Snapshot};
use serde::{Deserialize, Serialize};

/// One call on a limiter, with its arguments.
///
/// Serialized with an `"op"` tag: `{"op":"allow","key":"a","cost":1,"now":0}`,
/// `{"op":"evict_full","now":5}`,
/// `{"op":"replace_policy","next":{"version":2,"capacity":20,"tokens_per_second":4},"expected_version":1,"now":5}`,
/// `{"op":"key_count"}`, `{"op":"snapshot"}`.
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
    /// [`Limiter::snapshot`]: an observation of the whole state. The concurrency checks call
    /// it on a thread of its own while other calls run; sequential traces do not hold it.
    Snapshot,
}

/// What one [`Op`] returned.
///
/// Serialized with an `"outcome"` tag: `{"outcome":"decision","allowed":true,...}`,
/// `{"outcome":"evicted","removed":2}`, `{"outcome":"replaced"}`,
/// `{"outcome":"key_count","keys":3}`, `{"outcome":"snapshot","state":"{...}"}` (the state's
/// JSON as text, `"state":null` for a design that offers none), `{"outcome":"error","error":"invalid_key"}`.
///
/// Two snapshot outcomes are *the same state* by [`same_state`](crate::same_state)'s rule,
/// not by `==` (a design may store a bucket as it likes): [`Outcome::matches`] is the
/// comparison a judge uses.
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
    /// `snapshot` returned this (`None`: the design offers no snapshot).
    Snapshot {
        /// The state as the design stores it.
        #[serde(with = "state_text")]
        state: Option<Snapshot>,
    },
    /// The call failed and changed nothing.
    Error(LimitError),
}

/// A snapshot's state inside an [`Outcome`], as its JSON text: an outcome is an internally
/// tagged enum, which serde buffers before reading it, and that buffer cannot hold the `u128`
/// balances of a snapshot.
mod state_text {
    use ratelimit_lab_api::Snapshot;
    use serde::{de::Error as _, ser::Error as _, Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        state: &Option<Snapshot>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match state {
            None => serializer.serialize_none(),
            Some(state) => {
                let text = serde_json::to_string(state).map_err(S::Error::custom)?;
                serializer.serialize_some(&text)
            }
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Snapshot>, D::Error> {
        let text: Option<String> = Option::deserialize(deserializer)?;
        text.map(|text| serde_json::from_str(&text).map_err(D::Error::custom))
            .transpose()
    }
}

impl Outcome {
    /// Whether the design's outcome `self` is what the specification's outcome `spec` says:
    /// equal, except that a snapshot is compared by the one state rule
    /// ([`same_state::same`](crate::same_state::same)), and a design that offers no
    /// snapshot (`state: None`) is not judged on it.
    pub fn matches(&self, spec: &Outcome) -> bool {
        match (self, spec) {
            (Outcome::Snapshot { state: None }, Outcome::Snapshot { .. }) => true,
            (Outcome::Snapshot { state: Some(got) }, Outcome::Snapshot { state: Some(want) }) => {
                crate::same_state::same(got, want)
            }
            _ => self == spec,
        }
    }
}

impl Op {
    /// The time the operation carries, if any.
    pub fn now(&self) -> Option<u64> {
        match self {
            Op::Allow { now, .. } | Op::EvictFull { now } | Op::ReplacePolicy { now, .. } => {
                Some(*now)
            }
            Op::KeyCount | Op::Snapshot => None,
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
            Op::Snapshot => Outcome::Snapshot {
                state: limiter.snapshot(),
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

/// A key as a report shows it: quoted (`"k"`), or, when longer than [`ShownKey::MAX_CHARS`]
/// characters, its first and last characters around `…`, quoted, and its length in bytes:
/// `"tenant-42/user:01234567…/ключ/鍵" (140 bytes)`. Only the words a person reads shorten a
/// key; replays and saved files keep it whole.
#[derive(Clone, Copy, Debug)]
pub struct ShownKey<'a>(pub &'a str);

impl ShownKey<'_> {
    /// The longest key shown whole, in characters.
    pub const MAX_CHARS: usize = 40;
    /// The characters kept before and after the `…` of a longer key.
    const HEAD: usize = 24;
    const TAIL: usize = 8;
}

impl fmt::Display for ShownKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.0;
        let chars = key.chars().count();
        if chars <= Self::MAX_CHARS {
            return write!(f, "{key:?}");
        }
        let head: String = key.chars().take(Self::HEAD).collect();
        let tail: String = key.chars().skip(chars - Self::TAIL).collect();
        write!(f, "{:?} ({} bytes)", format!("{head}…{tail}"), key.len())
    }
}

/// Keys as a report lists them: `["a", "b"]`, each a [`ShownKey`].
#[derive(Clone, Copy, Debug)]
pub struct ShownKeys<'a>(pub &'a [&'a str]);

impl fmt::Display for ShownKeys<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", ShownKey(key))?;
        }
        f.write_str("]")
    }
}

/// `allow("k", cost 1, at 250000000 ns)`, `evict_full(at 5500000000 ns)`,
/// `replace_policy(v2: capacity 20, 4/s; expecting v1, at 500000000 ns)`, `key_count()`.
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Allow { key, cost, now } => {
                write!(f, "allow({}, cost {cost}, at {now} ns)", ShownKey(key))
            }
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
            Op::Snapshot => f.write_str("snapshot()"),
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
/// `evicted 2`, `replaced`, `3 keys`, `"a": 1.500000000 tokens (observed time 250000000 ns,
/// policy version 1)` for a snapshot, `error: <the error's message>`.
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
            Outcome::Snapshot { state: None } => f.write_str("no snapshot"),
            Outcome::Snapshot { state: Some(state) } => {
                write!(f, "{}", crate::same_state::InWords(state))
            }
            Outcome::Error(e) => write!(f, "error: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_key_is_shown_shortened_with_its_length_and_a_short_one_whole() {
        assert_eq!(ShownKey("k").to_string(), "\"k\"");
        assert_eq!(
            ShownKey(&"a".repeat(40)).to_string(),
            format!("{:?}", "a".repeat(40))
        );
        let long = format!("tenant-42/user:{}/ключ/鍵", "0123456789abcdef".repeat(7));
        let shown = ShownKey(&long).to_string();
        assert_eq!(
            shown,
            format!(
                "\"tenant-42/user:012345678…f/ключ/鍵\" ({} bytes)",
                long.len()
            )
        );
        let op = Op::Allow {
            key: long.clone(),
            cost: 1,
            now: 100,
        };
        assert!(op.to_string().chars().count() < 80, "{op}");
        assert_eq!(ShownKeys(&["a", "b"]).to_string(), "[\"a\", \"b\"]");
    }

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
            Outcome::Snapshot { state: None },
            Outcome::Snapshot {
                state: Some(ratelimit_lab_api::Snapshot {
                    policy: Policy::new(1, 10, 2).unwrap(),
                    observed_nanos: 5,
                    buckets: [(
                        "a".to_string(),
                        ratelimit_lab_api::BucketState {
                            units: u128::from(u64::MAX) * 1_000_000_000,
                            last_nanos: 5,
                        },
                    )]
                    .into(),
                }),
            },
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
