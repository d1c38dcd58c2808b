//! One self-contained HTML page with every walkthrough's table and picture: no script, no
//! style sheet or font from elsewhere, so it opens without network access.
use std::fmt::Write as _;

use ratelimit_lab::lesson::words::{describe_outcome, describe_policy, state_after, step_outcome};

use ratelimit_lab::{Invariant, Requirement};

use super::build::Verified;
use super::picture::escape;
use super::race::RaceFixture;
use ratelimit_lab::fixtures::WalkthroughFixture;

const STYLE: &str = "body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2.2em;border-top:1px solid #ddd;padding-top:1em}\
blockquote{margin:.6em 0;padding:.2em .8em;border-left:3px solid #ccc;color:#444}\
table{border-collapse:collapse;width:100%;font-size:.9em;margin:.8em 0}\
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.n{text-align:right}figure{margin:.8em 0;overflow-x:auto}figure svg{width:100%;min-width:860px;height:auto}\
.meta{color:#555;font-size:.9em}pre{overflow-x:auto}.scroll{overflow-x:auto}.scroll table{margin:0}\
dl.terms{display:grid;grid-template-columns:max-content auto;gap:.2em .8em;font-size:.9em}dl.terms dd{margin:0}";

/// The page of every verified walkthrough (with its fixture and picture), in order, then
/// every concurrency counterexample (with its picture).
pub fn render(
    all: &[(&Verified, &WalkthroughFixture, &str)],
    races: &[(&RaceFixture, &str, String)],
) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Rate limiter walkthroughs</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>Rate limiter walkthroughs</h1>\n<p>Every step below was replayed on the executable specification and on the reference token bucket, and both returned exactly the outcome shown. One token is 1,000,000,000 units; times are nanoseconds from one monotonic origin. The concurrency counterexamples at the end show racy designs: the interleaving, and why no sequential order explains it.</p>\n<ul>\n"
    );
    for (v, _, _) in all {
        let w = &v.source.walkthrough;
        let _ = writeln!(
            html,
            "<li><a href=\"#{}\">{}</a></li>",
            escape(&w.id),
            escape(&w.title)
        );
    }
    for (f, _, _) in races {
        let _ = writeln!(
            html,
            "<li><a href=\"#race-{d}\">Concurrency counterexample: {d}</a></li>",
            d = escape(&f.design)
        );
    }
    html.push_str("</ul>\n");
    terms(&mut html);
    for (v, f, svg) in all {
        section(&mut html, v, f, svg);
    }
    for (f, svg, scenario) in races {
        race_section(&mut html, f, svg, scenario);
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// What the requirement (R1–R4) and invariant (I1–I4) labels in the tables stand for.
fn terms(html: &mut String) {
    html.push_str("<p>The tables label each step with the requirement it exercises and the invariant it keeps:</p>\n<dl class=\"terms\">\n");
    for r in [
        Requirement::R1,
        Requirement::R2,
        Requirement::R3,
        Requirement::R4,
    ] {
        let _ = writeln!(html, "<dt>{r}</dt><dd>{}</dd>", escape(r.text()));
    }
    for i in [Invariant::I1, Invariant::I2, Invariant::I3, Invariant::I4] {
        let _ = writeln!(html, "<dt>{i}</dt><dd>{}</dd>", escape(i.text()));
    }
    html.push_str("</dl>\n");
}

/// A catalogued wrong design in words: what it does wrong (the catalog's sentence), then the
/// lesson's own line on that mistake, quoted as the lesson's.
fn wrong_design(design: &str, requirement: &str, seed_text: &str) -> String {
    let does = ratelimit_lab_catalog::mistakes::in_words(design).unwrap_or_default();
    let does = if does.is_empty() {
        String::new()
    } else {
        format!(" {}", escape(does))
    };
    format!(
        "<code>{}</code> breaks {}.{does} The lesson on this mistake: &ldquo;{}&rdquo;",
        escape(design),
        escape(requirement),
        escape(seed_text)
    )
}

/// One counterexample: what broke, the scenario in words (policy, key bound, each part's
/// calls, so that the picture's outcomes can be judged against it), the picture, the verdict
/// and the replay command.
fn race_section(html: &mut String, f: &RaceFixture, svg: &str, scenario: &str) {
    let _ = write!(
        html,
        "<section id=\"race-{d}\">\n<h2>Concurrency counterexample: {d}</h2>\n<p class=\"meta\">{wrong} Found by the check <code>{check}</code> in execution {n} of {search}.</p>\n<pre>{scenario}</pre>\n<figure>\n{svg}</figure>\n<pre>{verdict}</pre>\n<p class=\"meta\">Replay: <code>{replay}</code></p>\n</section>\n",
        d = escape(&f.design),
        wrong = wrong_design(&f.design, &f.requirement, &f.seed_text),
        check = escape(&f.check),
        scenario = escape(scenario),
        search = escape(&ratelimit_lab::suite::counterexample::search_in_words(&f.search)),
        n = f.execution,
        verdict = escape(&f.verdict),
        replay = escape(&f.replay),
    );
}

fn section(html: &mut String, v: &Verified, f: &WalkthroughFixture, svg: &str) {
    let w = &v.source.walkthrough;
    let _ = write!(
        html,
        "<section id=\"{id}\">\n<h2>{title}</h2>\n<p class=\"meta\">{policy}; max_keys {max_keys}; from <code>{file}</code></p>\n<blockquote><span class=\"meta\">The lesson says (its words, quoted; not a claim of this page):</span> {seed}</blockquote>\n<figure>\n{svg}</figure>\n",
        id = escape(&w.id),
        title = escape(&w.title),
        policy = escape(&describe_policy(&w.policy)),
        max_keys = w.max_keys,
        file = escape(&v.source.file),
        seed = escape(&w.seed),
    );
    if !w.contrast.is_empty() {
        html.push_str("<p class=\"meta\">Beside the right outcomes, catalogued wrong designs:</p>\n<ul class=\"meta\">\n");
        for c in &f.contrast {
            let _ = writeln!(
                html,
                "<li>{}</li>",
                wrong_design(&c.design, &c.requirement, &c.seed_text)
            );
        }
        html.push_str("</ul>\n");
    }
    let lanes = w.baselines.names();
    if !lanes.is_empty() {
        let names: Vec<String> = lanes.iter().map(|n| n.replace('_', " ")).collect();
        let _ = writeln!(
            html,
            "<p class=\"meta\">Baselines, beside the right outcomes: {}. Each is another algorithm, \
             right by its own rule, shown for comparison; none is a wrong design.</p>",
            escape(&names.join(", "))
        );
    }
    html.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>step</th><th>action</th><th>outcome</th>",
    );
    for name in &lanes {
        let _ = write!(html, "<th>{} (baseline)</th>", name.replace('_', " "));
    }
    for name in &w.contrast {
        let _ = write!(html, "<th>{} (wrong)</th>", escape(name));
    }
    html.push_str("<th>state after</th><th>invariant</th></tr>\n");
    for (step, checked) in w.steps.iter().zip(&v.steps) {
        let _ = write!(
            html,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td>",
            checked.number,
            escape(&step.action),
            escape(&step_outcome(checked, step.seed_outcome.as_deref()))
        );
        for name in &lanes {
            let verdict = checked
                .beside
                .get(*name)
                .map_or_else(String::new, ToString::to_string);
            let _ = write!(html, "<td>{verdict}</td>");
        }
        for name in &w.contrast {
            let cell = checked.contrast.get(name).map_or_else(
                || "same".to_owned(),
                |wrong| format!("<strong>{}</strong>", escape(&describe_outcome(wrong))),
            );
            let _ = write!(html, "<td>{cell}</td>");
        }
        let _ = writeln!(
            html,
            "<td>{}</td><td>{}</td></tr>",
            escape(&state_after(checked, &step.op)),
            escape(&step.invariant)
        );
    }
    html.push_str("</table></div>\n</section>\n");
}
