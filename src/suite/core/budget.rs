//! The harness's own time: how long a check's searches may run, and what they covered.
//!
//! A concurrency check explores schedules (shuttle, loom), runs perturbed executions and
//! stress rounds (std), and shrinks what it finds. All of that is the harness's work, not the
//! design's, so it never fails a design for taking long: each check has a [`Budget`] (a
//! wall-clock cap, [`env::BUDGET`](crate::suite::core::env::BUDGET)), and a search that reaches it stops
//! early and says so. A slow machine loses coverage, never a verdict. A design is failed for
//! time only by [`watch`](crate::suite::core::watch): one of its calls has not returned.
//!
//! The budget belongs to the check's thread; searches take it with [`current`] and count into
//! it from wherever their executions run (a shuttle or loom execution, a perturbed thread).
use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

/// A check's budget for its own searches: a deadline, and counts of what was covered.
#[derive(Debug)]
pub(crate) struct Budget {
    deadline: Instant,
    limit: Duration,
    executions: AtomicU64,
    rounds: AtomicU64,
    searches: AtomicU64,
    cut: AtomicU64,
    spent: AtomicBool,
}

impl Budget {
    fn new(limit: Duration) -> Budget {
        Budget {
            deadline: Instant::now() + limit,
            limit,
            executions: AtomicU64::new(0),
            rounds: AtomicU64::new(0),
            searches: AtomicU64::new(0),
            cut: AtomicU64::new(0),
            spent: AtomicBool::new(false),
        }
    }

    /// `true` once the deadline has passed (and from then on).
    pub(crate) fn spent(&self) -> bool {
        if self.spent.load(Ordering::Relaxed) {
            return true;
        }
        let spent = Instant::now() >= self.deadline;
        if spent {
            self.spent.store(true, Ordering::Relaxed);
        }
        spent
    }

    /// One execution of a scenario ran to its verdict.
    pub(crate) fn ran_execution(&self) {
        self.executions.fetch_add(1, Ordering::Relaxed);
    }

    /// One stress round on real threads ran to its verdict.
    pub(crate) fn ran_round(&self) {
        self.rounds.fetch_add(1, Ordering::Relaxed);
    }

    /// A search (one scenario under one strategy, or a series of stress rounds) began.
    pub(crate) fn began_search(&self) {
        self.searches.fetch_add(1, Ordering::Relaxed);
    }

    /// A search ended early because the budget was spent.
    pub(crate) fn cut_search(&self) {
        self.cut.fetch_add(1, Ordering::Relaxed);
    }

    fn coverage(&self) -> Coverage {
        Coverage {
            executions: self.executions.load(Ordering::Relaxed),
            rounds: self.rounds.load(Ordering::Relaxed),
            searches: self.searches.load(Ordering::Relaxed),
            cut_short: self.cut.load(Ordering::Relaxed),
            budget_secs: self.limit.as_secs(),
        }
    }
}

/// What a check's searches covered: for a person, and in the graded reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Executions of concurrent scenarios judged (schedules explored, perturbed runs).
    pub executions: u64,
    /// Stress rounds on real threads judged.
    pub rounds: u64,
    /// Searches begun: one per scenario and strategy, one per series of stress rounds.
    pub searches: u64,
    /// Searches the budget ended before they finished.
    pub cut_short: u64,
    /// The budget, in seconds.
    pub budget_secs: u64,
}

impl Coverage {
    /// `true` when the budget ended a search early.
    pub fn was_cut_short(&self) -> bool {
        self.cut_short > 0
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ran = format!("explored {} schedules", self.executions);
        if self.rounds > 0 {
            ran.push_str(&format!(" and {} stress rounds", self.rounds));
        }
        if self.was_cut_short() {
            write!(
                f,
                "{ran}; the {} s budget of the harness's own search ended {} of {} searches early \
                 (a busy machine; the design was not at fault: {} sets the budget)",
                self.budget_secs,
                self.cut_short,
                self.searches,
                crate::suite::core::env::BUDGET
            )
        } else {
            write!(f, "{ran}, every search in full")
        }
    }
}

std::thread_local! {
    static CURRENT: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
}

/// Gives the calling thread (a check's) a fresh budget of `limit`.
pub(crate) fn begin(limit: Duration) {
    CURRENT.with(|c| *c.borrow_mut() = Some(Arc::new(Budget::new(limit))));
}

/// Ends the calling thread's budget and returns what it covered, when any search ran.
pub(crate) fn end() -> Option<Coverage> {
    CURRENT
        .with(|c| c.borrow_mut().take())
        .map(|b| b.coverage())
        .filter(|c| c.searches > 0)
}

/// The calling thread's budget; a thread without one (a search run outside the runner, as
/// the CLI's `explore` does) gets a budget that never ends.
pub(crate) fn current() -> Arc<Budget> {
    CURRENT
        .with(|c| c.borrow().clone())
        .unwrap_or_else(|| Arc::new(Budget::new(Duration::from_secs(u64::from(u32::MAX)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_counts_what_ran_and_says_when_it_cut_a_search() {
        begin(Duration::ZERO);
        let b = current();
        assert!(b.spent(), "a zero budget is spent at once");
        b.began_search();
        b.ran_execution();
        b.began_search();
        b.cut_search();
        let c = end().expect("searches ran");
        assert_eq!((c.executions, c.searches, c.cut_short), (1, 2, 1));
        assert!(c.was_cut_short());
        assert!(c.to_string().contains("ended 1 of 2 searches early"), "{c}");
        assert!(end().is_none(), "ended: nothing is kept");
    }

    #[test]
    fn without_a_runner_the_budget_never_ends() {
        assert!(!current().spent());
    }

    #[test]
    fn a_check_without_searches_reports_no_coverage() {
        begin(Duration::from_secs(5));
        assert_eq!(end(), None);
    }
}
