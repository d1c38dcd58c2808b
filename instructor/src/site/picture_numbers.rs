//! The numbers a walkthrough is about, written on its picture rather than only in the hover
//! text: each key's balance in tokens where it settles at an instant, and the retry estimate
//! of the last rejection at an instant. Every number is exact (tokens as a decimal of the
//! units, nanoseconds whole), or marked `≈` when it has too many digits to print.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use ratelimit_lab_model::{Op, Outcome};

use super::build::Verified;
use super::picture_layout::{Layout, KEY_COLOURS, REJECTED};
use super::picture_plot::{before, keys_of};
use super::picture_text::{escape, retry_label, token_label};

/// `true` when step `i` is the last step at its instant.
fn last_at_instant(l: &Layout, i: usize) -> bool {
    l.times.get(i + 1) != l.times.get(i)
}

/// Each key's balance after the last step of every instant, in tokens, just above the line
/// right of the step (class `balance-label`), written only when it differs from the key's label before.
pub(super) fn balance_labels(svg: &mut String, v: &Verified, l: &Layout) {
    let keys = keys_of(v);
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
