//! The plot of a walkthrough's picture: the axes, the capacity in force, cutovers and
//! evictions, each key's balance line and a mark for every request.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ratelimit_lab::lesson::words::{step_outcome, tokens};
use ratelimit_lab::Policy;
use ratelimit_lab_model::{Op, Outcome};

use super::build::Verified;
use super::picture_layout::{
    ceiling, Layout, ADMITTED, KEY_COLOURS, LEFT, REFUSED, REJECTED, RIGHT, WIDTH,
};
use super::picture_place::{around, text_width, Anchor, Placer, Rect, Spot, HALO};
use super::picture_text::{compact, escape, seconds};

pub(super) fn axes(svg: &mut String, l: &Layout, placer: &mut Placer) {
    let (top, bottom) = (l.top, l.bottom());
    let _ = writeln!(
        svg,
        "<g class=\"axes\" stroke=\"#999\"><line x1=\"{LEFT}\" y1=\"{top}\" x2=\"{LEFT}\" y2=\"{bottom}\"/><line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{:.1}\" y2=\"{bottom}\"/></g>",
        WIDTH - RIGHT
    );
    let zero = Spot::new(LEFT - 6.0, bottom + 4.0, Anchor::End);
    placer.block(Rect::of_text(text_width("0"), zero));
    let _ = writeln!(svg, "<text {}>0</text>", zero.attrs());
    let mut last_label = f64::NEG_INFINITY;
    for &(t, x) in &l.instants {
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{bottom}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
            bottom + 4.0
        );
        if x - last_label >= 64.0 {
            let label = seconds(t);
            let spot = Spot::new(x, bottom + 16.0, Anchor::Middle);
            placer.block(Rect::of_text(text_width(&label), spot));
            let _ = writeln!(svg, "<text {}>{label}</text>", spot.attrs());
            last_label = x;
        }
    }
}

/// The capacity in force, as a dashed line that steps at each cutover.
pub(super) fn capacity_line(svg: &mut String, v: &Verified, l: &Layout, placer: &mut Placer) {
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
        placer.block_line((a, y), (b, y));
        let _ = writeln!(
            svg,
            "<line class=\"capacity\" x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{b:.1}\" y2=\"{y:.1}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>"
        );
        // Left of the axis, beside its line or just off it when another label is there.
        let label = format!("cap {}", compact(u128::from(p.capacity())));
        let spots = [0.0, 11.0, -11.0, 22.0, -22.0]
            .map(|dy| Spot::new(LEFT - 6.0, y + 4.0 + dy, Anchor::End));
        if let Some(spot) = placer.place(&label, text_width(&label), &spots, (0.0, LEFT - 2.0)) {
            let _ = writeln!(
                svg,
                "<text {} fill=\"#555\" {HALO}>{label}</text>",
                spot.attrs()
            );
        }
    }
}

/// The label of every cutover and eviction: its step (from 0) and its words.
pub(super) fn event_texts(v: &Verified) -> Vec<(usize, String)> {
    let mut out = Vec::new();
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
        out.push((i, label));
    }
    out
}

/// Cutovers and evictions: a vertical rule from its label (placed by [`Layout`]) down
/// through the plot.
pub(super) fn markers_of_events(svg: &mut String, l: &Layout, placer: &mut Placer) {
    for e in &l.events {
        let x = l.xs[e.step];
        placer.block(Rect::of_text(text_width(&e.text), e.spot));
        placer.block_line((x, e.spot.y + 3.0), (x, l.bottom()));
        let _ = writeln!(
            svg,
            "<g class=\"event\" data-step=\"{n}\"><line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"2 3\"/><text {} fill=\"#333\" {HALO}>{}</text></g>",
            e.spot.y + 3.0,
            l.bottom(),
            e.spot.attrs(),
            escape(&e.text),
            n = e.step + 1
        );
    }
}

/// Every key the walkthrough tracks at some step, in order: a key's place here is its colour
/// in [`KEY_COLOURS`], for its line and its labels alike.
pub(super) fn keys_of(v: &Verified) -> BTreeSet<&String> {
    v.steps.iter().flat_map(|s| s.balances.keys()).collect()
}

/// Each key's balance: refill slopes between steps (flat once full), a drop at each spend.
pub(super) fn balance_lines(svg: &mut String, v: &Verified, l: &Layout, placer: &mut Placer) {
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
            block_path(placer, &d);
            let _ = writeln!(
                svg,
                "<path class=\"balance\" data-key=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                escape(key)
            );
        }
    }
}

/// Keeps the path `d` (`M` and `L` commands with absolute `x,y`, as drawn here) clear of
/// labels.
fn block_path(placer: &mut Placer, d: &str) {
    let mut last: Option<(f64, f64)> = None;
    for command in d.split_whitespace() {
        let Some((x, y)) = command
            .get(1..)
            .and_then(|c| c.split_once(','))
            .and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
        else {
            continue;
        };
        if let (Some(from), false) = (last, command.starts_with('M')) {
            placer.block_line(from, (x, y));
        }
        last = Some((x, y));
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
/// refused with an error; the cost beside it. Every mark is placed before any cost, so that
/// no cost is written over a later mark.
pub(super) fn requests(svg: &mut String, v: &Verified, l: &Layout, placer: &mut Placer) {
    let w = &v.source.walkthrough;
    let mut last_units: BTreeMap<&str, u128> = BTreeMap::new();
    // Each request: its step, class, mark, label, hover words and where its mark stands.
    let mut marks = Vec::new();
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
        placer.block(Rect::around(x, y, 5.0));
        marks.push((i, class, mark, label, words, x, y));
        if let Some(u) = after {
            last_units.insert(key, u);
        }
    }
    for (i, class, mark, label, words, x, y) in marks {
        // Many callers' counts go to the right of their mark; a single call's cost above it,
        // or beside or below it when that is taken.
        let mut spots = if class == "contended" {
            vec![
                Spot::new(x + 9.0, y + 14.0, Anchor::Start),
                Spot::new(x + 9.0, y - 7.0, Anchor::Start),
                Spot::new(x - 9.0, y + 14.0, Anchor::End),
            ]
        } else {
            vec![
                Spot::new(x, y - 10.0, Anchor::Middle),
                Spot::new(x + 7.0, y - 7.0, Anchor::Start),
                Spot::new(x - 7.0, y - 7.0, Anchor::End),
                Spot::new(x, y + 17.0, Anchor::Middle),
                Spot::new(x + 7.0, y + 14.0, Anchor::Start),
                Spot::new(x - 7.0, y + 14.0, Anchor::End),
            ]
        };
        spots.extend(around(
            x,
            y,
            Anchor::Middle,
            &[0.0, 16.0, -16.0, 32.0, -32.0],
            &[-10.0, 17.0, -22.0, 29.0, -34.0, 41.0],
        ));
        let text = placer
            .place(
                &label,
                text_width(&label),
                &spots,
                (LEFT + 2.0, WIDTH - 4.0),
            )
            .map_or_else(String::new, |spot| {
                format!(
                    "<text {} fill=\"#222\" {HALO}>{}</text>",
                    spot.attrs(),
                    escape(&label)
                )
            });
        let _ = writeln!(
            svg,
            "<g class=\"request {class}\" data-step=\"{n}\"><title>{}</title>{mark}{text}</g>",
            escape(&words),
            n = i + 1
        );
    }
}
