//! The search for a failing execution of a concurrent scenario, and what is done with one:
//! every execution the backend's searches run (see `host::runtime`) is judged by the
//! linearizability checker; before a history is called non-linearizable, the same calls are
//! run one at a time on a fresh instance, and a design that is already wrong sequentially
//! gets that sequential difference instead. A failing scenario is shrunk, and under shuttle
//! and loom saved as a [`Counterexample`] that [`replay`] explores again.
use crate::suite::host::subject::Subject;
use std::sync::{Arc, Mutex, PoisonError};

use crate::model::Op;
use crate::suite::core::backend::Backend;
use crate::suite::core::cause::Cause;
use crate::suite::core::failure::Failure;
use crate::suite::host::runtime::{in_execution, on_large_stack, run_controlled, searches, Search};
use crate::suite::oracle::sequential::already_wrong;
use crate::suite::search::counterexample::{self, Counterexample};
use crate::suite::search::race_kind::race_mistake;
use crate::suite::search::scenario::{
    judge, run_sequentially_subject, try_execute_subject, Execution, Scenario, STATE_ONLY,
};
use crate::Policy;

/// A check of one execution beyond linearizability (e.g. "exactly ten passed").
pub(crate) type Extra = fn(&Scenario, &Execution) -> Result<(), String>;

/// Explores `scenario` on `L` under the backend's searches (shuttle, loom); every
/// execution must be linearizable, hold the same state the specification does after the
/// legal order, and pass `extra`.
///
/// # Errors
///
/// The first execution that fails, as a [`Failure`]: a sequential difference when the same
/// calls one at a time already disagree with the specification (sequential first), else the
/// history with why no order explains it.
pub(crate) fn explore(subject: Subject, scenario: &Scenario, extra: Extra) -> Result<(), Failure> {
    let Some(found) = find(subject, scenario, extra) else {
        return Ok(());
    };
    if let Some(panic) = found.why.strip_prefix(PANICKED) {
        return Err(Failure::new(format!(
            "the design panicked in execution {} of {} of a concurrent scenario: {panic}",
            found.execution, found.search
        ))
        .with_detail(scenario.in_words())
        .as_panic());
    }
    // Sequential first: a design already wrong one call at a time gets that difference,
    // never "not atomic".
    one_at_a_time(subject, scenario, sequential_first)?;
    let (shrunk, found) = shrink(subject, scenario, found);
    // The shrunk scenario is small: every order of its calls one at a time can be tried, and
    // a design already wrong in one of them (an answer that depends on which call came
    // first, not on calls overlapping) gets that difference too.
    one_at_a_time(subject, &shrunk, in_any_order)?;
    let check = CURRENT_CHECK.with(std::cell::Cell::get);
    let replay = if Backend::current().is_controlled() {
        save_for_replay(&shrunk, &found, check)
    } else {
        format!(
            "\nFound on real threads, with the schedule perturbed at the design's locks and atomics:\nanother run may take other schedules. For a counterexample found the same way on every\nrun, and replayable, run the check under shuttle (the README says how):\n  CARGO_TARGET_DIR=target-shuttle cargo test --release --features shuttle -- {check}\n"
        )
    };
    let smaller = if shrunk == *scenario {
        String::new()
    } else {
        format!(
            ", shrunk from {} threads and {} calls",
            scenario.threads.len(),
            calls_in(scenario)
        )
    };
    let summary = if found.why.starts_with(STATE_ONLY) {
        format!(
            "the outcomes of execution {} of {} of a concurrent scenario have a legal order, but the state it leaves does not",
            found.execution, found.search
        )
    } else {
        format!(
            "no sequential order explains execution {} of {} of a concurrent scenario",
            found.execution, found.search
        )
    };
    let mut failure = Failure::new(summary);
    if let Some(mistake) = race_mistake(&shrunk, found.ran.as_ref()) {
        failure = failure.resembling(mistake);
        failure.cause = Cause::of_race(mistake);
    }
    Err(failure.with_detail(format!(
        "{} threads and {} calls{smaller}:\n{}\n{}{replay}",
        shrunk.threads.len(),
        calls_in(&shrunk),
        shrunk.in_words(),
        found.why
    )))
}

/// Saves a counterexample found under shuttle or loom and returns the lines that say how to
/// replay it (or why it could not be saved).
fn save_for_replay(shrunk: &Scenario, found: &Found, check: &str) -> String {
    let saved = Counterexample {
        check: check.to_string(),
        backend: Backend::current().name().to_string(),
        search: format!("{:?}", found.search),
        execution: found.execution,
        scenario: shrunk.clone(),
        history: found
            .ran
            .as_ref()
            .map(|r| r.history.clone())
            .unwrap_or_default(),
        snapshot: found.ran.as_ref().and_then(|r| r.snapshot.clone()),
        verdict: found.why.clone(),
    }
    .save();
    let replay = match saved {
        Ok(path) => format!(
            "\nThe counterexample is saved; replay it (the same mode explores the same schedules):\n{}",
            counterexample::how_to_replay(&path, check)
        ),
        Err(e) => format!("\n(the counterexample could not be saved: {e})\n"),
    };
    replay
}

/// The first failing execution of a scenario.
struct Found {
    /// Its number within its search, from 1.
    execution: usize,
    /// The search that found it.
    search: Search,
    /// Why it failed (or [`PANICKED`] and the design's panic).
    why: String,
    /// What it recorded, unless the design panicked.
    ran: Option<Execution>,
}

/// The payload that ends a loom exploration once an execution has failed.
struct StopExploring;

/// Runs the backend's searches over `scenario` until an execution fails.
fn find(subject: Subject, scenario: &Scenario, extra: Extra) -> Option<Found> {
    let found: Arc<Mutex<Option<Found>>> = Arc::new(Mutex::new(None));
    let budget = crate::suite::core::budget::current();
    for search in searches() {
        budget.began_search();
        if budget.spent() {
            budget.cut_search();
            continue;
        }
        let (calls, slot) = (Arc::new(scenario.clone()), Arc::clone(&found));
        let count = Arc::new(Mutex::new(0usize));
        let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (spending, cutting) = (Arc::clone(&budget), Arc::clone(&cut));
        let body = move || {
            if slot
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
            {
                return;
            }
            if spending.spent() {
                // The harness's own time is up: the rest of this search is skipped, not
                // failed (loom is unwound out of, as after a failure).
                cutting.store(true, std::sync::atomic::Ordering::Relaxed);
                if Backend::current() == Backend::Loom {
                    std::panic::resume_unwind(Box::new(StopExploring));
                }
                return;
            }
            let execution = {
                let mut c = count.lock().unwrap_or_else(PoisonError::into_inner);
                *c += 1;
                *c
            };
            let (verdict, recorded) = match try_execute_subject(subject, &calls) {
                Ok(ran) => {
                    let calls = Arc::clone(&calls);
                    let kept = ran.clone();
                    let verdict = on_large_stack(move || {
                        judge(&calls, &ran).and_then(|()| extra(&calls, &ran))
                    });
                    (verdict, Some(kept))
                }
                Err(panic) => (Err(format!("{PANICKED}{panic}")), None),
            };
            spending.ran_execution();
            if let Err(why) = verdict {
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(Found {
                    execution,
                    search,
                    why,
                    ran: recorded,
                });
                if Backend::current() == Backend::Loom {
                    // Loom would go on enumerating the rest of the recorded path's
                    // alternatives, exponentially many, even with every later execution
                    // returning at once: unwind out of the model instead (without the
                    // panic hook: this is no panic of the design's).
                    std::panic::resume_unwind(Box::new(StopExploring));
                }
            }
        };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_controlled(body, search)
        }));
        match ran {
            Ok(Some(execution)) => note_not_replayable(search, execution),
            Ok(None) => {}
            Err(payload) => {
                if !payload.is::<StopExploring>() {
                    std::panic::resume_unwind(payload);
                }
            }
        }
        let failed = found.lock().unwrap_or_else(PoisonError::into_inner).take();
        if failed.is_some() {
            return failed;
        }
        if cut.load(std::sync::atomic::Ordering::Relaxed) {
            budget.cut_search();
        }
    }
    None
}

/// Says, once per process, that a depth-first search stopped early because the design took
/// another path when a schedule was replayed: not a failure (a correct design may choose its
/// locks with a randomly keyed hasher), but the search was not exhaustive.
fn note_not_replayable(search: Search, execution: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let check = CURRENT_CHECK.with(std::cell::Cell::get);
    ONCE.call_once(|| {
        eprintln!(
            "note: {check}: shuttle's {search:?} search stopped at execution {execution}: the design \
             took another path when a schedule was replayed (something shuttle does not control \
             steers it, such as a randomly keyed hasher choosing a lock, the clock or a thread id). \
             The random and PCT searches ran in full; for an exhaustive search too, make the \
             design's choices depend on its calls alone (for example, a fixed hash key under shuttle)."
        );
    });
}

/// The most smaller scenarios [`shrink`] explores: each that passes costs a full search.
const SHRINK_ATTEMPTS: usize = 48;

/// Greedily makes a failing scenario smaller (fewer threads and calls, simpler arguments) while
/// it still fails the linearizability judgement alone (a check's own count, such as "exactly
/// ten pass", does not carry over to fewer threads), keeping at least two threads.
fn shrink(subject: Subject, scenario: &Scenario, found: Found) -> (Scenario, Found) {
    let (mut current, mut found) = (scenario.clone(), found);
    let mut attempts = 0;
    let budget = crate::suite::core::budget::current();
    'smaller: loop {
        for candidate in smaller(&current) {
            // Out of attempts or of the check's budget: what is found so far still fails.
            if attempts == SHRINK_ATTEMPTS || budget.spent() {
                break 'smaller;
            }
            attempts += 1;
            if let Some(f) = find(subject, &candidate, |_, _| Ok(())) {
                if !f.why.starts_with(PANICKED) {
                    current = candidate;
                    found = f;
                    continue 'smaller;
                }
            }
        }
        break;
    }
    (current, found)
}

/// Scenarios one step smaller than `s`, the likeliest to keep failing first:
///
/// 1. a capacity of one token (a race on the last token then needs only two callers: a
///    design that admits one caller too many shows it with two threads instead of three);
/// 2. of more than three threads, the first two only, then the first half (twenty
///    contenders shrink in a few steps, not eighteen);
/// 3. a thread fewer (down to two);
/// 4. a call fewer in a thread of several calls, a post call fewer, an init call fewer;
/// 5. a key bound one lower, a capacity one lower, a cost of one token.
fn smaller(s: &Scenario) -> Vec<Scenario> {
    let mut out = Vec::new();
    let with_capacity = |capacity: u64| {
        Policy::new(s.policy.version(), capacity, s.policy.tokens_per_second())
            .ok()
            .map(|policy| Scenario {
                policy,
                ..s.clone()
            })
    };
    if s.policy.capacity() > 1 {
        out.extend(with_capacity(1));
    }
    if s.threads.len() > 3 {
        let half = s.threads.len() / 2;
        for keep in std::iter::once(2).chain((half > 2).then_some(half)) {
            let mut c = s.clone();
            c.threads.truncate(keep);
            out.push(c);
        }
    }
    if s.threads.len() > 2 {
        for t in 0..s.threads.len() {
            let mut c = s.clone();
            c.threads.remove(t);
            out.push(c);
        }
    }
    for t in 0..s.threads.len() {
        for i in 0..s.threads[t].len() {
            if s.threads[t].len() > 1 {
                let mut c = s.clone();
                c.threads[t].remove(i);
                out.push(c);
            }
        }
    }
    for i in 0..s.post.len() {
        let mut c = s.clone();
        c.post.remove(i);
        out.push(c);
    }
    for i in 0..s.init.len() {
        let mut c = s.clone();
        c.init.remove(i);
        out.push(c);
    }
    if s.max_keys > 1 {
        out.push(Scenario {
            max_keys: s.max_keys - 1,
            ..s.clone()
        });
    }
    if s.policy.capacity() > 2 {
        out.extend(with_capacity(s.policy.capacity() - 1));
    }
    for k in 0..calls_in(s) {
        let mut c = s.clone();
        if let Some(Op::Allow { cost, .. }) = nth_call(&mut c, k) {
            if *cost > 1 {
                *cost = 1;
                out.push(c);
            }
        }
    }
    out
}

/// The `k`-th call of a scenario, counting the init part, each thread in turn, then the post
/// part.
fn nth_call(s: &mut Scenario, k: usize) -> Option<&mut Op> {
    std::iter::once(&mut s.init)
        .chain(s.threads.iter_mut())
        .chain(std::iter::once(&mut s.post))
        .flat_map(|part| part.iter_mut())
        .nth(k)
}

/// How many calls a scenario makes in all.
fn calls_in(s: &Scenario) -> usize {
    s.init.len() + s.threads.iter().map(Vec::len).sum::<usize>() + s.post.len()
}

/// Marks a failed execution whose design panicked (rather than gave illegal results).
const PANICKED: &str = "panicked: ";

std::thread_local! {
    /// The check running on this thread, for the counterexample file.
    static CURRENT_CHECK: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

/// Records which check runs on this thread (the runner calls it first on a check's thread).
pub(crate) fn set_current_check(name: &'static str) {
    CURRENT_CHECK.with(|c| c.set(name));
}

/// Explores only the scenario of a saved counterexample, with the searches of the backend
/// this crate is built with.
///
/// # Errors
///
/// The failure again (as a failing concurrency check reports it, without shrinking), or a
/// clear error when the file was saved under another backend.
pub fn replay<L: crate::Limiter>(cx: &Counterexample, file: &str) -> Result<(), Failure> {
    replay_subject(Subject::of::<L>(), cx, file)
}

/// [`replay`] on a design given as a [`Subject`].
///
/// # Errors
///
/// As [`replay`].
pub fn replay_subject(subject: Subject, cx: &Counterexample, file: &str) -> Result<(), Failure> {
    let here = Backend::current().name();
    if cx.backend != here {
        return Err(Failure::new(format!(
            "{file} was found under {}, and this build is {here}: replay it built in the {} mode",
            cx.backend, cx.backend
        )));
    }
    match find(subject, &cx.scenario, |_, _| Ok(())) {
        None => Ok(()),
        Some(found) => Err(Failure::new(format!(
            "replayed {file}: execution {} of {} fails again",
            found.execution, found.search
        ))
        .with_detail(format!("{}\n{}", cx.scenario.in_words(), found.why))),
    }
}

/// Runs `orders` (the scenario's calls one at a time, in some orders) inside an execution of
/// the backend: the sequential difference it finds, or the design's panic, as the failure.
fn one_at_a_time(
    subject: Subject,
    scenario: &Scenario,
    orders: fn(Subject, &Scenario) -> Option<Failure>,
) -> Result<(), Failure> {
    let calls = scenario.clone();
    match in_execution(move || orders(subject, &calls)) {
        Ok(None) => Ok(()),
        Ok(Some(f)) => Err(f),
        Err(panic) => Err(Failure::new(format!(
            "the design panicked when the scenario's calls ran one at a time: {panic}"
        ))
        .as_panic()),
    }
}

/// The scenario's calls one at a time on a fresh instance, thread by thread (and, for two
/// threads, also the other way round): the first sequential difference from the
/// specification, if the design already has one.
fn sequential_first(subject: Subject, scenario: &Scenario) -> Option<Failure> {
    let threads = scenario.threads.len();
    let forward: Vec<usize> = (0..threads)
        .flat_map(|t| std::iter::repeat_n(t, scenario.threads[t].len()))
        .collect();
    let backward: Vec<usize> = (0..threads)
        .rev()
        .flat_map(|t| std::iter::repeat_n(t, scenario.threads[t].len()))
        .collect();
    [forward, backward].iter().find_map(|pick| {
        run_sequentially_subject(subject, scenario, pick)
            .err()
            .map(|f| {
                already_wrong(
                    f,
                    "a concurrent scenario, run one at a time on a fresh instance",
                )
            })
    })
}

/// The most orders [`in_any_order`] tries: every order of a shrunk scenario's calls (two
/// threads of three calls each have 20).
const ORDERS: usize = 70;

/// Every order of the scenario's calls one at a time that keeps each thread's calls in their
/// order (up to [`ORDERS`] of them), each on a fresh instance: the first sequential difference
/// from the specification, if the design already has one in some order.
fn in_any_order(subject: Subject, scenario: &Scenario) -> Option<Failure> {
    orders(scenario, ORDERS).iter().find_map(|pick| {
        run_sequentially_subject(subject, scenario, pick)
            .err()
            .map(|f| {
                already_wrong(
                    f,
                    "a concurrent scenario's calls, run one at a time in an order a schedule can give them",
                )
            })
    })
}

/// Up to `limit` orders of the scenario's calls, each a list of thread indices (the thread
/// whose next call comes next), every thread's calls in their order.
fn orders(scenario: &Scenario, limit: usize) -> Vec<Vec<usize>> {
    fn extend(left: &mut [usize], pick: &mut Vec<usize>, out: &mut Vec<Vec<usize>>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        if left.iter().all(|n| *n == 0) {
            out.push(pick.clone());
            return;
        }
        for t in 0..left.len() {
            if left[t] > 0 {
                left[t] -= 1;
                pick.push(t);
                extend(left, pick, out, limit);
                pick.pop();
                left[t] += 1;
            }
        }
    }
    let mut left: Vec<usize> = scenario.threads.iter().map(Vec::len).collect();
    let mut out = Vec::new();
    extend(&mut left, &mut Vec::new(), &mut out, limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_keeps_each_threads_calls_in_order() {
        let call = Op::Allow {
            key: "k".into(),
            cost: 1,
            now: 0,
        };
        let scenario = Scenario {
            policy: Policy::new(1, 10, 2).expect("a valid policy"),
            max_keys: 4,
            init: vec![],
            threads: vec![vec![call.clone(); 2], vec![call.clone()]],
            post: vec![],
        };
        assert_eq!(
            orders(&scenario, ORDERS),
            vec![vec![0, 0, 1], vec![0, 1, 0], vec![1, 0, 0]]
        );
        assert_eq!(orders(&scenario, 2).len(), 2);
    }

    #[test]
    fn many_threads_shrink_to_two_or_half_first() {
        let call = Op::Allow {
            key: "k".into(),
            cost: 1,
            now: 0,
        };
        let twenty = Scenario {
            policy: Policy::new(1, 10, 2).expect("a valid policy"),
            max_keys: 4,
            init: vec![],
            threads: vec![vec![call.clone()]; 20],
            post: vec![call],
        };
        let threads: Vec<usize> = smaller(&twenty).iter().map(|c| c.threads.len()).collect();
        assert_eq!(
            &threads[..4],
            [20, 2, 10, 19],
            "capacity 1, two, half, one fewer"
        );
        assert_eq!(smaller(&twenty)[0].policy.capacity(), 1);
        let four = Scenario {
            threads: twenty.threads[..4].to_vec(),
            ..twenty
        };
        let threads: Vec<usize> = smaller(&four).iter().map(|c| c.threads.len()).collect();
        assert_eq!(&threads[..3], [4, 2, 3], "half of four is two: tried once");
    }
}
