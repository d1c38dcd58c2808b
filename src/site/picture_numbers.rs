//! The numbers a walkthrough is about, written on its picture rather than only in the hover
//! text: each key's balance in tokens where it settles at an instant, and the retry estimate
//! of the last rejection at an instant. Every number is exact (tokens as a decimal of the
//! units, nanoseconds whole), or marked `≈` when it has too many digits to print.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::lesson::words::tokens;
use crate::model::{Op, Outcome};

use super::build::Verified;
use super::picture_layout::{Layout, KEY_COLOURS, REJECTED};
use super::picture_plot::before;
use super::picture_text::{compact, escape};

/// At most this many characters of an exact number; a longer one is written compactly.
const DIGITS: usize = 12;

/// `units` as tokens for a label: exact (`0.5`, `9`), or `≈9.2e18` when too long.
fn token_label(units: u128) -> String {
    let exact = tokens(units);
    if exact.len() <= DIGITS {
        exact
    } else {
        compact(units / u128::from(crate::UNITS_PER_TOKEN))
    }
}

/// Nanoseconds for a label: `retry 500000000 ns`, or `retry ≈1.8e19 ns`.
fn retry_label(nanos: u64) -> String {
    let exact = nanos.to_string();
    if exact.len() <= DIGITS {
        format!("retry {exact} ns")
    } else {
        format!("retry {} ns", compact(u128::from(nanos)))
    }
}

/// `true` when step `i` is the last step at its instant.
fn last_at_instant(l: &Layout, i: usize) -> bool {
    l.times.get(i + 1) != l.times.get(i)
}

/// Each key's balance after the last step of every instant, in tokens, just above the line
/// right of the step (class `balance-label`), written only when it differs from the key's label before.
pub(super) fn balance_labels(svg: &mut String, v: &Verified, l: &Layout) {
    let keys: Vec<&String> = {
        let mut keys: Vec<&String> = v.steps.iter().flat_map(|s| s.balances.keys()).collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let mut shown: BTreeMap<&str, u128> = BTreeMap::new();
    for (i, checked) in v.steps.iter().enumerate() {
        if !last_at_instant(l, i) {
            continue;
        }
        for (k, key) in keys.iter().enumerate() {
            let Some(&units) = checked.balances.get(*key) else {
                shown.remove(key.as_str());
                continue;
            };
            if shown.get(key.as_str()) == Some(&units) {
                continue;
            }
            shown.insert(key, units);
            let _ = writeln!(
                svg,
                "<text class=\"balance-label\" data-key=\"{}\" data-step=\"{}\" x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\" font-weight=\"bold\">{}</text>",
                escape(key),
                i + 1,
                l.xs[i] + 8.0,
                l.y(units) - 5.0,
                KEY_COLOURS[k % KEY_COLOURS.len()],
                escape(&token_label(units))
            );
        }
    }
}

/// The retry estimate of the last rejection at each instant, above its cost (class
/// `retry-label`).
pub(super) fn retry_labels(svg: &mut String, v: &Verified, l: &Layout) {
    let w = &v.source.walkthrough;
    for (i, (step, checked)) in w.steps.iter().zip(&v.steps).enumerate() {
        let (Op::Allow { key, .. }, Outcome::Decision(d)) = (&step.op, &checked.outcome) else {
            continue;
        };
        if d.allowed || checked.contenders.is_some() {
            continue;
        }
        let later_rejection_here = (i + 1..w.steps.len())
            .take_while(|j| l.times[*j] == l.times[i])
            .any(|j| matches!(v.steps[j].outcome, Outcome::Decision(d) if !d.allowed));
        if later_rejection_here {
            continue;
        }
        let _ = writeln!(
            svg,
            "<text class=\"retry-label\" data-step=\"{}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{REJECTED}\">{}</text>",
            i + 1,
            l.xs[i],
            l.y(before(v, l, i, key)) - 21.0,
            escape(&retry_label(d.retry_after_nanos))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_exact_or_marked_approximate() {
        assert_eq!(token_label(500_000_000), "0.5");
        assert_eq!(token_label(1_000_000_000), "1");
        assert_eq!(
            token_label(9_223_372_036_854_775_807_000_000_000),
            "≈9.2e18"
        );
        assert_eq!(retry_label(500_000_000), "retry 500000000 ns");
        assert_eq!(retry_label(333_333_334), "retry 333333334 ns");
        assert_eq!(retry_label(u64::MAX), "retry ≈1.8e19 ns");
    }
}
