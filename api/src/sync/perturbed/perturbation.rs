//! Switching perturbation on and off for the current thread.
//!
//! A thread with perturbation on belongs to a *scenario*: the thread that switched it on
//! ([`enable`]) and every thread started from it through the facade's
//! [`thread::spawn`](super::thread::spawn) (a scenario's threads, and the threads a design
//! starts for itself, such as an actor's). A wait at a perturbation point is there so that
//! another thread of the scenario runs in the gap; when no other thread of the scenario can
//! run (they have all finished, or the others only wait for this one to end, see [`idle`]),
//! the point chooses as usual but does not wait, since nothing could happen in the gap.
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Whether any thread of this process has ever switched perturbation on. Until one does
/// (a process that only uses the designs, not the suite), a perturbation point is one
/// relaxed load of this flag, with no thread-local access.
static EVER_ENABLED: AtomicBool = AtomicBool::new(false);

/// The threads of one scenario that may still run: started and not finished, and not
/// [`idle`].
type Running = Arc<AtomicUsize>;

std::thread_local! {
    /// The state of this thread's random choices; `0` while perturbation is off.
    static STATE: Cell<u64> = const { Cell::new(0) };
    /// The scenario this thread belongs to while perturbation is on.
    static SCENARIO: RefCell<Option<Running>> = const { RefCell::new(None) };
    /// Perturbation points this thread has passed while perturbation was on.
    static PASSED: Cell<u64> = const { Cell::new(0) };
}

/// Perturbation on for the current thread (and the threads it spawns through the facade)
/// until the guard is dropped; `seed` varies the random choices. The thread starts a
/// scenario of its own: the threads it spawns belong to it.
#[must_use = "perturbation ends when the guard is dropped"]
pub fn enable(seed: u64) -> Enabled {
    enter(seed, Arc::new(AtomicUsize::new(1)))
}

/// Switches perturbation on in `scenario`, where this thread is already counted as running.
fn enter(seed: u64, scenario: Running) -> Enabled {
    EVER_ENABLED.store(true, Ordering::Relaxed);
    let before = STATE.with(|s| s.replace(seed | 1));
    let scenario_before = SCENARIO.with(|c| c.replace(Some(scenario)));
    Enabled {
        before,
        scenario_before,
    }
}

/// Perturbation stays on while this is alive (see [`enable`]).
#[derive(Debug)]
pub struct Enabled {
    before: u64,
    scenario_before: Option<Running>,
}

impl Drop for Enabled {
    fn drop(&mut self) {
        STATE.with(|s| s.set(self.before));
        let ended = SCENARIO.with(|c| c.replace(self.scenario_before.take()));
        if let Some(scenario) = ended {
            scenario.fetch_sub(1, Ordering::SeqCst);
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
                scenario.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let scenario = SCENARIO.with(|c| c.borrow().clone());
    if let Some(scenario) = &scenario {
        scenario.fetch_sub(1, Ordering::SeqCst);
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
}

impl Child {
    /// Switches perturbation on for the new thread.
    pub(in crate::sync) fn enter(mut self) -> Enabled {
        match self.scenario.take() {
            Some(scenario) => enter(self.seed, scenario),
            None => enter(self.seed, Arc::new(AtomicUsize::new(1))),
        }
    }
}

impl Drop for Child {
    /// A thread that never started leaves its scenario.
    fn drop(&mut self) {
        if let Some(scenario) = self.scenario.take() {
            scenario.fetch_sub(1, Ordering::SeqCst);
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
    if let Some(scenario) = &scenario {
        scenario.fetch_add(1, Ordering::SeqCst);
    }
    Some(Child { seed, scenario })
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
            .is_some_and(|s| s.load(Ordering::SeqCst) <= 1)
    })
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
    use super::{alone, enable, idle, points_passed};

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
