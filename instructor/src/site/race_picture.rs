//! A concurrency counterexample as a picture (SVG): one lane per thread, each call a bar
//! from its invocation to its return in logical time, its operation above and its outcome
//! below, so the overlap that made the race is visible.
use std::collections::BTreeSet;
use std::fmt::Write as _;

use ratelimit_lab::suite::linearizability::Event;

use super::picture::{escape, SCALES, WIDTH};
use super::race::RaceSource;

const LEFT: f64 = 96.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 34.0;
const LANE: f64 = 58.0;
const BAR: f64 = 14.0;

/// The SVG of one counterexample.
pub fn draw(source: &RaceSource) -> String {
    let history = &source.counterexample.history;
    let threads = history.iter().map(|e| e.thread).max().unwrap_or(0);
    // Thread 0 (the calls before and after the threads) gets a lane only when it has calls.
    let has_setup = history.iter().any(|e| e.thread == 0);
    let lanes: Vec<usize> = (usize::from(!has_setup)..=threads).collect();
    let height = TOP + LANE * lanes.len() as f64 + 30.0;
    let times: Vec<u64> = history
        .iter()
        .flat_map(|e| [e.invoked, e.returned])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let step = (WIDTH - LEFT - RIGHT) / times.len().max(1) as f64;
    let x = |t: u64| LEFT + step * (times.iter().position(|&u| u == t).unwrap_or(0) as f64 + 0.5);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" {SCALES} font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-labelledby=\"title-{d}\">\n<title id=\"title-{d}\">{d}: a concurrency counterexample ({m})</title>\n<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>\n<text x=\"8\" y=\"18\" fill=\"#333\">{d} ({m}): {why}</text>\n",
        d = escape(&source.design),
        m = escape(&format!("{:?}", source.mistake)),
        why = if source.counterexample.verdict.starts_with("not linearizable") {
            "no sequential order explains these outcomes"
        } else {
            "the outcomes have a legal order, but not the state they leave"
        },
    );
    for (row, &thread) in lanes.iter().enumerate() {
        let y = TOP + LANE * row as f64 + LANE / 2.0;
        let name = if thread == 0 {
            "before / after".to_owned()
        } else {
            format!("thread {thread}")
        };
        let _ = writeln!(
            svg,
            "<text x=\"8\" y=\"{:.1}\" fill=\"#333\">{name}</text><line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>",
            y + 4.0,
            WIDTH - RIGHT
        );
        for (i, e) in history
            .iter()
            .enumerate()
            .filter(|(_, e)| e.thread == thread)
        {
            bar(&mut svg, i, e, x(e.invoked), x(e.returned), y);
        }
    }
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#444\">logical time, left to right: bars that overlap ran at once</text>",
        height - 10.0
    );
    svg.push_str("</svg>\n");
    svg
}

fn bar(svg: &mut String, i: usize, e: &Event, x0: f64, x1: f64, y: f64) {
    let (x0, x1) = (x0 - 6.0, x1 + 6.0);
    let _ = writeln!(
        svg,
        "<g class=\"call\" data-event=\"{i}\" data-thread=\"{t}\"><title>#{i} thread {t}: {op} returned {out}</title><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BAR}\" rx=\"3\" fill=\"#dce8f5\" stroke=\"#1f5fa8\"/><text x=\"{x0:.1}\" y=\"{:.1}\" fill=\"#222\">#{i} {op}</text><text x=\"{x0:.1}\" y=\"{:.1}\" fill=\"#1f5fa8\">→ {out}</text></g>",
        y - BAR / 2.0,
        x1 - x0,
        y - BAR / 2.0 - 4.0,
        y + BAR / 2.0 + 12.0,
        t = e.thread,
        op = escape(&e.op.to_string()),
        out = escape(&e.outcome.to_string()),
    );
}
