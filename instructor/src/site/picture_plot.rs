//! The plot of a walkthrough's picture: the axes, the capacity in force, cutovers and
//! evictions, each key's balance line and a mark for every request.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ratelimit_lab::lesson::words::{step_outcome, tokens};
use ratelimit_lab::Policy;
use ratelimit_lab_model::{Op, Outcome};

use super::build::Verified;
use super::picture_layout::{
    ceiling, Layout, ADMITTED, KEY_COLOURS, LEFT, PLOT_HEIGHT, REFUSED, REJECTED, RIGHT, TOP, WIDTH,
};
use super::picture_text::{compact, escape, seconds};

pub(super) fn axes(svg: &mut String, l: &Layout) {
    let bottom = TOP + PLOT_HEIGHT;
    let _ = writeln!(
        svg,
        "<g class=\"axes\" stroke=\"#999\"><line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{bottom}\"/><line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{:.1}\" y2=\"{bottom}\"/></g>",
        WIDTH - RIGHT
    );
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        LEFT - 6.0,
        bottom + 4.0
    );
    let mut last_label = f64::NEG_INFINITY;
    for &(t, x) in &l.instants {
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{bottom}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
            bottom + 4.0
        );
        if x - last_label >= 64.0 {
            let _ = writeln!(
                svg,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                bottom + 16.0,
                seconds(t)
            );
            last_label = x;
        }
    }
}

/// The capacity in force, as a dashed line that steps at each cutover.
pub(super) fn capacity_line(svg: &mut String, v: &Verified, l: &Layout) {
    let mut policy = v.source.walkthrough.policy;
    let mut x0 = LEFT;
    let mut segments = Vec::new();
    for (i, checked) in v.steps.iter().enumerate() {
        if checked.snapshot.policy != policy {
            segments.push((x0, l.xs[i], policy));
            policy = checked.snapshot.policy;
            x0 = l.xs[i];
        }
    }
    segments.push((x0, WIDTH - RIGHT, policy));
    for (a, b, p) in segments {
        let y = l.y(ceiling(&p));
        let _ = writeln!(
            svg,
            "<line class=\"capacity\" x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{b:.1}\" y2=\"{y:.1}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>"
        );
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">cap {}</text>",
            LEFT - 6.0,
            y + 4.0,
            compact(u128::from(p.capacity()))
        );
    }
}

/// Cutovers and evictions: a vertical rule with a label.
pub(super) fn markers_of_events(svg: &mut String, v: &Verified, l: &Layout) {
    for (i, (step, checked)) in v.source.walkthrough.steps.iter().zip(&v.steps).enumerate() {
        let label = match (&step.op, &checked.outcome) {
            (Op::ReplacePolicy { next, .. }, Outcome::Replaced) => format!(
                "cutover to v{} ({} cap, {}/s)",
                next.version(),
                compact(u128::from(next.capacity())),
                compact(u128::from(next.tokens_per_second()))
            ),
            (Op::ReplacePolicy { next, .. }, _) => {
                format!("cutover to v{} refused", next.version())
            }
            (Op::EvictFull { .. }, Outcome::Evicted { removed }) => {
                format!("evict_full: {removed} removed")
            }
            _ => continue,
        };
        let x = l.xs[i];
        let _ = writeln!(
            svg,
            "<g class=\"event\" data-step=\"{n}\"><line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"2 3\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\">{}</text></g>",
            TOP + PLOT_HEIGHT,
            x + 3.0,
            TOP - 20.0,
            escape(&label),
            n = i + 1
        );
    }
}

/// Every key the walkthrough tracks at some step, in order: a key's place here is its colour
/// in [`KEY_COLOURS`], for its line and its labels alike.
pub(super) fn keys_of(v: &Verified) -> BTreeSet<&String> {
    v.steps.iter().flat_map(|s| s.balances.keys()).collect()
}

/// Each key's balance: refill slopes between steps (flat once full), a drop at each spend.
pub(super) fn balance_lines(svg: &mut String, v: &Verified, l: &Layout) {
    for (k, key) in keys_of(v).iter().enumerate() {
        let colour = KEY_COLOURS[k % KEY_COLOURS.len()];
        let mut paths: Vec<String> = Vec::new();
        let mut current: Option<(f64, u64, u128)> = None; // x, time, units after the last step
        let mut d = String::new();
        let mut policy = v.source.walkthrough.policy;
        for (i, checked) in v.steps.iter().enumerate() {
            let (x, t) = (l.xs[i], l.times[i]);
            match (current, checked.balances.get(*key)) {
                (Some(from), Some(&after)) => {
                    slope(&mut d, l, &policy, from, (x, t));
                    let _ = write!(d, " L{x:.1},{:.1}", l.y(after));
                    current = Some((x, t, after));
                }
                (None, Some(&after)) => {
                    // A new key: it starts full (at the step's policy), then spends.
                    let start = ceiling(&checked.snapshot.policy).max(after);
                    let _ = write!(d, "M{x:.1},{:.1} L{x:.1},{:.1}", l.y(start), l.y(after));
                    current = Some((x, t, after));
                }
                (Some(from), None) => {
                    // Evicted: the line refills up to this step, then ends.
                    slope(&mut d, l, &policy, from, (x, t));
                    paths.push(std::mem::take(&mut d));
                    current = None;
                }
                (None, None) => {}
            }
            policy = checked.snapshot.policy;
        }
        if let Some((x, _, units)) = current {
            let _ = write!(
                d,
                " L{:.1},{:.1}",
                (x + 14.0).min(WIDTH - RIGHT),
                l.y(units)
            );
        }
        paths.push(d);
        for d in paths.into_iter().filter(|d| !d.is_empty()) {
            let _ = writeln!(
                svg,
                "<path class=\"balance\" data-key=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                escape(key)
            );
        }
    }
}

/// `key`'s balance just before step `i` (index from 0) decides: its balance after the last
/// step that tracked it, refilled to step `i`'s instant under the policy then in force and
/// capped at its capacity; a key not tracked starts full. Exact, in units.
pub(super) fn before(v: &Verified, l: &Layout, i: usize, key: &str) -> u128 {
    let policy = match i {
        0 => v.source.walkthrough.policy,
        _ => v.steps[i - 1].snapshot.policy,
    };
    let cap = ceiling(&policy);
    let last = (0..i)
        .rev()
        .map_while(|j| v.steps[j].balances.get(key).map(|&u| (j, u)))
        .next();
    match last {
        None => cap,
        Some((j, units)) => refill(units, l.times[i].saturating_sub(l.times[j]), &policy),
    }
}

/// `units` refilled over `elapsed` nanoseconds under `policy`, capped at its capacity.
fn refill(units: u128, elapsed: u64, policy: &Policy) -> u128 {
    units
        .saturating_add(u128::from(elapsed).saturating_mul(u128::from(policy.tokens_per_second())))
        .min(ceiling(policy))
}

/// Draws the refill slope of a balance `from` (x, time, units) to the step at `to` (x, time)
/// under `policy`: up the slope, flat from where the bucket fills.
fn slope(d: &mut String, l: &Layout, policy: &Policy, from: (f64, u64, u128), to: (f64, u64)) {
    let ((x0, t0, u0), (x, t)) = (from, to);
    let cap = ceiling(policy);
    let level = refill(u0, t.saturating_sub(t0), policy);
    if level == cap && u0 < cap && t > t0 {
        // Full before this step: the slope meets the capacity, then runs flat.
        let fill = (cap - u0).div_ceil(u128::from(policy.tokens_per_second()).max(1));
        let t_full = t0.saturating_add(u64::try_from(fill).unwrap_or(u64::MAX));
        let xf = Layout::between(x0, x, t0, t, t_full.min(t));
        let _ = write!(d, " L{xf:.1},{:.1}", l.y(cap));
    }
    let _ = write!(d, " L{x:.1},{:.1}", l.y(level));
}

/// One mark per `allow`: a filled circle when admitted, a cross when rejected, a diamond when
/// refused with an error; the cost beside it.
pub(super) fn requests(svg: &mut String, v: &Verified, l: &Layout) {
    let w = &v.source.walkthrough;
    let mut last_units: BTreeMap<&str, u128> = BTreeMap::new();
    for (i, (step, checked)) in w.steps.iter().zip(&v.steps).enumerate() {
        let Op::Allow { key, cost, now } = &step.op else {
            for (k, units) in &checked.balances {
                last_units.insert(k, *units);
            }
            continue;
        };
        let after = checked.balances.get(key).copied();
        // Refused calls change nothing: the mark sits where the key's balance stands.
        let units = match &checked.outcome {
            Outcome::Decision(_) => before(v, l, i, key),
            _ => after
                .or_else(|| last_units.get(key.as_str()).copied())
                .unwrap_or(0),
        };
        let (x, y) = (l.xs[i], l.y(units));
        let words = format!(
            "step {}: {} (cost {cost} at {now} ns): {}{}",
            i + 1,
            step.action,
            step_outcome(checked, None),
            after.map_or_else(String::new, |u| format!(
                "; {key}: {} tokens ({u} units)",
                tokens(u)
            ))
        );
        let (class, mark, label) = match (&checked.outcome, checked.contenders) {
            (_, Some(c)) => (
                "contended",
                format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{ADMITTED}\" stroke=\"{REJECTED}\" stroke-width=\"2\"/>",
                    x - 5.0,
                    y - 5.0
                ),
                format!(
                    "{}×{}: {}✓ {}✗",
                    c.threads,
                    compact(u128::from(*cost)),
                    c.allowed,
                    c.rejected
                ),
            ),
            (Outcome::Decision(d), None) if d.allowed => (
                "admitted",
                format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"{ADMITTED}\"/>"),
                format!("−{}", compact(u128::from(*cost))),
            ),
            (Outcome::Decision(_), None) => (
                "rejected",
                format!(
                    "<path d=\"M{:.1},{:.1} l9,9 m0,-9 l-9,9\" stroke=\"{REJECTED}\" stroke-width=\"2.2\"/>",
                    x - 4.5,
                    y - 4.5
                ),
                format!("✗{}", compact(u128::from(*cost))),
            ),
            (_, None) => (
                "refused",
                format!(
                    "<path d=\"M{x:.1},{:.1} l5,5 l-5,5 l-5,-5 z\" fill=\"{REFUSED}\"/>",
                    y - 5.0
                ),
                "!".to_owned(),
            ),
        };
        // Many callers' counts go to the right of their mark; a single call's cost above it.
        let (lx, ly, anchor) = if class == "contended" {
            (x + 9.0, y + 14.0, "start")
        } else {
            (x, y - 8.0, "middle")
        };
        let _ = writeln!(
            svg,
            "<g class=\"request {class}\" data-step=\"{n}\"><title>{}</title>{mark}<text x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"{anchor}\" fill=\"#222\">{}</text></g>",
            escape(&words),
            escape(&label),
            n = i + 1
        );
        if let Some(u) = after {
            last_units.insert(key, u);
        }
    }
}
