//! How a difference between a design and the specification is told: keys an eviction
//! removed, what changed between two snapshots, and a note on why two outcomes differ (the
//! retry estimate's rounding, the whole tokens reported).
use crate::model::{Outcome, ShownKey};
use crate::{Decision, Snapshot};

/// ` ("a", "b")`: the keys an eviction removed, at most five named; nothing when none.
pub(crate) fn removed_keys<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    let keys: Vec<&String> = keys.collect();
    if keys.is_empty() {
        return String::new();
    }
    let mut named: Vec<String> = keys
        .iter()
        .take(5)
        .map(|k| ShownKey(k).to_string())
        .collect();
    if keys.len() > 5 {
        named.push(format!("… {} more", keys.len() - 5));
    }
    format!(" ({})", named.join(", "))
}

/// What changed between two snapshots, field by field: the observed time, the policy, keys
/// added or removed, and stored buckets.
pub(crate) fn snapshot_change(before: &Snapshot, after: Option<&Snapshot>) -> String {
    let Some(after) = after else {
        return "the design stopped reporting a snapshot".to_owned();
    };
    let mut changes = Vec::new();
    if before.observed_nanos != after.observed_nanos {
        changes.push(format!(
            "the observed time went from {} ns to {} ns",
            before.observed_nanos, after.observed_nanos
        ));
    }
    if before.policy != after.policy {
        changes.push(format!(
            "the policy went from {} to {}",
            before.policy, after.policy
        ));
    }
    for (key, b) in &after.buckets {
        match before.buckets.get(key) {
            None => changes.push(format!("{} was added", ShownKey(key))),
            Some(was) if was != b => changes.push(format!(
                "{} went from {} units at {} ns to {} units at {} ns",
                ShownKey(key),
                was.units,
                was.last_nanos,
                b.units,
                b.last_nanos
            )),
            Some(_) => {}
        }
    }
    for key in before.buckets.keys() {
        if !after.buckets.contains_key(key) {
            changes.push(format!("{} was removed", ShownKey(key)));
        }
    }
    if changes.is_empty() {
        "the snapshot differs".to_owned()
    } else {
        changes.join("; ")
    }
}

/// A short explanation of how two outcomes differ, in the seed's terms.
pub(crate) fn difference_note(expected: &Outcome, got: &Outcome) -> String {
    match (expected, got) {
        (Outcome::Decision(e), Outcome::Decision(g)) => {
            let mut notes = Vec::new();
            if e.allowed != g.allowed {
                notes.push(if e.allowed {
                    "the refilled budget covered the cost, yet the design rejected it".to_string()
                } else {
                    "the refilled budget did not cover the cost, yet the design admitted it (R1)".to_string()
                });
            }
            if e.whole_tokens != g.whole_tokens {
                notes.push(format!(
                    "whole tokens left: expected {}, got {}",
                    e.whole_tokens, g.whole_tokens
                ));
            }
            if e.retry_after_nanos != g.retry_after_nanos {
                notes.push(retry_note(e, g));
            }
            notes.join("; ")
        }
        (Outcome::Error(e), Outcome::Error(g)) => format!(
            "both refused, with different errors: expected \"{e}\", got \"{g}\" (see LimitError for which error wins)"
        ),
        (Outcome::Error(e), _) => format!("the design accepted a call the contract refuses with \"{e}\""),
        (_, Outcome::Error(g)) => format!("the design refused with \"{g}\" a call the contract accepts"),
        _ => String::new(),
    }
}

pub(crate) fn retry_note(e: &Decision, g: &Decision) -> String {
    let (want, got) = (e.retry_after_nanos, g.retry_after_nanos);
    let why = if got < want {
        format!(
            "too early by {} ns: the request would still fail then",
            want - got
        )
    } else if want == crate::MAX_QUANTITY {
        // The true wait is longer than either number: only the cap differs.
        format!(
            "the true wait exceeds both; the contract caps the estimate at {} (MAX_QUANTITY, \
             i64::MAX), not above",
            crate::MAX_QUANTITY
        )
    } else {
        format!(
            "too late by {} ns: the request would already pass {want} ns after the call",
            got - want
        )
    };
    format!("retry_after_nanos: expected {want}, got {got} ({why})")
}
