//! Concurrent scenarios run on a design through [`sync`](crate::sync), under whichever
//! backend the crate is built with, and judged by the suite's one linearizability checker.
//!
//! A [`Scenario`] is a sequential init part, a few threads of operations, and a sequential
//! post part (some races leave every concurrent result legal and show only in what a later
//! call observes). [`execute`] runs it once, stamping every call with logical invocation and
//! return times from a shared atomic counter; [`judge`] asks
//! the linearizability checker whether some order that respects those times gives, on the
//! specification, exactly what every call returned, and compares the stored state at the end
//! with the specification's state after that order.
//!
//! Under `loom` (`RUSTFLAGS="--cfg loom"`) or `shuttle` (feature `shuttle`), the threads, the
//! counter and every lock a design takes from `ratelimit_lab::sync` belong to the controlled
//! scheduler, so running `execute` and `judge` inside `loom::model` or a shuttle runner
//! explores the scenario's interleavings deterministically.
use crate::suite::host::subject::Subject;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::{Model, Op};
use crate::suite::core::failure::Failure;
use crate::suite::core::panics::{guarded, panic_message};
use crate::suite::host::{crew, perturbation};
use crate::suite::oracle::linearizability;
/// One call of an [`Execution`]'s history (what [`judge`] judges).
pub use crate::suite::oracle::linearizability::Event;
use crate::suite::oracle::recorder::record;
use crate::suite::oracle::sequential::one_at_a_time;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::Arc;
use crate::{Limiter, Policy, Snapshot};

/// How [`judge`] begins when the outcomes have a legal order and only the state left differs.
pub(crate) const STATE_ONLY: &str = "the outcomes have a legal order";

/// Calls to run: an init part on one thread, then `threads` at once, then a post part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// The limiter's starting policy.
    pub policy: Policy,
    /// The limiter's key bound.
    pub max_keys: usize,
    /// Calls made before the threads start, in order.
    pub init: Vec<Op>,
    /// Each thread's calls, in order.
    pub threads: Vec<Vec<Op>>,
    /// Calls made after every thread has finished, in order.
    pub post: Vec<Op>,
}

impl Scenario {
    /// The scenario in words, one part a line: the policy and key bound, the calls before
    /// the threads start (`init`), each thread's calls, and those after they end (`post`).
    pub fn in_words(&self) -> String {
        let list = |ops: &[Op]| {
            if ops.is_empty() {
                "nothing".to_string()
            } else {
                ops.iter()
                    .map(|o| o.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        };
        let mut out = format!(
            "scenario: {}, max_keys {}\n  init: {}\n",
            self.policy,
            self.max_keys,
            list(&self.init)
        );
        for (i, t) in self.threads.iter().enumerate() {
            let _ = writeln!(out, "  thread {}: {}", i + 1, list(t));
        }
        let _ = writeln!(out, "  post: {}", list(&self.post));
        out
    }
}

/// What one execution of a scenario recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// Every call with its outcome and logical times; thread `0` is the init and post parts,
    /// thread `i` the scenario's thread `i − 1`.
    pub history: Vec<Event>,
    /// The design's state at the end, when it offers one.
    pub snapshot: Option<Snapshot>,
}

/// Runs `scenario` once on a fresh `L`: the init part, then one [`sync::thread`](crate::sync)
/// per thread of calls, joined, then the post part.
///
/// # Panics
///
/// When `L::new` refuses the scenario's policy and key bound, or the design panics (the panic
/// propagates with its message, which is what loom and shuttle report).
pub fn execute<L: Limiter>(scenario: &Scenario) -> Execution {
    match try_execute::<L>(scenario) {
        Ok(execution) => execution,
        Err(why) => panic!("{why}"),
    }
}

/// [`execute`] with the design's panics caught on every thread, so that a controlled
/// backend sees an execution that ends normally and the suite reports the panic itself.
///
/// # Errors
///
/// What went wrong: `L::new` refused the scenario, or the design panicked (the first panic,
/// with the call it happened in).
pub fn try_execute<L: Limiter>(scenario: &Scenario) -> Result<Execution, String> {
    try_execute_subject(Subject::of::<L>(), scenario)
}

/// [`try_execute`] on a design given as a [`Subject`].
///
/// # Errors
///
/// As [`try_execute`].
pub fn try_execute_subject(subject: Subject, scenario: &Scenario) -> Result<Execution, String> {
    crate::suite::core::watch::fresh_execution();
    let design = match guarded(|| subject.build(scenario.policy, scenario.max_keys)) {
        Ok(Ok(design)) => Arc::new(design),
        Ok(Err(e)) => return Err(format!("the design refused {}: {e}", scenario.policy)),
        Err(panic) => {
            return Err(format!(
                "new({}, max_keys {}) panicked: {panic}",
                scenario.policy, scenario.max_keys
            ))
        }
    };
    let clock = Arc::new(AtomicU64::new(0));
    let call = |design: &dyn Limiter, clock: &AtomicU64, thread: usize, op: &Op| {
        record(design, || clock.fetch_add(1, Ordering::SeqCst), thread, op)
            .map_err(|panic| format!("{op} panicked on thread {thread}: {panic}"))
    };
    let mut history: Vec<Event> = scenario
        .init
        .iter()
        .map(|op| call(&**design, &clock, 0, op))
        .collect::<Result<_, String>>()?;
    // On real threads the scenario's threads start together: a thread started alone would
    // often finish its calls before the next one exists. Shuttle and loom choose every
    // interleaving themselves.
    let together = (!cfg!(any(loom, feature = "shuttle")))
        .then(|| std::sync::Arc::new(std::sync::Barrier::new(scenario.threads.len())));
    let handles: Vec<_> = scenario
        .threads
        .iter()
        .enumerate()
        .map(|(i, ops)| {
            let (design, clock, ops) = (Arc::clone(&design), Arc::clone(&clock), ops.clone());
            let calls = crate::suite::core::watch::group();
            let together = together.clone();
            crew::spawn(move || {
                let start = perturbation::reached();
                let _calls = crate::suite::core::watch::adopt(calls);
                if let Some(together) = together {
                    together.wait();
                }
                let events = ops
                    .iter()
                    .map(|op| call(&**design, &clock, i + 1, op))
                    .collect::<Result<Vec<Event>, String>>();
                (events, perturbation::reached().saturating_sub(start))
            })
        })
        .collect();
    let mut first_panic = None;
    for handle in handles {
        match perturbation::idle(|| handle.join()) {
            Ok((events, reached)) => {
                perturbation::credit(reached);
                match events {
                    Ok(events) => history.extend(events),
                    Err(why) => {
                        first_panic.get_or_insert(why);
                    }
                }
            }
            Err(payload) => {
                first_panic.get_or_insert(panic_message(payload.as_ref()));
            }
        }
    }
    if let Some(why) = first_panic {
        return Err(why);
    }
    for op in &scenario.post {
        history.push(call(&**design, &clock, 0, op)?);
    }
    let snapshot =
        guarded(|| design.snapshot()).map_err(|panic| format!("snapshot() panicked: {panic}"))?;
    Ok(Execution { history, snapshot })
}

/// Whether `execution` is explained by some sequential order of its calls.
///
/// # Errors
///
/// A text for a person: the history (one column per thread), and either why no order that
/// respects real time gives these outcomes, or how the stored state at the end differs from
/// the specification's after the legal order found.
pub fn judge(scenario: &Scenario, execution: &Execution) -> Result<(), String> {
    let start = Model::new(scenario.policy, scenario.max_keys)
        .map_err(|e| format!("the scenario itself is invalid: {e}"))?;
    let history = &execution.history;
    match linearizability::check(&start, history) {
        Err(verdict) => Err(format!(
            "not linearizable:\n{}\n{}",
            linearizability::history_table(history),
            linearizability::explain(&start, history, &verdict)
        )),
        Ok(order) => {
            let mut model = start;
            for i in order {
                model.apply(&history[i].op);
            }
            let spec = model.snapshot();
            match &execution.snapshot {
                Some(got) => match crate::model::same_state::compare(got, &spec) {
                    Ok(()) => Ok(()),
                    Err(difference) => {
                        let mut out = String::new();
                        let _ = writeln!(
                            out,
                            "{STATE_ONLY}, but the stored state differs from the specification's after it:\n{}",
                            linearizability::history_table(history)
                        );
                        let (mine, theirs) = (
                            linearizability::state_in_words(got),
                            linearizability::state_in_words(&spec),
                        );
                        if mine == theirs {
                            // The words round to whole tokens: the difference is finer.
                            let _ = writeln!(out, "{difference}");
                        } else {
                            let _ = writeln!(out, "the design holds:        {mine}");
                            let _ = writeln!(out, "the specification holds: {theirs}");
                        }
                        Err(out)
                    }
                },
                None => Ok(()),
            }
        }
    }
}

/// Runs the scenario's calls on a fresh `L` on one thread, in the order given by `pick`
/// (indices into the threads, one per call of the parallel part, each taking that thread's
/// next call), beside the specification through the suite's [`Probe`](crate::suite::Probe).
///
/// # Errors
///
/// The first difference from the specification, as the probe explains it, with a trace that
/// the suite's diagnosis can replay.
pub fn run_sequentially<L: Limiter>(scenario: &Scenario, pick: &[usize]) -> Result<(), Failure> {
    run_sequentially_subject(Subject::of::<L>(), scenario, pick)
}

/// [`run_sequentially`] on a design given as a [`Subject`].
///
/// # Errors
///
/// As [`run_sequentially`].
pub fn run_sequentially_subject(
    subject: Subject,
    scenario: &Scenario,
    pick: &[usize],
) -> Result<(), Failure> {
    let mut next = vec![0usize; scenario.threads.len()];
    let parallel: Vec<Op> = pick
        .iter()
        .filter_map(|&t| {
            let op = scenario.threads.get(t)?.get(next[t])?.clone();
            next[t] += 1;
            Some(op)
        })
        .collect();
    let calls = scenario
        .init
        .iter()
        .cloned()
        .chain(parallel)
        .chain(scenario.post.iter().cloned());
    one_at_a_time(subject, scenario.policy, scenario.max_keys, calls)
}
