//! The numbers a walkthrough is about, written on its picture rather than only in the hover
//! text: each key's balance in tokens where it settles at an instant, and the retry estimate
//! of the last rejection at an instant. Every number is exact (tokens as a decimal of the
//! units, nanoseconds whole), or marked `≈` when it has too many digits to print.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use ratelimit_lab_model::{Op, Outcome};

use super::build::Verified;
use super::picture_layout::{Layout, KEY_COLOURS, LEFT, REJECTED, WIDTH};
use super::picture_place::{around, text_width, Anchor, Placer, Spot, HALO};
use super::picture_plot::{before, keys_of};
use ratelimit_lab::lesson::words::shown_key;

use super::picture_text::{escape, retry_label, token_label};

/// `true` when step `i` is the last step at its instant.
fn last_at_instant(l: &Layout, i: usize) -> bool {
    l.times.get(i + 1) != l.times.get(i)
}

/// Each key's balance after the last step of every instant, in tokens, just above the line
/// right of the step (class `balance-label`), written only when it differs from the key's
/// label before, and moved off any label or mark already there. Keys whose lines meet there
/// (the same balance at the same step) share one label that names them: `0 (a, b)`.
pub(super) fn balance_labels(svg: &mut String, v: &Verified, l: &Layout, placer: &mut Placer) {
    let keys = keys_of(v);
    let mut shown: BTreeMap<&str, u128> = BTreeMap::new();
    for (i, checked) in v.steps.iter().enumerate() {
        if !last_at_instant(l, i) {
            continue;
        }
        // The keys to label at this step, by balance: each balance's keys in order.
        let mut by_units: BTreeMap<u128, Vec<(usize, &str)>> = BTreeMap::new();
        for (k, key) in keys.iter().enumerate() {
            let Some(&units) = checked.balances.get(*key) else {
                shown.remove(key.as_str());
                continue;
            };
            if shown.get(key.as_str()) == Some(&units) {
                continue;
            }
            shown.insert(key, units);
            by_units.entry(units).or_default().push((k, key.as_str()));
        }
        // From the top of the plot down, so that a label moved down meets the next one.
        for (units, group) in by_units.into_iter().rev() {
            let value = token_label(units);
            let (colour, names) = match group.as_slice() {
                [(k, _)] => (KEY_COLOURS[k % KEY_COLOURS.len()], String::new()),
                _ => (
                    "#333",
                    format!(
                        " ({})",
                        group
                            .iter()
                            .map(|(_, key)| shown_key(key))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            };
            let (x, y) = (l.xs[i], l.y(units));
            let mut spots = vec![
                Spot::new(x + 8.0, y - 5.0, Anchor::Start),
                Spot::new(x + 8.0, y + 13.0, Anchor::Start),
                Spot::new(x - 8.0, y + 13.0, Anchor::End),
            ];
            spots.extend(around(
                x + 8.0,
                y,
                Anchor::Start,
                &[0.0, 12.0, 24.0, 36.0],
                &[-5.0, 13.0, -17.0, 25.0, -29.0],
            ));
            let width = text_width(&value) * 1.1 + text_width(&names);
            let Some(spot) = placer.place(
                &format!("{value}{names}"),
                width,
                &spots,
                (LEFT + 2.0, WIDTH - 4.0),
            ) else {
                continue;
            };
            let names = if names.is_empty() {
                names
            } else {
                format!("<tspan font-weight=\"normal\">{}</tspan>", escape(&names))
            };
            let _ = writeln!(
                svg,
                "<text class=\"balance-label\" {} data-step=\"{}\" {} fill=\"{colour}\" font-weight=\"bold\" {HALO}>{}{names}</text>",
                key_attribute(&group),
                i + 1,
                spot.attrs(),
                escape(&value)
            );
        }
    }
}

/// The keys a balance label names, as an attribute: `data-key="k"` for one key, and for keys
/// whose lines meet, `data-keys` holding them as a JSON array (a key may hold any character,
/// a space or a comma included).
fn key_attribute(group: &[(usize, &str)]) -> String {
    match group {
        [(_, key)] => format!("data-key=\"{}\"", escape(key)),
        _ => {
            let keys: Vec<&str> = group.iter().map(|(_, key)| *key).collect();
            let json = serde_json::to_string(&keys).unwrap_or_default();
            format!("data-keys=\"{}\"", escape(&json))
        }
    }
}

/// The retry estimate of the last rejection at each instant, above its cost (class
/// `retry-label`), or wherever near it nothing is written yet, inside the plot.
pub(super) fn retry_labels(svg: &mut String, v: &Verified, l: &Layout, placer: &mut Placer) {
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
        let label = retry_label(d.retry_after_nanos);
        let (x, y) = (l.xs[i], l.y(before(v, l, i, key)));
        let mut spots = vec![
            Spot::new(x, y - 21.0, Anchor::Middle),
            Spot::new(x + 9.0, y + 4.0, Anchor::Start),
            Spot::new(x - 9.0, y + 4.0, Anchor::End),
        ];
        spots.extend(around(
            x,
            y,
            Anchor::Middle,
            &[0.0, 30.0, -30.0, 60.0, -60.0, 90.0, -90.0],
            &[-21.0, -33.0, 29.0, -45.0, 41.0, -57.0, 53.0, -69.0],
        ));
        let Some(spot) = placer.place(
            &label,
            text_width(&label),
            &spots,
            (LEFT + 4.0, WIDTH - 4.0),
        ) else {
            continue;
        };
        let _ = writeln!(
            svg,
            "<text class=\"retry-label\" data-step=\"{}\" {} fill=\"{REJECTED}\" {HALO}>{}</text>",
            i + 1,
            spot.attrs(),
            escape(&label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::key_attribute;

    #[test]
    fn a_shared_label_names_its_keys_as_a_json_array() {
        assert_eq!(key_attribute(&[(0, "a b")]), "data-key=\"a b\"");
        assert_eq!(
            key_attribute(&[(0, "a b"), (1, "c")]),
            "data-keys=\"[&quot;a b&quot;,&quot;c&quot;]\""
        );
    }
}
