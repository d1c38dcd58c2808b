//! Time sampled by the caller can reach the limiter out of order; time sampled by `Clocked`,
//! inside its gate, cannot.
#![cfg(not(loom))]
#![cfg(not(feature = "shuttle"))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy};
use ratelimit_lab_reference::{Clock, Clocked, ManualClock, MonotonicClock, TokenBucket};

fn limiter() -> TokenBucket {
    TokenBucket::new(Policy::new(1, 10, 2).unwrap(), 16).unwrap()
}

/// A shared [`ManualClock`], so that the test can move it while an adapter owns it.
struct Shared(Arc<ManualClock>);

impl Clock for Shared {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }
}

/// A shared [`ManualClock`] whose next reading, once armed, reports itself and then waits to
/// be released: it holds a caller exactly between its sample and its use of the sample.
struct Pausing {
    clock: Arc<ManualClock>,
    armed: AtomicBool,
    sampled: Mutex<Sender<u64>>,
    release: Mutex<Receiver<()>>,
    readings: AtomicUsize,
}

impl Clock for Pausing {
    fn now_nanos(&self) -> u64 {
        let now = self.clock.now_nanos();
        self.readings.fetch_add(1, Ordering::SeqCst);
        if self.armed.swap(false, Ordering::SeqCst) {
            self.sampled.lock().unwrap().send(now).unwrap();
            self.release.lock().unwrap().recv().unwrap();
        }
        now
    }
}

/// The two calls the race needs, so that the same race runs on `Clocked` and on an adapter
/// with the wrong order.
trait Adapter: Sync {
    fn allow(&self, key: &str, cost: u64) -> Result<Decision, LimitError>;
    fn try_allow(&self, key: &str, cost: u64) -> Option<Result<Decision, LimitError>>;
    fn observed(&self) -> u64;
}

impl Adapter for Clocked<TokenBucket, Pausing> {
    fn allow(&self, key: &str, cost: u64) -> Result<Decision, LimitError> {
        Clocked::allow(self, key, cost)
    }
    fn try_allow(&self, key: &str, cost: u64) -> Option<Result<Decision, LimitError>> {
        Clocked::try_allow(self, key, cost)
    }
    fn observed(&self) -> u64 {
        self.limiter().snapshot().unwrap().observed_nanos
    }
}

/// The mistake `Clocked` exists to prevent: it samples the clock, *then* takes its gate.
struct SampleThenLock {
    limiter: TokenBucket,
    clock: Pausing,
    gate: Mutex<()>,
}

impl Adapter for SampleThenLock {
    fn allow(&self, key: &str, cost: u64) -> Result<Decision, LimitError> {
        let now = self.clock.now_nanos();
        let _gate = self.gate.lock().unwrap();
        self.limiter.allow(key, cost, now)
    }
    fn try_allow(&self, key: &str, cost: u64) -> Option<Result<Decision, LimitError>> {
        let now = self.clock.now_nanos();
        let _gate = self.gate.try_lock().ok()?;
        Some(self.limiter.allow(key, cost, now))
    }
    fn observed(&self) -> u64 {
        self.limiter.snapshot().unwrap().observed_nanos
    }
}

/// A clock at 100, armed to hold its next reader, plus the handles that drive it.
fn pausing() -> (Pausing, Arc<ManualClock>, Receiver<u64>, Sender<()>) {
    let clock = Arc::new(ManualClock::new(100));
    let (sampled_tx, sampled_rx) = channel();
    let (release_tx, release_rx) = channel();
    let pausing = Pausing {
        clock: Arc::clone(&clock),
        armed: AtomicBool::new(true),
        sampled: Mutex::new(sampled_tx),
        release: Mutex::new(release_rx),
        readings: AtomicUsize::new(0),
    };
    (pausing, clock, sampled_rx, release_tx)
}

/// What each side of the race got.
struct Race {
    /// The call that sampled first (at 100) and was held before deciding.
    first: Result<Decision, LimitError>,
    /// The call that tried to go while the first was held: `None` if it could not.
    overtaking: Option<Result<Decision, LimitError>>,
}

/// Thread A samples 100 and is held; the clock advances to 101; thread B tries to call
/// without waiting; then A is released.
fn race(
    adapter: &impl Adapter,
    clock: &ManualClock,
    sampled: &Receiver<u64>,
    release: &Sender<()>,
) -> Race {
    thread::scope(|s| {
        let a = s.spawn(|| adapter.allow("k", 1));
        assert_eq!(sampled.recv().unwrap(), 100, "A sampled the clock at 100");
        assert_eq!(clock.advance(1), 101);
        let overtaking = s.spawn(|| adapter.try_allow("k", 1)).join().unwrap();
        release.send(()).unwrap();
        Race {
            first: a.join().unwrap(),
            overtaking,
        }
    })
}

#[test]
fn caller_sampled_time_can_arrive_out_of_order() {
    let clock = ManualClock::new(100);
    let limiter = limiter();
    let (sampled_tx, sampled_rx) = channel();
    let (release_tx, release_rx) = channel::<()>();
    let (clock, limiter) = (&clock, &limiter);
    let a = thread::scope(|s| {
        // A samples 100, then is held before it calls.
        let a = s.spawn(move || {
            let now = clock.now_nanos();
            sampled_tx.send(now).unwrap();
            release_rx.recv().unwrap();
            limiter.allow("k", 1, now)
        });
        assert_eq!(sampled_rx.recv().unwrap(), 100);
        clock.advance(1);
        // B samples 101 and calls first.
        let b = s
            .spawn(|| {
                let now = clock.now_nanos();
                limiter.allow("k", 1, now).map(|d| (now, d.allowed))
            })
            .join()
            .unwrap();
        assert_eq!(b, Ok((101, true)));
        release_tx.send(()).unwrap();
        a.join().unwrap()
    });
    assert_eq!(
        a,
        Err(LimitError::TimeWentBackwards {
            now: 100,
            observed: 101
        }),
        "A's older sample arrived after B's newer one"
    );
}

#[test]
fn clocked_cannot_be_overtaken_between_sample_and_decision() {
    let (clock, manual, sampled, release) = pausing();
    let clocked = Clocked::new(limiter(), clock);
    let r = race(&clocked, &manual, &sampled, &release);
    assert!(
        r.overtaking.is_none(),
        "B got through while A held a sample: {:?}",
        r.overtaking
    );
    assert!(r.first.expect("A's sample was still current").allowed);
    assert_eq!(clocked.observed(), 100);
    // B, now that the gate is free, gets through and samples 101.
    let b = Adapter::try_allow(&clocked, "k", 1).expect("the gate is free");
    assert!(b.unwrap().allowed);
    assert_eq!(clocked.observed(), 101);
}

#[test]
fn sampling_outside_the_gate_is_overtaken_in_the_same_race() {
    // The race above can tell the orders apart: the same race on an adapter that samples
    // before it locks lets B through and sends A's stale sample backwards.
    let (clock, manual, sampled, release) = pausing();
    let adapter = SampleThenLock {
        limiter: limiter(),
        clock,
        gate: Mutex::new(()),
    };
    let r = race(&adapter, &manual, &sampled, &release);
    assert!(matches!(r.overtaking, Some(Ok(d)) if d.allowed));
    assert_eq!(
        r.first,
        Err(LimitError::TimeWentBackwards {
            now: 100,
            observed: 101
        })
    );
    assert_eq!(adapter.clock.readings.load(Ordering::SeqCst), 2);
}

const THREADS: usize = 4;
const CALLS: usize = 20_000;

/// `THREADS` threads each make `CALLS` calls (mostly `allow`, some `evict_full`, and on one
/// thread a policy cutover every 1,000 calls) while `tick` runs concurrently (on a thread of
/// its own, and on the callers' threads between their calls); returns how many
/// calls failed with `TimeWentBackwards`, and checks every other outcome is legitimate.
fn hammer<C: Clock>(clocked: &Clocked<TokenBucket, C>, tick: impl Fn() + Sync) -> usize {
    let backwards = AtomicUsize::new(0);
    let running = AtomicUsize::new(THREADS);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (backwards, running, tick) = (&backwards, &running, &tick);
            s.spawn(move || {
                let key = ["a", "b", "c", "d"][t];
                let mut version = 1;
                for i in 0..CALLS {
                    if i % 8 == t {
                        tick();
                    }
                    let r = if t == 0 && i % 1_000 == 999 {
                        let next =
                            Policy::new(version + 1, 10 + (i as u64 % 7), 2 + i as u64).unwrap();
                        let r = clocked.replace_policy(next, version).map(|()| 0);
                        if r.is_ok() {
                            version += 1;
                        }
                        r
                    } else if i % 97 == 0 {
                        clocked.evict_full()
                    } else {
                        clocked.allow(key, 1 + (i as u64 % 3)).map(|_| 0)
                    };
                    match r {
                        Ok(_) => {}
                        Err(LimitError::TimeWentBackwards { .. }) => {
                            backwards.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("thread {t}, call {i}: unexpected {e:?}"),
                    }
                }
                running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        s.spawn(|| {
            while running.load(Ordering::SeqCst) > 0 {
                tick();
            }
        });
    });
    let snapshot = clocked.limiter().snapshot().unwrap();
    assert_eq!(
        snapshot.policy.version(),
        1 + (CALLS / 1_000) as u64,
        "every cutover applied"
    );
    backwards.into_inner()
}

#[test]
fn clocked_never_goes_backwards_on_the_monotonic_clock() {
    let clocked = Clocked::new(limiter(), MonotonicClock::new());
    let backwards = hammer(&clocked, thread::yield_now);
    assert_eq!(backwards, 0);
    assert!(
        clocked.limiter().snapshot().unwrap().observed_nanos > 0,
        "the clock was read"
    );
}

#[test]
fn clocked_never_goes_backwards_on_a_clock_advanced_concurrently() {
    let manual = Arc::new(ManualClock::new(0));
    let clocked = Clocked::new(limiter(), Shared(Arc::clone(&manual)));
    let ticks = AtomicUsize::new(0);
    let backwards = hammer(&clocked, || {
        manual.advance(1 + (ticks.fetch_add(1, Ordering::Relaxed) % 300_000_000) as u64);
    });
    assert_eq!(backwards, 0);
    let observed = clocked.limiter().snapshot().unwrap().observed_nanos;
    assert!(observed > 0 && observed <= manual.now_nanos(), "{observed}");
}
