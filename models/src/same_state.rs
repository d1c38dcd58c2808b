//! The one rule for "the same state": when two [`Snapshot`]s describe states that no later
//! call can tell apart.
//!
//! A design may store a bucket as it likes: the balance as of its last call (the reference),
//! the balance refilled to the limiter's observed time, or the instant at which the bucket is
//! full again (a GCRA-style design). [`BucketState`] only promises "`units` of balance as of
//! `last_nanos`". Two snapshots describe the same state when they have
//!
//! 1. the same policy,
//! 2. the same observed time (the largest time a successful call has seen),
//! 3. the same keys, and
//! 4. for every key, the same balance at the observed time, by the contract's formula
//!    [`balance_at`]: `min(capacity × 10⁹, units + (observed − last_nanos) × rate)`.
//!
//! That is exactly what every later call can see: a call is refused unless its `now` is at
//! least the observed time, and from a balance `b` at the observed time `o` the balance at
//! any `t ≥ o` is `min(cap, b + (t − o) × rate)`, which equals
//! `min(cap, units + (t − last) × rate)` for every bucket whose balance at `o` is `b`.
//!
//! Every check that compares stored state uses [`compare`]: the probe after each step, "an
//! error changes nothing", the concurrency judge, the lesson's replay, and the diagnosis.
use std::collections::BTreeMap;
use std::fmt;

use crate::op::{ShownKey, ShownKeys};
use ratelimit_lab_api::{BucketState, Policy, Snapshot, UNITS_PER_TOKEN};

/// How two snapshots differ, in the order [`compare`] looks: the first difference found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateDifference {
    /// The policies in force differ.
    Policy {
        /// The first snapshot's.
        got: Policy,
        /// The second snapshot's.
        want: Policy,
    },
    /// The observed times differ.
    Observed {
        /// The first snapshot's, in nanoseconds.
        got: u64,
        /// The second snapshot's.
        want: u64,
    },
    /// The sets of tracked keys differ.
    Keys {
        /// The first snapshot's keys.
        got: Vec<String>,
        /// The second snapshot's keys.
        want: Vec<String>,
    },
    /// A key's balance at the observed time differs.
    Balance {
        /// The key.
        key: String,
        /// The observed time both share, in nanoseconds.
        at: u64,
        /// What the first snapshot stored for the key, raw.
        got_stored: BucketState,
        /// Its balance at `at`, in units.
        got: u128,
        /// What the second snapshot stored for the key, raw.
        want_stored: BucketState,
        /// Its balance at `at`, in units.
        want: u128,
    },
}

/// Whether `got` and `want` describe the same state (see the module docs).
///
/// # Errors
///
/// The first difference: policy, then observed time, then keys, then the first key (in key
/// order) whose balance at the observed time differs.
// The difference is the cold path and carries what it names; a box on every `Ok` is not
// worth it.
#[allow(clippy::result_large_err)]
pub fn compare(got: &Snapshot, want: &Snapshot) -> Result<(), StateDifference> {
    if got.policy != want.policy {
        return Err(StateDifference::Policy {
            got: got.policy,
            want: want.policy,
        });
    }
    if got.observed_nanos != want.observed_nanos {
        return Err(StateDifference::Observed {
            got: got.observed_nanos,
            want: want.observed_nanos,
        });
    }
    if !got.buckets.keys().eq(want.buckets.keys()) {
        return Err(StateDifference::Keys {
            got: got.buckets.keys().cloned().collect(),
            want: want.buckets.keys().cloned().collect(),
        });
    }
    let at = got.observed_nanos;
    for ((key, mine), theirs) in got.buckets.iter().zip(want.buckets.values()) {
        let (g, w) = (
            balance_at(mine, &got.policy, at),
            balance_at(theirs, &want.policy, at),
        );
        if g != w {
            return Err(StateDifference::Balance {
                key: key.clone(),
                at,
                got_stored: *mine,
                got: g,
                want_stored: *theirs,
                want: w,
            });
        }
    }
    Ok(())
}

/// Whether `a` and `b` describe the same state (see the module docs).
pub fn same(a: &Snapshot, b: &Snapshot) -> bool {
    compare(a, b).is_ok()
}

/// `min(capacity × 10⁹, units + (t − last_nanos) × rate)`: the bucket's balance at `t`, in
/// units, by the contract's formula. A time before `last_nanos` earns nothing, and a sum
/// beyond `u128` (only a broken snapshot gets there: a valid one stores at most
/// `capacity × 10⁹ < 2⁹³` units, and `(t − last) × rate < 2¹²⁷`) saturates before the clamp.
pub fn balance_at(bucket: &BucketState, policy: &Policy, t: u64) -> u128 {
    let cap = u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    let earned =
        u128::from(t.saturating_sub(bucket.last_nanos)) * u128::from(policy.tokens_per_second());
    bucket.units.saturating_add(earned).min(cap)
}

/// Every bucket's balance at the snapshot's observed time: equal maps (with equal policy and
/// observed time) mean the same state.
pub fn balances(s: &Snapshot) -> BTreeMap<&str, u128> {
    s.buckets
        .iter()
        .map(|(k, b)| (k.as_str(), balance_at(b, &s.policy, s.observed_nanos)))
        .collect()
}

/// A state in words, each bucket by its balance at the observed time (what the one state rule
/// compares): `"a": 1.500000000 tokens, "b": 2 tokens (observed time 250000000 ns, policy
/// version 1)`, or `no buckets (...)`.
#[derive(Clone, Copy, Debug)]
pub struct InWords<'a>(pub &'a Snapshot);

impl fmt::Display for InWords<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = u128::from(UNITS_PER_TOKEN);
        let buckets = balances(self.0);
        if buckets.is_empty() {
            f.write_str("no buckets")?;
        }
        for (i, (key, units)) in buckets.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let (whole, part) = (units / unit, units % unit);
            if part == 0 {
                write!(f, "{}: {whole} tokens", ShownKey(key))?;
            } else {
                write!(f, "{}: {whole}.{part:09} tokens", ShownKey(key))?;
            }
        }
        write!(
            f,
            " (observed time {} ns, policy version {})",
            self.0.observed_nanos,
            self.0.policy.version()
        )
    }
}

/// A policy in words: `v2, capacity 20, 4 tokens/s`.
pub fn policy_in_words(p: &Policy) -> String {
    p.to_string()
}

/// A stored bucket, raw: `500000000 units as of 0 ns`.
fn stored(b: &BucketState) -> String {
    format!("{} units as of {} ns", b.units, b.last_nanos)
}

impl StateDifference {
    /// The difference for a person, with "the design" for the first snapshot and `theirs`
    /// for the second (for example "the specification").
    pub fn describe(&self, theirs: &str) -> String {
        match self {
            StateDifference::Policy { got, want } => format!(
                "the design's policy is {}; {theirs} has {}",
                policy_in_words(got),
                policy_in_words(want)
            ),
            StateDifference::Observed { got, want } => format!(
                "the design's observed time is {got} ns; {theirs} has {want} ns"
            ),
            StateDifference::Keys { got, want } => {
                let (got, want): (Vec<&str>, Vec<&str>) = (
                    got.iter().map(String::as_str).collect(),
                    want.iter().map(String::as_str).collect(),
                );
                format!(
                    "the design tracks keys {}; {theirs} tracks {}",
                    ShownKeys(&got),
                    ShownKeys(&want)
                )
            }
            StateDifference::Balance {
                key,
                at,
                got_stored,
                got,
                want_stored,
                want,
            } => format!(
                "for {} the design stored {} and {theirs} {}: at the observed time {at} ns that is a balance of {got} units against {want}",
                ShownKey(key),
                stored(got_stored),
                stored(want_stored),
            ),
        }
    }
}

impl fmt::Display for StateDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe("the specification"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(policy: Policy, observed: u64, buckets: &[(&str, u128, u64)]) -> Snapshot {
        Snapshot {
            policy,
            observed_nanos: observed,
            buckets: buckets
                .iter()
                .map(|&(k, units, last_nanos)| (k.to_string(), BucketState { units, last_nanos }))
                .collect(),
        }
    }

    fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
        Policy::new(version, capacity, rate).expect("a valid policy")
    }

    #[test]
    fn a_bucket_stored_at_its_own_time_or_at_the_observed_time_is_the_same_state() {
        // The seed's cutover: one token at 0.5 s under 4 tokens/s is two tokens at 0.75 s.
        let p = policy(2, 20, 4);
        let own_time = snapshot(p, 750_000_000, &[("j", 1_000_000_000, 500_000_000)]);
        let at_observed = snapshot(p, 750_000_000, &[("j", 2_000_000_000, 750_000_000)]);
        assert_eq!(compare(&own_time, &at_observed), Ok(()));
        assert_eq!(compare(&at_observed, &own_time), Ok(()));
        // A full bucket may be dated anywhere before: the clamp makes it full either way.
        let full_early = snapshot(p, 750_000_000, &[("j", 20_000_000_000, 0)]);
        let full_now = snapshot(p, 750_000_000, &[("j", 20_000_000_000, 750_000_000)]);
        assert!(same(&full_early, &full_now));
    }

    #[test]
    fn each_difference_is_named_in_order_policy_time_keys_balance() {
        let p = policy(1, 10, 2);
        let base = snapshot(p, 500, &[("a", 5, 500), ("b", 7, 500)]);
        let other_policy = Snapshot {
            policy: policy(2, 10, 2),
            ..base.clone()
        };
        assert!(matches!(
            compare(&other_policy, &base),
            Err(StateDifference::Policy { .. })
        ));
        let other_time = Snapshot {
            observed_nanos: 600,
            ..base.clone()
        };
        assert_eq!(
            compare(&other_time, &base),
            Err(StateDifference::Observed {
                got: 600,
                want: 500
            })
        );
        let fewer = snapshot(p, 500, &[("a", 5, 500)]);
        assert!(matches!(
            compare(&fewer, &base),
            Err(StateDifference::Keys { .. })
        ));
        let poorer = snapshot(p, 500, &[("a", 5, 500), ("b", 6, 500)]);
        let diff = compare(&poorer, &base).expect_err("b differs");
        assert_eq!(
            diff.to_string(),
            "for \"b\" the design stored 6 units as of 500 ns and the specification 7 units as of 500 ns: \
             at the observed time 500 ns that is a balance of 6 units against 7"
        );
    }

    #[test]
    fn a_broken_snapshot_saturates_instead_of_overflowing() {
        let p = policy(1, 1, i64::MAX as u64);
        let b = BucketState {
            units: u128::MAX,
            last_nanos: 0,
        };
        assert_eq!(balance_at(&b, &p, u64::MAX), 1_000_000_000);
    }
}
