use std::fmt;

use serde::Serialize;

use crate::model::{Op, Outcome};
use crate::{Policy, Snapshot};

use crate::suite::core::cause::Cause;
use crate::Mistake;

/// One row of a failing trace: what was called, what the specification returns, what the
/// design returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceRow {
    /// 1-based position in the trace.
    pub step: usize,
    /// The call, e.g. `allow("k", cost 1, at 250000000 ns)`.
    pub action: String,
    /// What the specification returns.
    pub expected: String,
    /// What the design returned (or did: panicked, broke an invariant).
    pub got: String,
}

/// A failing sequential trace in replayable form: the limiter's configuration, the calls,
/// and what the design returned for each call it completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailingTrace {
    /// The policy the limiter was built with.
    pub policy: Policy,
    /// The key bound it was built with.
    pub max_keys: usize,
    /// The calls, in order.
    pub ops: Vec<Op>,
    /// What the design returned, one per call it completed (a panic ends the list early).
    pub observed: Vec<Outcome>,
    /// The design's snapshot when the failure was in its stored state rather than in what it
    /// returned.
    pub snapshot: Option<Snapshot>,
}

/// Why a design failed a check: a summary, the minimal trace that shows it, and the seed
/// mistake it most resembles.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// One sentence: what went wrong.
    pub summary: String,
    /// The steps up to and including the one that failed.
    pub trace: Vec<TraceRow>,
    /// Further explanation (an interleaving, a linearizability argument).
    pub detail: Option<String>,
    /// The seed mistake this failure most resembles, if one does.
    pub mistake: Option<Mistake>,
    /// The trace in replayable form, for sequential failures.
    pub replay: Option<FailingTrace>,
    /// The known wrong designs that return exactly what this design returned on the
    /// replay, most relevant first.
    pub resembles: Vec<Lookalike>,
    /// The known wrong designs that depart from the specification on the replay *alike*
    /// with this design (first at the same step, with the same cause) and alike on the
    /// diagnosis battery too: evidence at the level of the mistake, where an unseen design
    /// with a catalogued flaw differs from the catalogued design in its numbers.
    #[serde(skip)]
    pub kin: Vec<Lookalike>,
    /// The mistake the check saw itself (an error that changed the state, a key count above
    /// the bound), kept apart from the one the replay names.
    #[serde(skip)]
    pub seen: Option<Mistake>,
    /// The mistake the diagnosis's detectors found in the design itself (probes of a
    /// mistake's defining symptom, needing no catalogued design), when exactly one did.
    #[serde(skip)]
    pub detected: Option<Mistake>,
    /// `true` when the design panicked (an unfinished method, a failed assertion): such a
    /// failure resembles no particular mistake.
    pub panicked: bool,
    /// Where the trace's expected outcomes come from, named in its column header:
    /// `specification` (the default) or `property` (a property check's own expectation).
    pub expected_by: &'static str,
    /// The quantity wrong and which way, when the failure is a plain difference from the
    /// specification: failures with equal causes show one slip of the design.
    #[serde(skip)]
    pub cause: Option<Cause>,
}

impl Failure {
    /// A failure with only a summary.
    pub fn new(summary: impl Into<String>) -> Failure {
        Failure {
            summary: summary.into(),
            trace: Vec::new(),
            detail: None,
            mistake: None,
            replay: None,
            resembles: Vec::new(),
            kin: Vec::new(),
            seen: None,
            detected: None,
            panicked: false,
            expected_by: "specification",
            cause: None,
        }
    }

    /// Marks the failure as a panic of the design.
    pub fn as_panic(mut self) -> Failure {
        self.panicked = true;
        self
    }

    /// Attaches the trace that shows it.
    pub fn with_trace(mut self, trace: Vec<TraceRow>) -> Failure {
        self.trace = trace;
        self
    }

    /// Attaches a trace whose expected outcomes are a property's, not the specification's.
    pub fn with_property_trace(mut self, trace: Vec<TraceRow>) -> Failure {
        self.trace = trace;
        self.expected_by = "property";
        self
    }

    /// Attaches the replayable trace.
    pub fn with_replay(mut self, replay: FailingTrace) -> Failure {
        self.replay = Some(replay);
        self
    }

    /// Attaches an explanation.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Failure {
        self.detail = Some(detail.into());
        self
    }

    /// Adds where the design's first panic happened (a `file:line:column`) to the detail.
    pub fn with_panic_place(mut self, place: &str) -> Failure {
        self.push_detail(&format!("the first panic happened at {place}"));
        self
    }

    /// Appends `text` to the detail, on a line of its own after what is there.
    pub(crate) fn push_detail(&mut self, text: &str) {
        self.detail = Some(match self.detail.take() {
            Some(d) if !d.is_empty() => format!("{d}\n{text}"),
            _ => text.to_owned(),
        });
    }

    /// Attaches its cause.
    pub fn because(mut self, cause: Cause) -> Failure {
        self.cause = Some(cause);
        self
    }

    /// Names the seed mistake it resembles, unless one is named already or the design
    /// panicked.
    pub fn resembling(mut self, mistake: Mistake) -> Failure {
        if !self.panicked {
            self.mistake.get_or_insert(mistake);
        }
        self
    }

    /// The trace as a text table: `step | action | expected | got`.
    pub fn trace_table(&self) -> String {
        let header = TraceRow {
            step: 0,
            action: "action".into(),
            expected: format!("expected ({})", self.expected_by),
            got: "got (design)".into(),
        };
        let rows: Vec<&TraceRow> = std::iter::once(&header).chain(&self.trace).collect();
        let w_step = rows
            .iter()
            .map(|r| r.step.to_string().len())
            .max()
            .unwrap_or(4)
            .max(4);
        let w_act = rows
            .iter()
            .map(|r| r.action.chars().count())
            .max()
            .unwrap_or(0);
        let w_exp = rows
            .iter()
            .map(|r| r.expected.chars().count())
            .max()
            .unwrap_or(0);
        // The widest row: step, action and expected columns, their separators, the design's
        // answer and the mark after it.
        let widest = rows
            .iter()
            .map(|r| 2 + w_step + 3 + w_act + 3 + w_exp + 3 + r.got.chars().count() + 13)
            .max()
            .unwrap_or(0);
        if widest > LINE_WIDTH {
            return self.stacked_trace();
        }
        let mut out = String::new();
        for (i, r) in rows.iter().enumerate() {
            let step = if i == 0 {
                "step".to_string()
            } else {
                r.step.to_string()
            };
            let mark = if i + 1 == rows.len() && i > 0 && r.expected != r.got {
                "  <-- differs"
            } else {
                ""
            };
            out.push_str(&format!(
                "  {step:>w_step$} | {:w_act$} | {:w_exp$} | {}{mark}\n",
                r.action, r.expected, r.got
            ));
            if i == 0 {
                out.push_str(&format!(
                    "  {}-+-{}-+-{}-+-{}\n",
                    "-".repeat(w_step),
                    "-".repeat(w_act),
                    "-".repeat(w_exp),
                    "-".repeat(12)
                ));
            }
        }
        out
    }
}

impl Failure {
    /// The trace one step per block, for traces too wide for a table of [`LINE_WIDTH`]
    /// columns: the action on the step's line, the two outcomes under it.
    fn stacked_trace(&self) -> String {
        let expected = format!("expected ({}):", self.expected_by);
        let mut out = String::new();
        for (i, r) in self.trace.iter().enumerate() {
            let mark = if i + 1 == self.trace.len() && i > 0 && r.expected != r.got {
                "  <-- differs"
            } else {
                ""
            };
            out.push_str(&format!(
                "  step {}: {}\n      {expected:26}{}\n      {:26}{}{mark}\n",
                r.step, r.action, r.expected, "got (design):", r.got
            ));
        }
        out
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary)?;
        if !self.trace.is_empty() {
            writeln!(f, "\nminimal trace:\n{}", self.trace_table())?;
        }
        if let Some(detail) = &self.detail {
            writeln!(f, "{detail}")?;
        }
        if let Some(m) = self.mistake {
            writeln!(
                f,
                "the mistake it resembles, in the lesson's words:\n  \"{}\"\n{}",
                m.seed_text(),
                wrapped(&format!("hint: {}", m.hint()), HINT_WIDTH, "      ")
            )?;
        }
        Ok(())
    }
}

/// The column a hint wraps at.
pub(crate) const HINT_WIDTH: usize = 100;

/// No line a person reads is wider than this.
pub const LINE_WIDTH: usize = 120;

/// `text` with every line wider than [`LINE_WIDTH`] broken at spaces, the continuation lines
/// indented two spaces past the line's own indent. Lines of a table (they hold ` | `) are
/// left whole, tables choose their own layout to fit; so are commands (they hold `cargo `, or
/// end in ` \` to continue on the next line), which must stay whole to be copied.
pub(crate) fn fitted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= LINE_WIDTH || body.contains(" | ") || body.ends_with(" \\") {
            out.push_str(line);
            continue;
        }
        let indent: String = body.chars().take_while(|c| *c == ' ').collect();
        let rest = &body[indent.len()..];
        if let Some(at) = rest.find("cargo ") {
            // A command: cut only between its words, each line but the last ending in ` \`
            // (a shell joins them again), and after a prose lead-in ("to rerun it:") on lines
            // of its own.
            let (lead, command) = match rest[..at].find(": ") {
                Some(colon) if !rest[..colon].contains('=') => {
                    (&rest[..=colon], rest[colon + 1..].trim_start())
                }
                _ => ("", rest),
            };
            let command_indent = if lead.is_empty() {
                indent.clone()
            } else {
                out.push_str(&format!("{indent}{lead}\n"));
                format!("{indent}  ")
            };
            out.push_str(&shell_wrapped(command, &command_indent));
            out.push_str(end);
            continue;
        }
        let wrapped_line = wrapped(rest, LINE_WIDTH.saturating_sub(indent.len()).max(40), "  ");
        for (i, part) in wrapped_line.lines().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&indent);
            out.push_str(part);
        }
        out.push_str(end);
    }
    out
}

/// `command` on lines of at most [`LINE_WIDTH`] characters, the first after `indent` and the
/// others two spaces further in, cut only between words, every line but the last ending in
/// ` \` (a word longer than a line keeps a line of its own). No trailing newline.
fn shell_wrapped(command: &str, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut current = indent.to_owned();
    let mut empty = true;
    for word in command.split(' ').filter(|w| !w.is_empty()) {
        let fits = current.chars().count() + 1 + word.chars().count() + 2 <= LINE_WIDTH;
        if !empty && !fits {
            lines.push(format!("{current} \\"));
            current = format!("{indent}  ");
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    lines.push(current);
    lines.join("\n")
}

/// `line` cut to at most `width` characters: whole when it fits, otherwise cut at the last
/// space that leaves room for `...` after it (or mid-word when there is none).
pub(crate) fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let keep = width.saturating_sub(3);
    let head: String = line.chars().take(keep).collect();
    let ends_a_word = line.chars().nth(keep) == Some(' ');
    let head = match head.rfind(' ') {
        Some(at) if at > 0 && !ends_a_word => head[..at].trim_end().to_owned(),
        _ => head.trim_end().to_owned(),
    };
    format!("{head}...")
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stands
/// alone), every line after the first starting with `indent`.
pub(crate) fn wrapped(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let prefix = if lines.is_empty() { "" } else { indent };
        let used = prefix.chars().count() + line.chars().count();
        if !line.is_empty() && used + 1 + word.chars().count() > width {
            lines.push(format!("{prefix}{line}"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let prefix = if lines.is_empty() { "" } else { indent };
    lines.push(format!("{prefix}{line}"));
    lines.join("\n")
}

/// A suspect that reproduced a failing trace: its name and the mistake it makes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lookalike {
    /// The wrong design's name.
    pub design: String,
    /// The seed mistake it makes.
    pub mistake: Mistake,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_column_names_where_its_values_come_from() {
        let row = TraceRow {
            step: 1,
            action: "allow(\"k\", cost 1, at 0 ns)".into(),
            expected: "allowed".into(),
            got: "rejected".into(),
        };
        let spec = Failure::new("x")
            .with_trace(vec![row.clone()])
            .trace_table();
        assert!(
            spec.contains("| expected (specification) | got (design)"),
            "{spec}"
        );
        let property = Failure::new("x").with_property_trace(vec![row.clone()]);
        assert!(property.trace_table().contains("| expected (property)"));
        let wide = TraceRow {
            got: "rejected ".repeat(20),
            ..row
        };
        let stacked = Failure::new("x")
            .with_property_trace(vec![wide])
            .trace_table();
        assert!(
            stacked.contains("\n      expected (property):      allowed\n"),
            "{stacked}"
        );
        assert!(
            stacked.contains("\n      got (design):             rejected"),
            "{stacked}"
        );
    }

    #[test]
    fn every_hint_wraps_within_the_width_and_keeps_its_words() {
        for mistake in Mistake::ALL {
            let text = format!("hint: {}", mistake.hint());
            let out = wrapped(&text, HINT_WIDTH, "      ");
            for line in out.lines() {
                assert!(line.chars().count() <= HINT_WIDTH, "{line}");
            }
            let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
            assert_eq!(words(&out), words(&text));
        }
        assert_eq!(wrapped("a b c", 3, " "), "a b\n c");
        let long = format!("  {}", "word ".repeat(40));
        let command = format!("cargo test --release -- --exact {}", "x".repeat(120));
        assert_eq!(
            fitted(&format!("to rerun it: {command}")),
            format!(
                "to rerun it:\n  cargo test --release -- --exact \\\n    {}",
                "x".repeat(120)
            ),
            "a long command is cut between its words, after its lead-in"
        );
        let shuttle = format!(
            "  CARGO_TARGET_DIR=/{}/target-shuttle cargo test --release --features shuttle -- --exact c32::r2",
            "d".repeat(40)
        );
        let cut_up = fitted(&shuttle);
        assert!(
            cut_up.lines().all(|l| l.chars().count() <= LINE_WIDTH),
            "{cut_up}"
        );
        assert_eq!(
            cut_up.replace(" \\\n   ", ""),
            shuttle,
            "a shell joining the lines gets the command back: {cut_up}"
        );
        let continued = format!("  RATELIMIT_LAB_REPLAY=/{} \\\n", "d/".repeat(70));
        assert_eq!(
            fitted(&continued),
            continued,
            "a command's first line stays whole"
        );
        let fit = fitted(&format!("short\n{long}\nx | y\n"));
        assert!(
            fit.lines().all(|l| l.chars().count() <= LINE_WIDTH),
            "{fit}"
        );
        assert!(fit.starts_with("short\n  word"), "{fit}");
        assert!(
            fit.lines()
                .nth(2)
                .is_some_and(|l| l.starts_with("    word")),
            "{fit}"
        );
        assert!(fit.ends_with("x | y\n"), "{fit}");
        assert_eq!(wrapped("abcdef g", 3, ""), "abcdef\ng");
        assert_eq!(cut("abc def", 7), "abc def");
        assert_eq!(cut("abc def ghi", 10), "abc def...");
        assert_eq!(cut("abcdefghij", 5), "ab...");
        assert!(cut(&"word ".repeat(40), LINE_WIDTH).chars().count() <= LINE_WIDTH);
    }
}
