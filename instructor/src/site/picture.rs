//! A walkthrough as a picture (SVG): each key's balance over time as a step line, with the
//! refill slopes, the capacity, every request marked admitted, rejected or refused with its
//! cost, and cutovers and evictions marked.
//!
//! The picture is drawn from the verified replay and computes with floating point only to
//! place things on the page; every number written on it is exact. Each request's mark
//! carries `data-step` (its step number) and a class (`request admitted`, `request rejected`
//! or `request refused`), so a page or a test can find it; hovering shows the step in words.
use std::fmt::Write as _;

use super::build::Verified;
use super::picture_lanes::{baseline_lanes, baseline_rows, contrast_lanes, legend};
use super::picture_layout::{
    Layout, AXIS_HEIGHT, CAPTION_HEIGHT, CONTRAST_HEIGHT, LANE_HEIGHT, LEFT, PLOT_HEIGHT,
};
use super::picture_numbers::{balance_labels, retry_labels};
use super::picture_place::{Placer, Rect};
use super::picture_plot::{axes, balance_lines, capacity_line, markers_of_events, requests};

pub(crate) use super::picture_layout::WIDTH;
pub(crate) use super::picture_text::escape;

/// The size of a picture on its own: as wide as the window, its height from its `viewBox`,
/// and never narrower than the width at which its 11-unit text is 13 px tall (the page's
/// figures say the same in their own style).
pub(crate) const SCALES: &str = "width=\"100%\" style=\"min-width:860px;height:auto\"";

/// The SVG of one verified walkthrough.
pub fn draw(v: &Verified) -> String {
    let w = &v.source.walkthrough;
    let layout = Layout::new(v);
    let lanes = w.baselines.names();
    let height = layout.top
        + PLOT_HEIGHT
        + AXIS_HEIGHT
        + LANE_HEIGHT * (baseline_rows(&lanes) as f64)
        + CONTRAST_HEIGHT * (w.contrast.len() as f64)
        + CAPTION_HEIGHT;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" {SCALES} font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-labelledby=\"title-{id}\">\n<title id=\"title-{id}\">{title}</title>\n",
        id = escape(&w.id),
        title = escape(&w.title)
    );
    let _ = writeln!(
        svg,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    // Labels are placed in this order, each clear of those before it, and clear of the
    // legend's row above and of the lanes under the time axis.
    let mut placer = Placer::default();
    placer.block(Rect {
        x0: 0.0,
        y0: 0.0,
        x1: WIDTH,
        y1: 16.0,
    });
    placer.block(Rect {
        x0: 0.0,
        y0: layout.bottom() + 6.0,
        x1: WIDTH,
        y1: height,
    });
    axes(&mut svg, &layout, &mut placer);
    capacity_line(&mut svg, v, &layout, &mut placer);
    markers_of_events(&mut svg, &layout, &mut placer);
    balance_lines(&mut svg, v, &layout, &mut placer);
    requests(&mut svg, v, &layout, &mut placer);
    balance_labels(&mut svg, v, &layout, &mut placer);
    retry_labels(&mut svg, v, &layout, &mut placer);
    baseline_lanes(&mut svg, v, &layout, &lanes);
    contrast_lanes(&mut svg, v, &layout, baseline_rows(&lanes));
    legend(&mut svg, v);
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#444\">{}</text>",
        height - 7.0,
        escape(&layout.caption)
    );
    svg.push_str("</svg>\n");
    svg
}
