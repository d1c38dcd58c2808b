//! A walkthrough in words: outcomes, balances and policies as the lesson writes them, for
//! tables, fixtures and pictures alike.
use std::collections::BTreeMap;

use crate::model::{Op, Outcome};
use crate::{Policy, UNITS_PER_TOKEN};

use super::CheckedStep;

/// The outcome in the lesson's style, followed by the lesson's own words when they say more.
pub fn outcome_cell(outcome: &Outcome, seed: Option<&str>) -> String {
    let text = describe_outcome(outcome);
    match seed {
        Some(words) if !text.starts_with(words) => format!("{text} (lesson: {words})"),
        _ => text,
    }
}

/// A step's outcome cell: [`outcome_cell`], preceded for a step of many callers by their
/// counts (`20 callers at once: 10 allowed, 10 rejected; the last: ...`).
pub fn step_outcome(checked: &CheckedStep, seed: Option<&str>) -> String {
    let cell = outcome_cell(&checked.outcome, seed);
    match checked.contenders {
        None => cell,
        Some(c) => format!(
            "{} callers at once: {} allowed, {} rejected; the last: {cell}",
            c.threads, c.allowed, c.rejected
        ),
    }
}

/// An outcome in the lesson's style: `Allowed; 9 tokens remain`, `Rejected; retry after 500000000
/// ns; 0 tokens remain`, `Error: ...`.
pub fn describe_outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Decision(d) if d.allowed => format!("Allowed; {}", remain(d.whole_tokens)),
        Outcome::Decision(d) => format!(
            "Rejected; retry after {} ns; {}",
            d.retry_after_nanos,
            remain(d.whole_tokens)
        ),
        Outcome::Evicted { removed } => format!("Evicted {removed}"),
        Outcome::Replaced => "Replaced".to_owned(),
        Outcome::KeyCount { keys } => keys_tracked(*keys),
        Outcome::Snapshot { state: None } => "No snapshot".to_owned(),
        Outcome::Snapshot { state: Some(state) } => {
            format!("State: {}", crate::model::same_state::InWords(state))
        }
        Outcome::Error(e) => format!("Error: {e}"),
    }
}

/// `0 tokens remain`, `1 token remains`: whole tokens, as a decision reports them.
pub fn remain(whole_tokens: u64) -> String {
    if whole_tokens == 1 {
        "1 token remains".to_owned()
    } else {
        format!("{whole_tokens} tokens remain")
    }
}

/// `1 key tracked`, `3 keys tracked`.
pub fn keys_tracked(keys: usize) -> String {
    if keys == 1 {
        "1 key tracked".to_owned()
    } else {
        format!("{keys} keys tracked")
    }
}

/// A key as a person can read it: itself, or its code points when it has no visible
/// character (a key of one no-break space reads `U+00A0`).
pub fn shown_key(key: &str) -> String {
    if key.chars().any(|c| !c.is_whitespace() && !c.is_control()) {
        key.to_owned()
    } else {
        key.chars()
            .map(|c| format!("U+{:04X}", u32::from(c)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `policy v1: capacity 10, 2 tokens/s`.
pub fn describe_policy(p: &Policy) -> String {
    format!(
        "policy v{}: capacity {}, {} tokens/s",
        p.version(),
        p.capacity(),
        p.tokens_per_second()
    )
}

/// The model's exact balance after the step: the touched key for `allow`, every key (and the
/// policy, for `replace_policy`) otherwise.
pub fn state_after(checked: &CheckedStep, op: &Op) -> String {
    match op {
        Op::Allow { key, .. } => match checked.balances.get(key) {
            Some(&units) => balance(key, units),
            None => format!(
                "{}: not tracked ({})",
                shown_key(key),
                keys_tracked(checked.balances.len())
            ),
        },
        Op::EvictFull { .. } | Op::KeyCount | Op::Snapshot => all_balances(&checked.balances),
        Op::ReplacePolicy { .. } => format!(
            "v{} (capacity {}, {}/s); {}",
            checked.snapshot.policy.version(),
            checked.snapshot.policy.capacity(),
            checked.snapshot.policy.tokens_per_second(),
            all_balances(&checked.balances)
        ),
    }
}

/// Every key's balance, `;`-separated, or `no keys tracked`.
pub fn all_balances(balances: &BTreeMap<String, u128>) -> String {
    if balances.is_empty() {
        return "no keys tracked".to_owned();
    }
    balances
        .iter()
        .map(|(key, &units)| balance(key, units))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `k: 0.5 tokens (500000000 units)`.
pub fn balance(key: &str, units: u128) -> String {
    let unit = u128::from(UNITS_PER_TOKEN);
    let noun = if units == unit { "token" } else { "tokens" };
    format!(
        "{}: {} {noun} ({units} units)",
        shown_key(key),
        tokens(units)
    )
}

/// Exact decimal tokens: `10`, `0.5`, `0.999999999`.
pub fn tokens(units: u128) -> String {
    let unit = u128::from(UNITS_PER_TOKEN);
    let (whole, fraction) = (units / unit, units % unit);
    if fraction == 0 {
        whole.to_string()
    } else {
        let digits = format!("{fraction:09}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_exact_decimals() {
        assert_eq!(tokens(0), "0");
        assert_eq!(tokens(500_000_000), "0.5");
        assert_eq!(tokens(999_999_999), "0.999999999");
        assert_eq!(tokens(10_000_000_000), "10");
        assert_eq!(tokens(1_000_000_002), "1.000000002");
        assert_eq!(balance("k", 1_000_000_000), "k: 1 token (1000000000 units)");
        assert_eq!(balance("k", 500_000_000), "k: 0.5 tokens (500000000 units)");
        assert_eq!(balance("\u{a0}", 0), "U+00A0: 0 tokens (0 units)");
        assert_eq!(keys_tracked(1), "1 key tracked");
        assert_eq!(keys_tracked(2), "2 keys tracked");
    }

    #[test]
    fn lesson_words_are_added_only_when_they_say_more() {
        let rejected = Outcome::Decision(crate::Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos: 500_000_000,
        });
        assert_eq!(
            outcome_cell(&rejected, Some("Rejected; retry after 500000000 ns")),
            "Rejected; retry after 500000000 ns; 0 tokens remain"
        );
        assert_eq!(
            outcome_cell(&rejected, Some("Rejected; half a token accumulated")),
            "Rejected; retry after 500000000 ns; 0 tokens remain (lesson: Rejected; half a token accumulated)"
        );
    }
}
