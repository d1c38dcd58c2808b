//! Switching perturbation on and off for the current thread.
//!
//! A thread with perturbation on belongs to a *scenario*: the thread that switched it on
//! ([`enable`]) and every thread started from it through the facade's
//! [`thread::spawn`](super::thread::spawn) (a scenario's threads, and the threads a design
//! starts for itself, such as an actor's). A wait at a perturbation point is there so that
//! another thread of the scenario runs in the gap; when no other thread of the scenario can
//! run (they have all finished, or the others only wait for this one to end, see [`idle`]),
//! the point chooses as usual but does not wait, since nothing could happen in the gap.
//!
//! Random waits rarely last a whole call of another thread. A scenario switched on with
//! [`enable_pausing`] also holds one chosen thread at one chosen point (its `n`-th) until every
//! other thread of the scenario has finished or a short limit passes: the gap between a read
//! and a later write of that thread (a time checked with a load and published with a store)
//! then holds the other threads' whole calls. Run over every thread and point, that reaches
//! each gap of a small scenario systematically, as a scheduler's preemption would.
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether any thread of this process has ever switched perturbation on. Until one does
/// (a process that only uses the designs, not the suite), a perturbation point is one
/// relaxed load of this flag, with no thread-local access.
static EVER_ENABLED: AtomicBool = AtomicBool::new(false);

/// One scenario: its threads that may still run (started and not finished, and not
/// [`idle`]), how many threads it has started, and the pause it holds, if any.
#[derive(Debug)]
struct Scene {
    running: AtomicUsize,
    started: AtomicUsize,
    pause: Option<Pause>,
}

impl Scene {
    fn new(pause: Option<Pause>) -> Running {
        Arc::new(Scene {
            running: AtomicUsize::new(1),
            started: AtomicUsize::new(0),
            pause,
        })
    }
}

type Running = Arc<Scene>;

/// Where a scenario switched on with [`enable_pausing`] holds one of its threads: the
/// `thread`-th thread it starts (from 1, in the order they are started; the thread that
/// switched perturbation on is 0), at the `point`-th perturbation point it passes (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Which thread, from 1.
    pub thread: usize,
    /// At which of its points, from 1.
    pub point: u64,
}

/// The longest a held thread waits for the scenario's other threads: they may be waiting for
/// a lock it holds, and then only the limit ends the pause. A pause only delays the thread,
/// so its length decides how often a gap is reached, never a verdict.
const PAUSE_LIMIT: Duration = Duration::from_millis(2);

std::thread_local! {
    /// The state of this thread's random choices; `0` while perturbation is off.
    static STATE: Cell<u64> = const { Cell::new(0) };
    /// The scenario this thread belongs to while perturbation is on.
    static SCENARIO: RefCell<Option<Running>> = const { RefCell::new(None) };
    /// Perturbation points this thread has passed while perturbation was on.
    static PASSED: Cell<u64> = const { Cell::new(0) };
    /// This thread's place in its scenario (0 for the thread that switched it on), and the
    /// perturbation points it has passed since it joined the scenario.
    static PLACE: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

#[cfg(test)]
std::thread_local! {
    /// The points (counted in the scenario) at which this thread was held.
    static HELD_AT: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Perturbation on for the current thread (and the threads it spawns through the facade)
/// until the guard is dropped; `seed` varies the random choices. The thread starts a
/// scenario of its own: the threads it spawns belong to it.
#[must_use = "perturbation ends when the guard is dropped"]
pub fn enable(seed: u64) -> Enabled {
    enter(seed, Scene::new(None), 0)
}

/// [`enable`], and the scenario holds one thread at one point (see [`Pause`] and the module
/// docs).
#[must_use = "perturbation ends when the guard is dropped"]
pub fn enable_pausing(seed: u64, pause: Pause) -> Enabled {
    enter(seed, Scene::new(Some(pause)), 0)
}

/// Switches perturbation on in `scenario`, where this thread is already counted as running,
/// as its `place`-th thread.
fn enter(seed: u64, scenario: Running, place: usize) -> Enabled {
    EVER_ENABLED.store(true, Ordering::Relaxed);
    let before = STATE.with(|s| s.replace(seed | 1));
    let scenario_before = SCENARIO.with(|c| c.replace(Some(scenario)));
    let place_before = PLACE.with(|p| p.replace((place, 0)));
    Enabled {
        before,
        scenario_before,
        place_before,
    }
}

/// Perturbation stays on while this is alive (see [`enable`]).
#[derive(Debug)]
pub struct Enabled {
    before: u64,
    scenario_before: Option<Running>,
    place_before: (usize, u64),
}

impl Drop for Enabled {
    fn drop(&mut self) {
        STATE.with(|s| s.set(self.before));
        PLACE.with(|p| p.set(self.place_before));
        let ended = SCENARIO.with(|c| c.replace(self.scenario_before.take()));
        if let Some(scenario) = ended {
            scenario.running.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// `true` while perturbation is on for the current thread.
pub fn is_enabled() -> bool {
    STATE.with(Cell::get) != 0
}

/// How many perturbation points the current thread has passed while perturbation was on
/// for it, since it started. The difference across a call says whether the call reached
/// any (a design built on the facade does; one on raw `std::sync` does not).
pub fn points_passed() -> u64 {
    PASSED.with(Cell::get)
}

/// Runs `f` with the current thread counted as not running in its scenario: `f` must only
/// wait for the scenario's other threads (join them), never call into what they share.
/// Without perturbation on, it just runs `f`.
pub fn idle<T>(f: impl FnOnce() -> T) -> T {
    struct Resume(Option<Running>);
    impl Drop for Resume {
        fn drop(&mut self) {
            if let Some(scenario) = &self.0 {
                scenario.running.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let scenario = SCENARIO.with(|c| c.borrow().clone());
    if let Some(scenario) = &scenario {
        scenario.running.fetch_sub(1, Ordering::SeqCst);
    }
    let _resume = Resume(scenario);
    f()
}

/// What a thread spawned with perturbation on starts with: its own seed, and its place in
/// the spawning thread's scenario (counted as running from the moment it is spawned, so
/// that no thread of the scenario takes itself for the last one before it starts).
#[derive(Debug)]
pub(in crate::sync) struct Child {
    seed: u64,
    scenario: Option<Running>,
    place: usize,
}

impl Child {
    /// Switches perturbation on for the new thread.
    pub(in crate::sync) fn enter(mut self) -> Enabled {
        match self.scenario.take() {
            Some(scenario) => enter(self.seed, scenario, self.place),
            None => enter(self.seed, Scene::new(None), 0),
        }
    }
}

impl Drop for Child {
    /// A thread that never started leaves its scenario.
    fn drop(&mut self) {
        if let Some(scenario) = self.scenario.take() {
            scenario.running.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// What a thread spawned now starts with, when perturbation is on; `None` when it is off.
pub(in crate::sync) fn for_child() -> Option<Child> {
    let seed = STATE.with(|s| {
        let x = s.get();
        (x != 0).then(|| {
            let next = step(x);
            s.set(next);
            next ^ 0x9e37_79b9_7f4a_7c15
        })
    })?;
    let scenario = SCENARIO.with(|c| c.borrow().clone());
    let place = scenario.as_ref().map_or(0, |scenario| {
        scenario.running.fetch_add(1, Ordering::SeqCst);
        scenario.started.fetch_add(1, Ordering::SeqCst) + 1
    });
    Some(Child {
        seed,
        scenario,
        place,
    })
}

/// xorshift64: the next state, never `0` for a state that is not `0`.
fn step(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// `true` when no other thread of the current thread's scenario may run.
fn alone() -> bool {
    SCENARIO.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|s| s.running.load(Ordering::SeqCst) <= 1)
    })
}

/// Whether this thread's scenario holds it at the point it is passing (its `passed`-th).
fn held_here(passed: u64) -> bool {
    let (place, _) = PLACE.with(Cell::get);
    SCENARIO.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|s| s.pause)
            .is_some_and(|p| p.thread == place && p.point == passed)
    })
}

/// Holds the calling thread until no other thread of its scenario may run, or
/// [`PAUSE_LIMIT`] has passed.
fn hold() {
    #[cfg(test)]
    HELD_AT.with(|h| h.borrow_mut().push(PLACE.with(Cell::get).1));
    let start = Instant::now();
    while !alone() && start.elapsed() < PAUSE_LIMIT {
        std::thread::sleep(Duration::from_micros(10));
    }
}

/// A perturbation point: when perturbation is on, one time in four yields the processor
/// (another runnable thread goes first), one in eight spins for a while (the thread on the
/// other core runs ahead) and one in thirty-two sleeps for about 50 µs (long enough for
/// another thread to run whole calls); otherwise nothing. The choice is made at every
/// point; the wait is skipped while no other thread of the scenario may run.
#[inline(always)]
pub(in crate::sync) fn point() {
    if EVER_ENABLED.load(Ordering::Relaxed) {
        perturb();
    }
}

/// [`point`] once some thread has switched perturbation on: this thread's choice.
#[cold]
#[inline(never)]
fn perturb() {
    let x = STATE.with(Cell::get);
    if x == 0 {
        return;
    }
    PASSED.with(|p| p.set(p.get() + 1));
    let passed = PLACE.with(|p| {
        let (place, passed) = p.get();
        p.set((place, passed + 1));
        passed + 1
    });
    if held_here(passed) {
        hold();
        return;
    }
    let next = step(x);
    STATE.with(|s| s.set(next));
    let choice = next % 32;
    if choice > 12 || alone() {
        return;
    }
    match choice {
        0..=7 => std::thread::yield_now(),
        8..=11 => {
            for _ in 0..(next >> 8) % 4096 {
                std::hint::spin_loop();
            }
        }
        _ => std::thread::sleep(Duration::from_micros(1 + (next >> 8) % 50)),
    }
}

#[cfg(test)]
mod tests {
    use super::{alone, enable, enable_pausing, idle, points_passed, Pause, HELD_AT};

    #[test]
    fn a_pause_holds_the_chosen_thread_at_the_chosen_point_and_nowhere_else() {
        let lock = super::super::Mutex::new(0u8);
        let _on = enable_pausing(
            11,
            Pause {
                thread: 2,
                point: 3,
            },
        );
        let held = |lock: &super::super::Mutex<u8>| {
            HELD_AT.with(|h| h.borrow_mut().clear());
            for _ in 0..5 {
                drop(lock.lock());
            }
            HELD_AT.with(|h| h.borrow().clone())
        };
        assert_eq!(held(&lock), Vec::<u64>::new(), "the first thread is 0");
        let lock = std::sync::Arc::new(lock);
        // The threads run one at a time (each joined before the next starts), so each is alone
        // when it is held and the pause ends at once: nothing here waits on the clock.
        let mut seen = Vec::new();
        for _ in 0..3 {
            let lock = std::sync::Arc::clone(&lock);
            let child = super::super::thread::spawn(move || held(&lock));
            seen.push(idle(|| child.join()).ok());
        }
        assert_eq!(
            seen,
            vec![Some(vec![]), Some(vec![3]), Some(vec![])],
            "only the second thread started, at its third point"
        );
    }

    #[test]
    fn a_thread_is_alone_when_the_others_have_ended_or_only_wait_for_it() {
        let _on = enable(5);
        assert!(alone(), "a scenario of one thread");
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let child = super::super::thread::spawn(move || {
            let _ = wait.recv();
            alone()
        });
        assert!(!alone(), "the child counts from its spawn, before it runs");
        let child_was_alone = idle(|| {
            let _ = go.send(());
            child.join()
        });
        assert_eq!(
            child_was_alone.ok(),
            Some(true),
            "the parent only waited for it"
        );
        assert!(alone(), "the child has ended");
        let other = std::thread::spawn(alone);
        assert_eq!(
            other.join().ok(),
            Some(false),
            "std's spawn is in no scenario"
        );
    }

    #[test]
    fn points_are_counted_only_while_perturbation_is_on() {
        let lock = super::super::Mutex::new(0);
        let before = points_passed();
        drop(lock.lock());
        assert_eq!(points_passed(), before);
        let _on = enable(9);
        drop(lock.lock());
        drop(lock.lock());
        assert_eq!(points_passed(), before + 2);
    }
}
