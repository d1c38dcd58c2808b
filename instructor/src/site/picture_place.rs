//! Where a walkthrough picture's labels go: each label is tried at the places its kind
//! allows, in order of preference, and takes the first that overlaps nothing placed before
//! it (marks, axis labels, other labels) and stays inside its bounds. Text widths are
//! estimated from the font size, generously, since the picture is not measured by a browser.
use std::fmt::Write as _;

/// The pictures' font size, in the units of their `viewBox`.
pub(super) const FONT_SIZE: f64 = 11.0;
/// An estimate of one character's width: a little more than a sans-serif digit's.
const CHAR_WIDTH: f64 = FONT_SIZE * 0.6;
/// Space kept clear beside and above or below every label and mark: more beside, so that two
/// labels on one line never read as one.
const PAD_X: f64 = 3.0;
const PAD_Y: f64 = 1.5;
/// What crossing a line costs beside overlapping a label or a mark, by area: a label crosses a
/// line rather than cover another label.
const LINE_WEIGHT: f64 = 0.1;
/// What moving a label one unit away from the first place asked for costs, beside an
/// overlap's area: a label keeps near its mark rather than find a clear place far off.
const DISTANCE_WEIGHT: f64 = 0.5;
/// A white outline under a label's text, so that a line behind it does not strike it out.
pub(super) const HALO: &str =
    "paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"3\" stroke-linejoin=\"round\"";

/// The estimated width of `text` at [`FONT_SIZE`].
pub(super) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

/// Which end of a label its x names, as SVG's `text-anchor`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    pub(super) fn attr(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// A label's place: its x (at its anchor) and its baseline's y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spot {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) anchor: Anchor,
}

impl Spot {
    pub(super) fn new(x: f64, y: f64, anchor: Anchor) -> Self {
        Spot { x, y, anchor }
    }

    /// `x`, `y` and `text-anchor` as SVG attributes.
    pub(super) fn attrs(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\"",
            self.x,
            self.y,
            self.anchor.attr()
        );
        out
    }
}

/// Spots around `(x, y)` with `anchor`, one for each pair of a shift right (`dxs`) and a
/// baseline (`dys`, from `y`), nearest first (a shift sideways counting half as much as one up
/// or down).
pub(super) fn around(x: f64, y: f64, anchor: Anchor, dxs: &[f64], dys: &[f64]) -> Vec<Spot> {
    let mut pairs: Vec<(f64, f64)> = dys
        .iter()
        .flat_map(|&dy| dxs.iter().map(move |&dx| (dx, dy)))
        .collect();
    pairs.sort_by(|a, b| {
        let far = |(dx, dy): (f64, f64)| dx.abs() / 2.0 + dy.abs();
        far(*a).total_cmp(&far(*b))
    });
    pairs
        .into_iter()
        .map(|(dx, dy)| Spot::new(x + dx, y + dy, anchor))
        .collect()
}

/// A box on the picture: left, top, right, bottom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rect {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) x1: f64,
    pub(super) y1: f64,
}

impl Rect {
    /// The box `width` wide of a label at `spot`, from its cap height to below its baseline.
    pub(super) fn of_text(width: f64, spot: Spot) -> Self {
        let x0 = match spot.anchor {
            Anchor::Start => spot.x,
            Anchor::Middle => spot.x - width / 2.0,
            Anchor::End => spot.x - width,
        };
        Rect {
            x0,
            y0: spot.y - FONT_SIZE * 0.8,
            x1: x0 + width,
            y1: spot.y + FONT_SIZE * 0.25,
        }
    }

    /// The box of a mark `r` around its centre.
    pub(super) fn around(x: f64, y: f64, r: f64) -> Self {
        Rect {
            x0: x - r,
            y0: y - r,
            x1: x + r,
            y1: y + r,
        }
    }

    fn overlap(&self, other: &Rect) -> f64 {
        let w = self.x1.min(other.x1 + PAD_X) - self.x0.max(other.x0 - PAD_X);
        let h = self.y1.min(other.y1 + PAD_Y) - self.y0.max(other.y0 - PAD_Y);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }
}

/// A box taken: its weight and, for a placed label, its text and the spot it asked for.
type Taken = (Rect, f64, Option<(String, Spot)>);

/// The boxes taken so far.
#[derive(Default)]
pub(super) struct Placer {
    taken: Vec<Taken>,
}

impl Placer {
    /// Keeps `rect` clear of labels placed from now on (a mark, an axis label).
    pub(super) fn block(&mut self, rect: Rect) {
        self.taken.push((rect, 1.0, None));
    }

    /// Keeps a line from `(x0, y0)` to `(x1, y1)` clear of labels placed from now on: a label
    /// may still cross it where every other place is taken, since a crossing counts for little
    /// beside a label over another.
    pub(super) fn block_line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
        let steps = ((x1 - x0).hypot(y1 - y0) / 3.0).ceil().max(1.0);
        for s in 0..=steps as usize {
            let f = s as f64 / steps;
            let point = Rect::around(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, 1.0);
            self.taken.push((point, LINE_WEIGHT, None));
        }
    }

    /// Places `text` (as wide as `width`) at the one of `spots`, each first moved sideways into
    /// `left..right`, where it overlaps least, counting its distance from the first spot too
    /// (the first of equals wins). `None` when the same text already stands at the first spot,
    /// so it is not written twice.
    pub(super) fn place(
        &mut self,
        text: &str,
        width: f64,
        spots: &[Spot],
        (left, right): (f64, f64),
    ) -> Option<Spot> {
        let first = *spots.first()?;
        let twice = self.taken.iter().any(|(_, _, placed)| {
            placed.as_ref().is_some_and(|(t, s)| {
                t == text && (s.x - first.x).abs() < 0.5 && (s.y - first.y).abs() < 0.5
            })
        });
        if twice {
            return None;
        }
        let mut best: Option<(f64, Spot, Rect)> = None;
        for &spot in spots {
            let mut spot = spot;
            let r = Rect::of_text(width, spot);
            if r.x1 > right {
                spot.x -= r.x1 - right;
            }
            let r = Rect::of_text(width, spot);
            if r.x0 < left {
                spot.x += left - r.x0;
            }
            let r = Rect::of_text(width, spot);
            let overlap: f64 = self.taken.iter().map(|(t, w, _)| r.overlap(t) * w).sum();
            let far = (spot.x - first.x).abs() / 2.0 + (spot.y - first.y).abs();
            let cost = overlap + DISTANCE_WEIGHT * far;
            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                best = Some((cost, spot, r));
            }
        }
        let (_, spot, rect) = best?;
        self.taken.push((rect, 1.0, Some((text.to_owned(), first))));
        Some(spot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_moves_off_another_and_inside_its_bounds() {
        let mut p = Placer::default();
        let first = Spot::new(100.0, 50.0, Anchor::Middle);
        let below = Spot::new(100.0, 70.0, Anchor::Middle);
        assert_eq!(p.place("−10", 20.0, &[first], (0.0, 720.0)), Some(first));
        assert_eq!(
            p.place("✗1", 13.0, &[first, below], (0.0, 720.0)),
            Some(below)
        );
        // The same text at the same place is written once.
        let mut q = Placer::default();
        assert!(q.place("cap 9", 30.0, &[first], (0.0, 720.0)).is_some());
        assert_eq!(q.place("cap 9", 30.0, &[first], (0.0, 720.0)), None);
        // Past the right edge: moved left until it ends there.
        let edge = q
            .place(
                "retry",
                40.0,
                &[Spot::new(700.0, 10.0, Anchor::Start)],
                (0.0, 720.0),
            )
            .unwrap();
        assert!((edge.x - 680.0).abs() < 1e-9);
    }
}
