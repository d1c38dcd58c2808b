//! The backend's runtime: how the suite's code runs under the backend [`sync`](crate::sync)
//! is built with, once ([`in_execution`]) or under a search of schedules ([`run_controlled`]).
//!
//! - **std** (default): a sequential check runs as it is; a concurrency check runs each of
//!   its scenarios [`PERTURBED_EXECUTIONS`] times on real threads with the facade's
//!   perturbation on (a design built on [`sync`](crate::sync) yields and sleeps at random at
//!   its locks and atomics, so that other threads run inside its gaps), then stress rounds
//!   for designs on raw `std::sync` (probabilistic: a race shows in some runs).
//! - **shuttle** (feature `shuttle`): a sequential check runs inside one controlled execution
//!   (the design's locks are shuttle's); a concurrency check explores each of its scenarios
//!   with seeded random and PCT schedulers (depths 2 and 3) and a bounded depth-first search,
//!   so every run explores the same schedules.
//! - **loom** (`RUSTFLAGS="--cfg loom"`): a sequential check runs inside one loom execution,
//!   and again with each design instance in an execution of its own when the design runs out
//!   of threads there (loom allows five per execution in all, and an actor design spawns one
//!   per instance); a concurrency check explores every interleaving of each scenario within a preemption
//!   bound of [`LOOM_PREEMPTIONS`] (loom's own `LOOM_MAX_PREEMPTIONS` overrides it).
//!
//! What a search looks for, and what it does with what it finds, is
//! [`explorer`](crate::suite::search::explorer)'s.
use std::sync::{Arc, Mutex, PoisonError};

use crate::suite::core::backend::Backend;
use crate::suite::core::panics::guarded;

/// The preemption bound of loom's exploration unless `LOOM_MAX_PREEMPTIONS` says otherwise:
/// 2 finds the races of the seed's scenarios, and bounds the number of executions.
#[cfg_attr(not(loom), allow(dead_code))]
pub(crate) const LOOM_PREEMPTIONS: usize = 2;

/// Executions of each seeded randomized shuttle search (random, PCT depth 2, PCT depth 3).
pub(crate) const SHUTTLE_ITERATIONS: usize = 300;

/// The most executions shuttle's depth-first search explores per scenario.
pub(crate) const SHUTTLE_DFS_LIMIT: usize = 2_000;

/// Executions of each scenario on real threads, with the facade's perturbation on (std).
pub(crate) const PERTURBED_EXECUTIONS: usize = 100;

/// The seed of the perturbation's random choices (std); each execution varies it.
#[cfg_attr(any(loom, feature = "shuttle"), allow(dead_code))]
const PERTURBATION_SEED: u64 = 0x5eed_7e57;

/// The seed of shuttle's randomized searches.
#[cfg_attr(not(feature = "shuttle"), allow(dead_code))]
pub(crate) const SHUTTLE_SEED: u64 = 0x5eed_1013;

/// The stack of every controlled thread that runs the suite's own code (a sequential check,
/// a property's cases, the judge): what a spawned `std` thread gets by default. The
/// backends' own defaults (60 KiB for shuttle, 32 KiB for loom) are too small for a property
/// test and its shrinking.
const STACK_BYTES: usize = 2 << 20;

/// The most scheduling points (lock acquisitions, atomic operations) loom records in the one
/// execution a sequential check runs in: loom reserves its path for this many up front, and a
/// property test's cases need far more than loom's default of 1,000.
#[cfg(loom)]
const ONCE_MAX_BRANCHES: usize = 1 << 20;

/// The most scheduling points shuttle allows the one execution a sequential check runs in:
/// a property test's cases on a design that takes many locks per call (a sharded design's
/// `snapshot` takes every shard's) need more than shuttle's default of 1,000,000. A design
/// that spins forever still fails, with shuttle's message, after this many.
#[cfg(all(feature = "shuttle", not(loom)))]
const ONCE_MAX_STEPS: usize = 1 << 24;

/// Runs `f` once inside an execution of the backend (directly under std), and returns what
/// it returned.
///
/// # Errors
///
/// The message of a panic inside the execution.
pub(crate) fn in_execution<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if !Backend::current().is_controlled() {
        return Ok(f());
    }
    let task = Arc::new(Mutex::new(Some(f)));
    let out: Arc<Mutex<Option<Result<T, String>>>> = Arc::new(Mutex::new(None));
    let (task2, out2) = (Arc::clone(&task), Arc::clone(&out));
    let body = move || {
        let f = task2.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(f) = f {
            // Caught here, inside the execution: the backend then ends it normally instead
            // of printing its own replay instructions, and the suite reports the panic.
            let value = guarded(f);
            *out2.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
        }
    };
    // One execution, not a search: nothing is replayed.
    let _ = run_controlled(body, Search::Once);
    let value = out.lock().unwrap_or_else(PoisonError::into_inner).take();
    value.unwrap_or_else(|| Err("the execution ended without a result".to_string()))
}

/// How the backend searches schedules.
#[derive(Clone, Copy, Debug)]
// Each backend reads the numbers of its own searches only (loom reads none).
#[allow(dead_code)]
pub(crate) enum Search {
    /// One execution.
    Once,
    /// Shuttle's seeded random scheduler.
    Random(usize),
    /// Shuttle's seeded PCT scheduler at a depth.
    Pct(usize, usize),
    /// Shuttle's depth-first search, bounded.
    Dfs(usize),
    /// Loom, exhaustive within the preemption bound.
    Exhaustive,
    /// Real threads, this many executions, with the facade's perturbation on.
    Perturbed(usize),
}

impl Search {
    /// Reads back the form `{:?}` writes ("Random(300)", "Pct(100, 3)"), as a saved
    /// counterexample holds it; `None` for any other text.
    pub(crate) fn from_saved(text: &str) -> Option<Search> {
        let (name, args) = match text.trim().split_once('(') {
            Some((name, rest)) => (name, rest.strip_suffix(')')?),
            None => (text.trim(), ""),
        };
        let numbers: Vec<usize> = args
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        match (name, numbers.as_slice()) {
            ("Once", []) => Some(Search::Once),
            ("Random", [n]) => Some(Search::Random(*n)),
            ("Pct", [n, depth]) => Some(Search::Pct(*n, *depth)),
            ("Dfs", [n]) => Some(Search::Dfs(*n)),
            ("Exhaustive", []) => Some(Search::Exhaustive),
            ("Perturbed", [n]) => Some(Search::Perturbed(*n)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Search {
    /// The search in words, as a failure names the execution it found: "execution 3 of
    /// shuttle's random search (1000 schedules)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Search::Once => f.write_str("a single run"),
            Search::Random(n) => write!(f, "shuttle's random search ({n} schedules)"),
            Search::Pct(n, depth) => {
                write!(f, "shuttle's PCT search ({n} schedules, depth {depth})")
            }
            Search::Dfs(n) => write!(f, "shuttle's depth-first search (up to {n} schedules)"),
            Search::Exhaustive => f.write_str("loom's exhaustive search"),
            Search::Perturbed(n) => write!(f, "{n} perturbed runs on real threads"),
        }
    }
}

/// Runs `body` under the search; returns the execution (from 1) at which a depth-first
/// search stopped because the design did not replay (see [`ReplayGuard`]), if it did.
#[cfg(all(feature = "shuttle", not(loom)))]
pub(crate) fn run_controlled(
    body: impl Fn() + Send + Sync + 'static,
    search: Search,
) -> Option<usize> {
    use crate::suite::host::replay_guard::{ReplayGuard, StoppedAt};
    use shuttle::scheduler::{DfsScheduler, PctScheduler, RandomScheduler};
    use shuttle::{Config, Runner};
    let config = || {
        let mut config = Config::new();
        config.stack_size = STACK_BYTES;
        config.failure_persistence = shuttle::FailurePersistence::None;
        config
    };
    // Shuttle installs a process-wide panic hook on its first run that prints a schedule
    // for every panic, even one the suite catches and reports (a design's `todo!()`), and
    // even outside any execution. The suite reports failures itself: let shuttle install
    // its hook once, then put back the hook that was there before.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let before: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
            Arc::from(std::panic::take_hook());
        let during = Arc::clone(&before);
        std::panic::set_hook(Box::new(move |info| during(info)));
        Runner::new(RandomScheduler::new_from_seed(SHUTTLE_SEED, 1), config()).run(|| {});
        drop(std::panic::take_hook());
        std::panic::set_hook(Box::new(move |info| before(info)));
    });
    match search {
        Search::Once | Search::Exhaustive | Search::Perturbed(_) => {
            let mut config = config();
            config.max_steps = shuttle::MaxSteps::FailAfter(ONCE_MAX_STEPS);
            Runner::new(RandomScheduler::new_from_seed(SHUTTLE_SEED, 1), config).run(body);
        }
        Search::Random(n) => {
            Runner::new(RandomScheduler::new_from_seed(SHUTTLE_SEED, n), config()).run(body);
        }
        Search::Pct(n, depth) => {
            Runner::new(
                PctScheduler::new_from_seed(SHUTTLE_SEED, depth, n),
                config(),
            )
            .run(body);
        }
        Search::Dfs(n) => {
            let replay = StoppedAt::default();
            let guarded = ReplayGuard::new(DfsScheduler::new(Some(n), false), replay.clone());
            Runner::new(guarded, config()).run(body);
            return replay.stopped_at();
        }
    }
    None
}

#[cfg(loom)]
pub(crate) fn run_controlled(
    body: impl Fn() + Send + Sync + 'static,
    search: Search,
) -> Option<usize> {
    let mut builder = loom::model::Builder::new();
    match search {
        Search::Once => {
            // One thread: a single execution, as long as the check needs. Loom's main
            // thread has a fixed 32 KiB stack, so the body runs on a thread of its own.
            builder.max_branches = ONCE_MAX_BRANCHES;
            builder.preemption_bound = Some(0);
            let body = std::sync::Arc::new(body);
            builder.check(move || {
                let body = std::sync::Arc::clone(&body);
                let spawned = loom::thread::Builder::new()
                    .stack_size(STACK_BYTES)
                    .spawn(move || body());
                match spawned {
                    Ok(handle) => {
                        if let Err(panic) = handle.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                    Err(e) => panic!("could not start the check's thread: {e}"),
                }
            });
        }
        _ => {
            if builder.preemption_bound.is_none() {
                builder.preemption_bound = Some(LOOM_PREEMPTIONS);
            }
            builder.check(body);
        }
    }
    None
}

#[cfg(not(any(loom, feature = "shuttle")))]
pub(crate) fn run_controlled(
    body: impl Fn() + Send + Sync + 'static,
    search: Search,
) -> Option<usize> {
    match search {
        Search::Perturbed(executions) => {
            for execution in 0..executions {
                let seed =
                    PERTURBATION_SEED ^ (execution as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let _on = match pause_in(execution) {
                    Some(pause) => crate::sync::perturbation::enable_pausing(seed, pause),
                    None => crate::sync::perturbation::enable(seed),
                };
                body();
            }
        }
        _ => body(),
    }
    None
}

/// The threads a perturbed execution may hold (a scenario has at most three, besides the ones
/// a design starts), and the points of each it tries.
#[cfg(not(any(loom, feature = "shuttle")))]
const PAUSED_THREADS: usize = 3;
#[cfg(not(any(loom, feature = "shuttle")))]
const PAUSED_POINTS: usize = 16;

/// Where perturbed execution `execution` holds a thread: every other execution holds one, each
/// thread at each of its first [`PAUSED_POINTS`] points in turn, so that a hundred executions
/// try each gap of a small scenario's threads once; the others perturb at random only.
#[cfg(not(any(loom, feature = "shuttle")))]
fn pause_in(execution: usize) -> Option<crate::sync::perturbation::Pause> {
    (execution % 2 == 1).then(|| {
        let k = execution / 2;
        crate::sync::perturbation::Pause {
            thread: 1 + k % PAUSED_THREADS,
            point: 1 + ((k / PAUSED_THREADS) % PAUSED_POINTS) as u64,
        }
    })
}

/// The searches a concurrency scenario gets under the current backend.
pub(crate) fn searches() -> Vec<Search> {
    match Backend::current() {
        Backend::Std => vec![Search::Perturbed(PERTURBED_EXECUTIONS)],
        Backend::Shuttle => vec![
            Search::Random(SHUTTLE_ITERATIONS),
            Search::Pct(SHUTTLE_ITERATIONS, 2),
            Search::Pct(SHUTTLE_ITERATIONS, 3),
            Search::Dfs(SHUTTLE_DFS_LIMIT),
        ],
        Backend::Loom => vec![Search::Exhaustive],
    }
}

/// Runs a computation that touches no controlled primitive (the judge) on a thread with a
/// full-size stack when the backend's threads have small ones (loom's main thread has
/// 32 KiB); directly otherwise. The thread is started once per OS thread and kept: loom runs
/// thousands of executions per scenario, and a thread per execution would cost more than
/// the executions.
pub(crate) fn on_large_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    use std::cell::RefCell;
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    use std::sync::mpsc::{channel, Sender};
    type Task = Box<dyn FnOnce() + Send>;
    std::thread_local! {
        static WORKER: RefCell<Option<Sender<Task>>> = const { RefCell::new(None) };
    }
    if Backend::current() != Backend::Loom {
        return f();
    }
    let (answer, answered) = channel();
    let task: Task = Box::new(move || {
        let _ = answer.send(catch_unwind(AssertUnwindSafe(f)));
    });
    WORKER.with(|worker| {
        let mut worker = worker.borrow_mut();
        // A send fails only when the thread has ended; the task then comes back.
        let unsent = match worker.as_ref() {
            Some(sender) => sender.send(task).err().map(|back| back.0),
            None => Some(task),
        };
        if let Some(task) = unsent {
            let (sender, tasks) = channel::<Task>();
            let started = std::thread::Builder::new()
                .name("judge".to_string())
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    while let Ok(task) = tasks.recv() {
                        task();
                    }
                });
            match started {
                Ok(_) => {
                    let _ = sender.send(task);
                    *worker = Some(sender);
                }
                Err(e) => panic!("could not start the judge's thread: {e}"),
            }
        }
    });
    match answered.recv() {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => resume_unwind(panic),
        Err(_) => panic!("the judge's thread ended without an answer"),
    }
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::{pause_in, PAUSED_POINTS, PAUSED_THREADS, PERTURBED_EXECUTIONS};
    use std::collections::BTreeSet;

    #[test]
    fn the_perturbed_executions_hold_every_thread_at_each_of_its_first_points() {
        let pauses: Vec<_> = (0..PERTURBED_EXECUTIONS).filter_map(pause_in).collect();
        assert_eq!(
            pauses.len(),
            PERTURBED_EXECUTIONS / 2,
            "every other execution"
        );
        let places: BTreeSet<(usize, u64)> = pauses.iter().map(|p| (p.thread, p.point)).collect();
        let every: BTreeSet<(usize, u64)> = (1..=PAUSED_THREADS)
            .flat_map(|t| (1..=PAUSED_POINTS as u64).map(move |p| (t, p)))
            .collect();
        assert_eq!(places, every);
    }
}
