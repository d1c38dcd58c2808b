//! Around the plot of a walkthrough's picture: one lane per baseline and per contrasted
//! design under the time axis, and the legend above.
use std::collections::BTreeSet;
use std::fmt::Write as _;

use ratelimit_lab::lesson::words::describe_outcome;
use ratelimit_lab::lesson::Answer;

use super::build::Verified;
use super::picture_layout::{
    Layout, ADMITTED, AXIS_HEIGHT, CONTRAST_HEIGHT, KEY_COLOURS, LANE_HEIGHT, LEFT, OTHERWISE,
    REFUSED, REJECTED, RIGHT, WIDTH,
};
use ratelimit_lab::lesson::words::shown_key;

use super::picture_text::escape;

/// The rows the baselines take under the time axis: a heading that says what they are (other
/// algorithms, right by their own rules, so that none is read as a wrong design), then one
/// lane each; none without baselines.
pub(super) fn baseline_rows(lanes: &[&str]) -> usize {
    if lanes.is_empty() {
        0
    } else {
        lanes.len() + 1
    }
}

/// The baselines' heading and one lane per baseline under the time axis: its verdict on each
/// call.
pub(super) fn baseline_lanes(svg: &mut String, v: &Verified, l: &Layout, lanes: &[&str]) {
    if !lanes.is_empty() {
        let _ = writeln!(
            svg,
            "<text class=\"baselines\" x=\"{LEFT}\" y=\"{:.1}\" fill=\"#555\">baselines: other algorithms, each right by its own rule (green admitted, red rejected)</text>",
            l.bottom() + AXIS_HEIGHT + 12.0
        );
    }
    for (row, name) in lanes.iter().enumerate() {
        let y = l.bottom() + AXIS_HEIGHT + LANE_HEIGHT * (row + 1) as f64 + 10.0;
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#333\">{}</text>",
            LEFT - 6.0,
            y + 4.0,
            name.replace('_', " ")
        );
        for (i, checked) in v.steps.iter().enumerate() {
            let Some(verdict) = checked.beside.get(*name) else {
                continue;
            };
            let x = l.xs[i];
            let (class, colour) = match verdict {
                Answer::Admitted => ("admitted", ADMITTED),
                Answer::Rejected => ("rejected", REJECTED),
            };
            let _ = writeln!(
                svg,
                "<circle class=\"beside {class}\" data-baseline=\"{name}\" data-step=\"{}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{colour}\"><title>step {}: {} {verdict}</title></circle>",
                i + 1,
                i + 1,
                name.replace('_', " ")
            );
        }
    }
}

/// One lane per contrasted wrong design, under the baselines': a hollow square where it
/// answers otherwise than the right outcome (its answer on hover; not the rejection's cross,
/// since the wrong answer may be an admission), a small grey dot where it agrees.
pub(super) fn contrast_lanes(svg: &mut String, v: &Verified, l: &Layout, first_row: usize) {
    for (row, name) in v.source.walkthrough.contrast.iter().enumerate() {
        let top = l.bottom()
            + AXIS_HEIGHT
            + LANE_HEIGHT * first_row as f64
            + CONTRAST_HEIGHT * row as f64;
        let y = top + 23.0;
        let _ = writeln!(
            svg,
            "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"{OTHERWISE}\" font-size=\"11\">{} (a catalogued wrong design): a hollow square where it answers otherwise</text>",
            top + 12.0,
            escape(name)
        );
        for (i, checked) in v.steps.iter().enumerate() {
            let x = l.xs[i];
            match checked.contrast.get(name) {
                Some(wrong) => {
                    let _ = writeln!(
                        svg,
                        "<g class=\"contrast wrong\" data-design=\"{name}\" data-step=\"{n}\"><title>step {n}: {name} returns {}; the right outcome is {}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"{OTHERWISE}\" stroke-width=\"2\"/></g>",
                        escape(&describe_outcome(wrong)),
                        escape(&describe_outcome(&checked.outcome)),
                        x - 4.0,
                        y - 4.0,
                        name = escape(name),
                        n = i + 1
                    );
                }
                None => {
                    let _ = writeln!(
                        svg,
                        "<circle class=\"contrast same\" data-design=\"{}\" data-step=\"{}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2\" fill=\"#bbb\"/>",
                        escape(name),
                        i + 1
                    );
                }
            }
        }
    }
}

pub(super) fn legend(svg: &mut String, v: &Verified) {
    let keys: BTreeSet<&String> = v.steps.iter().flat_map(|s| s.balances.keys()).collect();
    let mut x = WIDTH - RIGHT;
    let mut items: Vec<String> = Vec::new();
    let mut place = |text: &str, mark: &dyn Fn(f64) -> String| {
        let width = 18.0 + 6.5 * text.chars().count() as f64;
        x -= width;
        items.push(format!(
            "{}<text x=\"{:.1}\" y=\"12\" fill=\"#333\">{}</text>",
            mark(x),
            x + 10.0,
            escape(text)
        ));
    };
    if v.steps.iter().any(|s| s.contenders.is_some()) {
        // The mark of many callers at once: how many and their cost, then how many passed.
        place(
            "callers×cost at once: n✓ admitted, n✗ rejected",
            &|x| {
                format!(
                "<rect x=\"{:.1}\" y=\"4\" width=\"8\" height=\"8\" fill=\"{ADMITTED}\" stroke=\"{REJECTED}\" stroke-width=\"2\"/>",
                x - 1.0
            )
            },
        );
    }
    place("refused", &|x| {
        format!(
            "<path d=\"M{:.1},4 l4,4 l-4,4 l-4,-4 z\" fill=\"{REFUSED}\"/>",
            x + 3.0
        )
    });
    place("rejected", &|x| {
        format!(
            "<path d=\"M{:.1},4 l7,7 m0,-7 l-7,7\" stroke=\"{REJECTED}\" stroke-width=\"2\"/>",
            x
        )
    });
    place("admitted", &|x| {
        format!(
            "<circle cx=\"{:.1}\" cy=\"8\" r=\"4\" fill=\"{ADMITTED}\"/>",
            x + 3.0
        )
    });
    for (k, key) in keys.iter().enumerate().rev() {
        let colour = KEY_COLOURS[k % KEY_COLOURS.len()];
        place(&format!("key {}", shown_key(key)), &|x| {
            format!(
                "<line x1=\"{x:.1}\" y1=\"8\" x2=\"{:.1}\" y2=\"8\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                x + 8.0
            )
        });
    }
    let _ = writeln!(svg, "<g class=\"legend\">{}</g>", items.concat());
}
