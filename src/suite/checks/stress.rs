//! Stress rounds on real threads: a design shared by a round's threads that start together
//! behind a barrier, each call recorded with logical invocation and return times, and the
//! rounds of a check run until the budget is spent, the first failing round kept and the
//! others counted.
use crate::suite::host::subject::Subject;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use crate::model::{Model, Op, Outcome};
use crate::{Limiter, Policy};

use crate::suite::core::failure::Failure;
use crate::suite::oracle::linearizability::{self, Event};
use crate::suite::oracle::probe::build;
use crate::suite::oracle::recorder::record;
use crate::suite::oracle::sequential::{already_wrong, one_at_a_time};

/// Starts one of a round's threads. Rounds run on real threads only, where the facade's
/// `spawn` puts the thread in its spawner's group, so that a hang lists it among the check's
/// waiting threads.
#[cfg(not(any(loom, feature = "shuttle")))]
pub(crate) fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    let calls = crate::suite::core::watch::group();
    crate::sync::thread::spawn(move || {
        let _calls = crate::suite::core::watch::adopt(calls);
        f()
    })
}

/// Under shuttle and loom the rounds do not run (the controlled search replaces them).
#[cfg(any(loom, feature = "shuttle"))]
pub(crate) fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::spawn(f)
}

/// A design shared by a round's threads, and the logical clock stamping their calls.
pub(crate) struct Round {
    pub(crate) subject: Subject,
    pub(crate) design: Arc<dyn Limiter>,
    pub(crate) clock: Arc<AtomicU64>,
    pub(crate) policy: Policy,
    pub(crate) max_keys: usize,
}

impl Round {
    pub(crate) fn new(subject: Subject, policy: Policy, max_keys: usize) -> Result<Self, Failure> {
        Ok(Round {
            subject,
            design: Arc::from(build(subject, policy, max_keys)?),
            clock: Arc::new(AtomicU64::new(0)),
            policy,
            max_keys,
        })
    }

    /// Runs `op` once, stamped.
    pub(crate) fn call(
        design: &dyn Limiter,
        clock: &AtomicU64,
        thread: usize,
        op: Op,
    ) -> Result<Event, Failure> {
        record(design, || clock.fetch_add(1, Ordering::SeqCst), thread, &op).map_err(|msg| {
            Failure::new(format!("thread {thread}: {op} panicked: {msg}")).as_panic()
        })
    }

    /// Runs `ops` in order on the calling thread (thread 0: the init and post parts).
    pub(crate) fn sequential(&self, ops: Vec<Op>) -> Result<Vec<Event>, Failure> {
        ops.into_iter()
            .map(|op| Self::call(&*self.design, &self.clock, 0, op))
            .collect()
    }

    /// Runs each list of ops on its own thread, all released together.
    pub(crate) fn parallel(&self, per_thread: Vec<Vec<Op>>) -> Result<Vec<Event>, Failure> {
        let barrier = Arc::new(Barrier::new(per_thread.len()));
        let handles: Vec<_> = per_thread
            .into_iter()
            .enumerate()
            .map(|(i, ops)| {
                let (design, clock, barrier) =
                    (self.design.clone(), self.clock.clone(), barrier.clone());
                spawn(move || {
                    barrier.wait();
                    ops.into_iter()
                        .map(|op| Self::call(&*design, &clock, i + 1, op))
                        .collect::<Result<Vec<Event>, Failure>>()
                })
            })
            .collect();
        let mut events = Vec::new();
        for h in handles {
            match h.join() {
                Ok(result) => events.extend(result?),
                Err(_) => return Err(Failure::new("a contender thread died")),
            }
        }
        Ok(events)
    }

    /// [`linearizable`](Self::linearizable) when `explain`, else only its verdict (a
    /// failure with a bare summary, for a round that is counted, not shown).
    pub(crate) fn judge(&self, history: &[Event], explain: bool) -> Result<(), Failure> {
        if explain {
            return self.linearizable(history);
        }
        let start = Model::new(self.policy, self.max_keys)
            .map_err(|e| Failure::new(format!("the check itself is misconfigured: {e}")))?;
        linearizability::check(&start, history)
            .map(|_| ())
            .map_err(|_| Failure::new("no sequential order explains this round's history"))
    }

    /// Checks the history for linearizability from a fresh specification.
    pub(crate) fn linearizable(&self, history: &[Event]) -> Result<(), Failure> {
        let start = Model::new(self.policy, self.max_keys)
            .map_err(|e| Failure::new(format!("the check itself is misconfigured: {e}")))?;
        let verdict = match linearizability::check(&start, history) {
            Ok(_) => return Ok(()),
            Err(verdict) => verdict,
        };
        // Sequential first: the same calls one at a time, in the order they were invoked, on
        // a fresh instance. A design already wrong there gets that difference, not "not
        // atomic".
        let mut in_order: Vec<&Event> = history.iter().collect();
        in_order.sort_by_key(|e| e.invoked);
        let calls = in_order.into_iter().map(|e| e.op.clone());
        if let Err(f) = one_at_a_time(self.subject, self.policy, self.max_keys, calls) {
            return Err(already_wrong(
                f,
                "a concurrent round, run one at a time on a fresh instance in the order they \
                 were invoked",
            ));
        }
        Err(verdict).map_err(|verdict| {
            Failure::new(format!(
                "no sequential order of these {} calls gives the results the design returned (starting from {}, max_keys {})",
                history.len(),
                self.policy,
                self.max_keys
            ))
            .with_detail(format!(
                "history (init and post calls on lines of their own; the concurrent calls step by step, one column per thread):\n{}\n{}",
                linearizability::history_table(history),
                linearizability::explain(&start, history, &verdict)
            ))
        })
    }
}

pub(crate) fn allowed(e: &Event) -> bool {
    matches!(e.outcome, Outcome::Decision(d) if d.allowed)
}

/// Runs `rounds` stress rounds on real threads. `round` gets the round's index, from 0, and
/// whether a failure should be explained: only until the first round that shows the race (a
/// history's explanation costs far more than its verdict, and later rounds only count).
///
/// A race on real threads shows in some rounds and not in others, so a round that shows one
/// does not end the check: the failure is the first round's, and its summary says in how many
/// of the rounds the race showed, with the advice to explore the design under shuttle, whose
/// search does not depend on luck. A panic of the design, a difference the calls show one
/// at a time (the design is wrong without concurrency), or a check that cannot run, ends
/// the rounds at once.
pub(crate) fn stress(
    rounds: u64,
    mut round: impl FnMut(u64, bool) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut first: Option<Failure> = None;
    let mut shown = 0u64;
    let budget = crate::suite::core::budget::current();
    budget.began_search();
    let mut ran = 0;
    for i in 0..rounds {
        if budget.spent() {
            budget.cut_search();
            break;
        }
        ran += 1;
        let verdict = round(i, first.is_none());
        budget.ran_round();
        match verdict {
            Ok(()) => {}
            // A panic, or a difference found one call at a time (it carries a sequential
            // trace), is no race: it ends the rounds at once and is reported as it is.
            Err(failure) if failure.panicked || failure.replay.is_some() => return Err(failure),
            Err(failure) => {
                shown += 1;
                first.get_or_insert(failure);
            }
        }
    }
    match first {
        None => Ok(()),
        Some(mut failure) => {
            failure.summary = format!(
                "{} (found in {shown} of {ran} rounds on real threads: a race shows by chance there, so a run can pass by luck; built with the shuttle feature, the suite searches the schedules instead)",
                failure.summary
            );
            Err(failure)
        }
    }
}
