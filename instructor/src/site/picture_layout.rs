//! Where things go on a walkthrough's picture: the page's dimensions and colours, and the
//! [`Layout`] that gives every step an x and every balance a y.
use std::collections::BTreeMap;

use ratelimit_lab::{Policy, UNITS_PER_TOKEN};
use ratelimit_lab_model::Outcome;

use super::build::Verified;
use super::picture_place::{text_width, Anchor, Spot};
use super::picture_plot::event_texts;

/// Every picture's width in pixels: a lesson page's column.
pub(crate) const WIDTH: f64 = 720.0;
pub(super) const LEFT: f64 = 78.0;
pub(super) const RIGHT: f64 = 24.0;
/// Above the plot: the legend (first row), then one row of cutover and eviction labels; each
/// further row of them (`EVENT_ROW`) moves the plot down.
pub(super) const TOP: f64 = 50.0;
/// The height of a row of cutover and eviction labels.
const EVENT_ROW: f64 = 14.0;
pub(super) const PLOT_HEIGHT: f64 = 200.0;
/// Below the plot: time labels, then one lane per baseline, then the caption.
pub(super) const AXIS_HEIGHT: f64 = 34.0;
pub(super) const LANE_HEIGHT: f64 = 18.0;
pub(super) const CAPTION_HEIGHT: f64 = 22.0;
/// A contrasted design's lane: its name above, its marks below.
pub(super) const CONTRAST_HEIGHT: f64 = 32.0;
/// Consecutive instants closer than this on a to-scale axis switch to evenly spaced ones.
const MIN_GAP: f64 = 28.0;
pub(super) const KEY_COLOURS: &[&str] = &["#1f5fa8", "#b85c00", "#2d7d46", "#7b3fa0", "#8a5a2b"];
pub(super) const ADMITTED: &str = "#2e7d32";
pub(super) const REJECTED: &str = "#c62828";
pub(super) const REFUSED: &str = "#6d6d6d";
/// A contrasted wrong design's mark where it answers otherwise: its own colour and shape, so
/// that it is never read as the rejection's red cross.
pub(super) const OTHERWISE: &str = "#c2185b";

/// Where things go: an x for every step, a y for every balance.
pub(super) struct Layout {
    /// Each step's instant (the time it carries, or the last one for `key_count`).
    pub(super) times: Vec<u64>,
    /// Each step's x.
    pub(super) xs: Vec<f64>,
    /// The distinct instants and their x (the centre of their steps).
    pub(super) instants: Vec<(u64, f64)>,
    /// The largest capacity in force at any step, in units.
    top_units: u128,
    /// The top of the plot: [`TOP`], lower by a row for each further row of event labels.
    pub(super) top: f64,
    /// Cutovers and evictions, each with its label's place.
    pub(super) events: Vec<EventLabel>,
    pub(super) caption: String,
}

/// A cutover's or an eviction's label above the plot.
pub(super) struct EventLabel {
    /// Its step, from 0.
    pub(super) step: usize,
    pub(super) text: String,
    pub(super) spot: Spot,
}

/// Places the labels of cutovers and evictions (step, x of its rule, text) in rows above the
/// plot: each starts right of its rule, or ends left of it where it would cross the right
/// edge, and takes the lowest row where it keeps clear of the labels there. Labels are placed
/// from the right, so that a rule rises past the later labels' rows on their left, clear of
/// them. Returns the labels, each with its row (0 nearest the plot; its spot's y still to
/// set), and the number of rows.
fn event_rows(events: Vec<(usize, f64, String)>) -> (Vec<(usize, EventLabel)>, usize) {
    const GAP: f64 = 8.0;
    let mut rows: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut placed = Vec::new();
    for (step, x, text) in events.into_iter().rev() {
        let w = text_width(&text);
        let (x0, anchor, at) = if x + 3.0 + w > WIDTH - RIGHT {
            (x - 3.0 - w, Anchor::End, x - 3.0)
        } else {
            (x + 3.0, Anchor::Start, x + 3.0)
        };
        let x1 = x0 + w;
        let row = rows
            .iter()
            .position(|r| r.iter().all(|&(a, b)| x1 + GAP <= a || b + GAP <= x0))
            .unwrap_or(rows.len());
        if row == rows.len() {
            rows.push(Vec::new());
        }
        rows[row].push((x0, x1));
        let spot = Spot::new(at, 0.0, anchor);
        placed.push((row, EventLabel { step, text, spot }));
    }
    placed.reverse();
    (placed, rows.len())
}

impl Layout {
    pub(super) fn new(v: &Verified) -> Self {
        let w = &v.source.walkthrough;
        // A refused call moves no clock: it is drawn at the instant of the step before.
        let mut times = Vec::with_capacity(w.steps.len());
        let mut last = 0;
        for (step, checked) in w.steps.iter().zip(&v.steps) {
            if !matches!(checked.outcome, Outcome::Error(_)) {
                last = step.op.now().unwrap_or(last);
            }
            times.push(last);
        }
        let mut per_instant: BTreeMap<u64, usize> = BTreeMap::new();
        for &t in &times {
            *per_instant.entry(t).or_default() += 1;
        }
        let distinct: Vec<u64> = per_instant.keys().copied().collect();
        let plot = WIDTH - LEFT - RIGHT;
        let (first, end) = (distinct[0], distinct[distinct.len() - 1]);
        let span = end.saturating_sub(first) as f64;
        // Steps at one instant are spread over a band around it, so each keeps its own mark.
        let band = |n: usize| (n.saturating_sub(1) as f64 * 22.0).min(plot / 3.0);
        let to_scale = span > 0.0
            && distinct.windows(2).all(|pair| {
                let gap = (pair[1] - pair[0]) as f64 / span * plot;
                gap >= MIN_GAP + (band(per_instant[&pair[0]]) + band(per_instant[&pair[1]])) / 2.0
            });
        let centres: Vec<(u64, f64)> = if to_scale {
            let usable = plot - band(per_instant[&first]) / 2.0 - band(per_instant[&end]) / 2.0;
            let start = LEFT + band(per_instant[&first]) / 2.0;
            distinct
                .iter()
                .map(|&t| (t, start + (t - first) as f64 / span * usable))
                .collect()
        } else {
            // Evenly spaced instants, each slot as wide as its band needs.
            let widths: Vec<f64> = distinct
                .iter()
                .map(|t| band(per_instant[t]) + MIN_GAP)
                .collect();
            let total: f64 = widths.iter().sum();
            let scale = plot / total;
            let mut x = LEFT;
            distinct
                .iter()
                .zip(&widths)
                .map(|(&t, width)| {
                    let centre = x + width * scale / 2.0;
                    x += width * scale;
                    (t, centre)
                })
                .collect()
        };
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        let xs: Vec<f64> = times
            .iter()
            .map(|t| {
                let n = per_instant[t];
                let k = seen.entry(*t).or_default();
                let centre = centres
                    .iter()
                    .find(|(c, _)| c == t)
                    .map_or(LEFT, |(_, x)| *x);
                let offset = if n > 1 {
                    band(n) * (*k as f64 / (n - 1) as f64 - 0.5)
                } else {
                    0.0
                };
                *k += 1;
                centre + offset
            })
            .collect();
        let mut policies = vec![w.policy];
        policies.extend(v.steps.iter().map(|s| s.snapshot.policy));
        let top_units = policies.iter().map(ceiling).max().unwrap_or(1).max(1);
        let caption = if to_scale || distinct.len() == 1 {
            "time to scale; balances in tokens (exact values on hover)".to_owned()
        } else {
            "instants evenly spaced, not to scale; balances in tokens (exact values on hover)"
                .to_owned()
        };
        let texts = event_texts(v)
            .into_iter()
            .map(|(step, text)| (step, xs[step], text))
            .collect();
        let (placed, rows) = event_rows(texts);
        let top = TOP + EVENT_ROW * rows.saturating_sub(1) as f64;
        let events = placed
            .into_iter()
            .map(|(row, mut label)| {
                label.spot.y = top - 20.0 - EVENT_ROW * row as f64;
                label
            })
            .collect();
        Layout {
            times,
            xs,
            instants: centres,
            top_units,
            top,
            events,
            caption,
        }
    }

    /// The bottom of the plot, where a balance of 0 stands.
    pub(super) fn bottom(&self) -> f64 {
        self.top + PLOT_HEIGHT
    }

    pub(super) fn y(&self, units: u128) -> f64 {
        self.top + PLOT_HEIGHT * (1.0 - units as f64 / self.top_units as f64)
    }

    /// The x of time `t` between two steps' xs, by its share of the elapsed time.
    pub(super) fn between(x0: f64, x1: f64, t0: u64, t1: u64, t: u64) -> f64 {
        if t1 <= t0 {
            return x1;
        }
        x0 + (x1 - x0) * ((t - t0) as f64 / (t1 - t0) as f64)
    }
}

pub(super) fn ceiling(p: &Policy) -> u128 {
    u128::from(p.capacity()) * u128::from(UNITS_PER_TOKEN)
}
