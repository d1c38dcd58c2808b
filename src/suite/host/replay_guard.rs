//! A guard around shuttle's depth-first scheduler, for designs that do not replay.
//!
//! Depth-first search moves from one schedule to the next by replaying the previous one's
//! choices up to a point and changing one: it relies on the design offering the same threads
//! to run at every step of a replayed prefix. A design steered by something shuttle does not
//! control (a randomly keyed hasher choosing which lock to take, the wall clock, a thread id,
//! a counter that outlives an execution) breaks that, and shuttle's scheduler then panics
//! inside the design's call, which would read as the design's own panic. That is no mistake
//! of the design's: a correct design may take its locks that way.
//!
//! [`ReplayGuard`] checks the precondition before every choice. When it fails, the guard
//! finishes that execution on a legal schedule of its own (the first runnable thread at each
//! step, so the execution is still judged) and ends the search; [`StoppedAt::stopped_at`] then
//! says at which execution.
use std::sync::{Arc, Mutex, PoisonError};

use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

/// What a guarded search found out about replaying the design, shared with its caller.
#[derive(Clone, Debug, Default)]
pub(crate) struct StoppedAt(Arc<Mutex<Option<usize>>>);

impl StoppedAt {
    /// The execution (from 1) in which the design first took a different path on a replayed
    /// prefix, or `None` if every execution replayed.
    pub(crate) fn stopped_at(&self) -> Option<usize> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stop(&self, execution: usize) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(execution);
    }
}

/// One step of an execution: the threads that could run, and the one chosen.
#[derive(Debug, PartialEq, Eq)]
struct Step {
    runnable: Vec<TaskId>,
    chosen: TaskId,
}

/// `inner`, a scheduler that replays prefixes of earlier executions, checked at every step
/// against the execution before.
#[derive(Debug)]
pub(crate) struct ReplayGuard<S> {
    inner: S,
    replay: StoppedAt,
    /// The steps of the previous execution, and of this one so far.
    previous: Vec<Step>,
    current: Vec<Step>,
    /// Whether every choice of this execution so far equals the previous execution's at the
    /// same step: while it does, a design that replays offers the same runnable threads.
    following: bool,
    executions: usize,
    /// Set once the design did not replay: the rest of the execution takes the first
    /// runnable thread, and no further execution starts.
    stopped: bool,
}

impl<S: Scheduler> ReplayGuard<S> {
    /// Guards `inner`, reporting to `replay`.
    pub(crate) fn new(inner: S, replay: StoppedAt) -> Self {
        ReplayGuard {
            inner,
            replay,
            previous: Vec::new(),
            current: Vec::new(),
            following: true,
            executions: 0,
            stopped: false,
        }
    }
}

impl<S: Scheduler> Scheduler for ReplayGuard<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.stopped {
            return None;
        }
        self.previous = std::mem::take(&mut self.current);
        self.following = true;
        self.executions += 1;
        self.inner.new_execution()
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        let ids: Vec<TaskId> = runnable.iter().map(|t| t.id()).collect();
        let step = self.current.len();
        if !self.stopped && self.following && self.executions > 1 {
            // The same choices so far: a design that replays is where it was before, with
            // the same threads runnable (and has not already ended there).
            let replayed = self.previous.get(step).is_some_and(|s| s.runnable == ids);
            if !replayed {
                self.stopped = true;
                self.replay.stop(self.executions);
            }
        }
        let chosen = if self.stopped {
            *ids.first()?
        } else {
            let chosen = self.inner.next_task(runnable, current, is_yielding)?;
            if self.previous.get(step).map(|s| s.chosen) != Some(chosen) {
                self.following = false;
            }
            chosen
        };
        self.current.push(Step {
            runnable: ids,
            chosen,
        });
        Some(chosen)
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}
