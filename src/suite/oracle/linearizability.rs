//! A linearizability checker for recorded limiter histories, with an explanation a person
//! can read when no legal order exists.
//!
//! A history is a set of [`Event`]s, each an operation with what it returned and the
//! logical times of its invocation and return. It is linearizable when some sequential
//! order of all events (1) respects real time: an event that returned before another was
//! invoked comes first, and (2) gives, run through the specification from its starting
//! state, exactly the outcome every event recorded. The search is depth-first over events
//! that may come next, memoizing (events done, specification state) pairs already known to
//! lead nowhere, in the manner of Wing & Gong with Lowe's cache.
use std::collections::HashSet;
use std::fmt::Write as _;

use crate::model::{Model, Op, Outcome};

/// One completed call in a history.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    /// Which thread made the call (`0` for the sequential init and post parts).
    pub thread: usize,
    /// The call.
    pub op: Op,
    /// What it returned.
    pub outcome: Outcome,
    /// Logical time just before the call.
    pub invoked: u64,
    /// Logical time just after it returned.
    pub returned: u64,
}

/// Why a history has no legal order: the longest legal prefix found and, after it, what each
/// event that could come next would have returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoLegalOrder {
    /// Indices (into the history) of the longest legal prefix.
    pub longest_prefix: Vec<usize>,
    /// For each event that real time allows next after that prefix: its index and the
    /// outcome the specification gives it there.
    pub blocked: Vec<(usize, Outcome)>,
}

/// Checks `history` against the specification starting at `start`.
///
/// # Errors
///
/// A [`NoLegalOrder`] when no legal order exists. Histories longer than 64 events are not
/// supported and are reported as a verdict with no prefix.
pub(crate) fn check(start: &Model, history: &[Event]) -> Result<Vec<usize>, NoLegalOrder> {
    if history.len() > 64 {
        return Err(NoLegalOrder {
            longest_prefix: Vec::new(),
            blocked: Vec::new(),
        });
    }
    let mut search = Search {
        history,
        dead: HashSet::new(),
        order: Vec::new(),
        best: Vec::new(),
    };
    if search.go(start, 0) {
        return Ok(search.order);
    }
    let mut state = start.clone();
    let mut done = 0u64;
    for &i in &search.best {
        state.apply(&history[i].op);
        done |= 1 << i;
    }
    let blocked = candidates(history, done)
        .map(|i| (i, state.step(&history[i].op).1))
        .collect();
    Err(NoLegalOrder {
        longest_prefix: search.best,
        blocked,
    })
}

/// Events not yet done that no other pending event must precede.
fn candidates(history: &[Event], done: u64) -> impl Iterator<Item = usize> + '_ {
    let first_return = history
        .iter()
        .enumerate()
        .filter(|(i, _)| done & (1 << i) == 0)
        .map(|(_, e)| e.returned)
        .min()
        .unwrap_or(u64::MAX);
    history
        .iter()
        .enumerate()
        .filter(move |(i, e)| done & (1 << i) == 0 && e.invoked < first_return)
        .map(|(i, _)| i)
}

struct Search<'a> {
    history: &'a [Event],
    dead: HashSet<(u64, Model)>,
    order: Vec<usize>,
    best: Vec<usize>,
}

impl Search<'_> {
    fn go(&mut self, state: &Model, done: u64) -> bool {
        if self.order.len() == self.history.len() {
            return true;
        }
        if self.dead.contains(&(done, state.clone())) {
            return false;
        }
        let next: Vec<usize> = candidates(self.history, done).collect();
        for i in next {
            let (after, outcome) = state.step(&self.history[i].op);
            if self.history[i].outcome.matches(&outcome) {
                self.order.push(i);
                if self.order.len() > self.best.len() {
                    self.best = self.order.clone();
                }
                if self.go(&after, done | (1 << i)) {
                    return true;
                }
                self.order.pop();
            }
        }
        self.dead.insert((done, state.clone()));
        false
    }
}

/// The widest line [`history_table`] prints, in columns.
pub const MAX_WIDTH: usize = 120;

/// The history for a person, as it happened: the sequential calls (thread `0`) as lines of
/// their own, and the concurrent part step by step in the order of the logical clock, one
/// column per thread, each call where it began (`#n` and the call) and where it returned
/// (`-> outcome`), so that overlapping calls show as overlapping rows. When the columns
/// would be wider than [`MAX_WIDTH`], the same steps are listed one per line instead.
pub fn history_table(history: &[Event]) -> String {
    let threads = history.iter().map(|e| e.thread).max().unwrap_or(0);
    // Every invocation and return, in logical time: (time, event, is the return).
    let mut steps: Vec<(u64, usize, bool)> = history
        .iter()
        .enumerate()
        .flat_map(|(i, e)| [(e.invoked, i, false), (e.returned, i, true)])
        .collect();
    steps.sort();
    let text = |i: usize, ret: bool| {
        let e = &history[i];
        if ret {
            format!("-> {}", e.outcome)
        } else {
            format!("#{i} {}", e.op)
        }
    };
    let width = steps
        .iter()
        .filter(|&&(_, i, _)| history[i].thread != 0)
        .map(|&(_, i, ret)| text(i, ret).chars().count())
        .max()
        .unwrap_or(10)
        .max(10);
    let columns = 2 + (width + 3) * threads;
    let mut out = String::new();
    if columns <= MAX_WIDTH && threads > 0 {
        let header: Vec<String> = (1..=threads)
            .map(|t| format!("{:width$}", format!("thread {t}")))
            .collect();
        let mut concurrent_header = false;
        for &(_, i, ret) in &steps {
            let e = &history[i];
            if e.thread == 0 {
                if !ret {
                    let _ = writeln!(out, "  #{i} {} -> {}", e.op, e.outcome);
                }
                continue;
            }
            if !concurrent_header {
                let _ = writeln!(out, "  {}", header.join(" | ").trim_end());
                let _ = writeln!(out, "  {}", vec!["-".repeat(width); threads].join("-+-"));
                concurrent_header = true;
            }
            let row: Vec<String> = (1..=threads)
                .map(|t| {
                    if t == e.thread {
                        format!("{:width$}", text(i, ret))
                    } else {
                        " ".repeat(width)
                    }
                })
                .collect();
            let _ = writeln!(out, "  {}", row.join(" | ").trim_end());
        }
    } else {
        for &(_, i, ret) in &steps {
            let e = &history[i];
            match (e.thread, ret) {
                (0, false) => {
                    let _ = writeln!(out, "  #{i} {} -> {}", e.op, e.outcome);
                }
                (0, true) => {}
                (t, false) => {
                    let _ = writeln!(out, "  thread {t} calls   #{i} {}", e.op);
                }
                (t, true) => {
                    let _ = writeln!(out, "  thread {t} returns #{i} {}", e.outcome);
                }
            }
        }
    }
    out
}

/// A reading of a verdict: the legal prefix and the specification's state after it (from
/// `start`), then why no event can follow it.
pub(crate) fn explain(start: &Model, history: &[Event], verdict: &NoLegalOrder) -> String {
    let mut out = String::new();
    let prefix: Vec<String> = verdict
        .longest_prefix
        .iter()
        .map(|i| format!("#{i}"))
        .collect();
    let _ = writeln!(
        out,
        "The longest legal order found runs {} of {} calls: {}.",
        verdict.longest_prefix.len(),
        history.len(),
        if prefix.is_empty() {
            "none".to_string()
        } else {
            prefix.join(", ")
        }
    );
    let mut state = start.clone();
    for &i in &verdict.longest_prefix {
        state.apply(&history[i].op);
    }
    let _ = writeln!(
        out,
        "There the specification holds {}.",
        state_in_words(&state.snapshot())
    );
    let _ = writeln!(out, "After it, no call can come next:");
    for (i, spec) in &verdict.blocked {
        let e = &history[*i];
        let call = format!("  #{i} {}", e.op);
        let returned = format!("returned \"{}\",", e.outcome);
        // One line when it fits in 120 columns, else the outcome on a line of its own.
        let gap = if call.chars().count() + 1 + returned.chars().count() <= 120 {
            " ".to_string()
        } else {
            "\n    ".to_string()
        };
        let but = format!("    but there the specification returns \"{spec}\"");
        let but = if but.chars().count() <= 120 {
            but
        } else {
            format!("    but there the specification returns\n      \"{spec}\"")
        };
        let _ = writeln!(out, "{call}{gap}{returned}\n{but}");
    }
    let _ = writeln!(
        out,
        "Every order that respects real time (a call that returned before another began stays\nfirst) fails the same way, so no sequential execution explains these results: the\ndesign's calls are not atomic."
    );
    if verdict
        .blocked
        .iter()
        .any(|(i, _)| history[*i].op == Op::Snapshot)
    {
        let _ = writeln!(
            out,
            "A snapshot() must be one consistent copy: the state at one instant between its call and\nits return. The copy above is a state no point of any legal order holds: it mixes states\nfrom before and after another call."
        );
    }
    out
}

/// A state in words: each bucket's balance at the observed time in tokens (exact, nine
/// decimals when not whole), the observed time and the policy version. Two snapshots in the
/// same words hold the same balances, whichever time each design dates its buckets at.
pub fn state_in_words(snapshot: &crate::Snapshot) -> String {
    crate::model::same_state::InWords(snapshot).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, Policy};

    fn allow(thread: usize, now: u64, outcome: Decision, invoked: u64, returned: u64) -> Event {
        Event {
            thread,
            op: Op::Allow {
                key: "k".into(),
                cost: 1,
                now,
            },
            outcome: Outcome::Decision(outcome),
            invoked,
            returned,
        }
    }

    const PASS: Decision = Decision {
        allowed: true,
        whole_tokens: 0,
        retry_after_nanos: 0,
    };

    #[test]
    fn a_double_spend_of_the_last_token_has_no_legal_order() {
        let start = Model::new(Policy::new(1, 1, 1).unwrap(), 2).unwrap();
        let history = vec![allow(1, 0, PASS, 0, 3), allow(2, 0, PASS, 1, 2)];
        let verdict = check(&start, &history).unwrap_err();
        assert_eq!(verdict.longest_prefix.len(), 1);
        assert_eq!(verdict.blocked.len(), 1);
        let text = explain(&start, &history, &verdict);
        assert!(text.contains("retry after 1000000000 ns"), "{text}");
        assert!(
            text.contains("There the specification holds \"k\": 0 tokens"),
            "{text}"
        );
        let table = history_table(&history);
        // Thread 1 began, thread 2 began and returned, then thread 1 returned: four steps,
        // the overlap visible row by row.
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), 4, "{table}");
        assert!(rows[0].starts_with("  #0 allow"), "{table}");
        assert!(rows[1].contains("| #1 allow"), "{table}");
        assert!(rows[2].contains("| -> allowed"), "{table}");
        assert!(rows[3].trim_start().starts_with("-> allowed"), "{table}");
    }

    #[test]
    fn a_history_of_many_threads_stays_within_the_width() {
        let history: Vec<Event> = (0..20)
            .map(|t| allow(t + 1, 500_000_000, PASS, 2 * t as u64, 2 * t as u64 + 41))
            .collect();
        let table = history_table(&history);
        assert_eq!(table.lines().count(), 40, "{table}");
        for line in table.lines() {
            assert!(line.chars().count() <= MAX_WIDTH, "{line}");
        }
        assert!(table.contains("thread 20 returns #19"), "{table}");
    }

    #[test]
    fn overlapping_calls_may_take_either_order() {
        let start = Model::new(Policy::new(1, 1, 1).unwrap(), 2).unwrap();
        let reject = Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos: 1_000_000_000,
        };
        // thread 2 was invoked first but lost the race: legal only as 1 then 2.
        let history = vec![allow(1, 0, PASS, 1, 3), allow(2, 0, reject, 0, 4)];
        assert_eq!(check(&start, &history), Ok(vec![0, 1]));
        // in real time 2 returned before 1 began, so 2 must come first: illegal.
        let history = vec![allow(1, 0, PASS, 5, 6), allow(2, 0, reject, 0, 4)];
        assert!(check(&start, &history).is_err());
    }
}
