//! The workloads the benchmarks run, shared by `benches/limiters.rs`, `benches/memory.rs`
//! and `examples/paired.rs`: the same keys, policies and fixed time for every design,
//! governor's keyed limiter set up to make the same decisions, and the one timing loop
//! ([`wall`]) every `allow` figure comes from.
//!
//! Time is fixed during an `allow` benchmark (every design is called at the same `now`, and
//! governor reads a [`FakeRelativeClock`] that never moves), so that what is measured is the
//! admission itself, not a clock; the clock's own cost is a separate benchmark, and
//! [`real_time`] builds the designs that read a real clock inside every call.
//!
//! With time moving ([`Moving`], [`moving_governor`]), both sides of a comparison read the
//! same clock once per call, as in use: the reference through `allow(key, cost, now)` with
//! `now` read by the caller, governor inside `check_key`. The clock is the standard library's
//! monotonic clock, the time-stamp counter (governor's default), or a [`Step`] clock that
//! advances by a fixed step on every reading, so that every call refills.
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use governor::clock::{Clock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::DefaultKeyedRateLimiter;
use governor::{Quota, RateLimiter};
use ratelimit_lab_api::{Limiter, Policy};
use ratelimit_lab_reference::{
    Clock as OurClock, Clocked, ClockedShardedBucket, MonotonicClock, TokenBucket,
};

/// The time every benchmarked call is made at, in nanoseconds.
pub const NOW: u64 = 1_000_000_000;

/// `n` distinct keys, `"user-0000042"` style: the short client identifiers a limiter sees.
pub fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("user-{i:07}")).collect()
}

/// Which decision every measured call gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Every call is admitted: a capacity of 10⁹ tokens is never drained by the run.
    Admit,
    /// Every call is rejected: a capacity of one token, spent by each key's first call
    /// before measuring, with time standing still.
    Reject,
}

impl Path {
    /// Both paths, in report order.
    pub const ALL: [Path; 2] = [Path::Admit, Path::Reject];

    /// The path's name in benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Path::Admit => "admit",
            Path::Reject => "reject",
        }
    }

    /// The policy of this crate's designs on this path.
    pub fn policy(self) -> Policy {
        let made = match self {
            Path::Admit => Policy::new(1, 1_000_000_000, 1_000_000),
            Path::Reject => Policy::new(1, 1, 1),
        };
        made.unwrap_or_else(|e| panic!("the benchmark's policy is valid: {e}"))
    }

    /// governor's quota making the same decisions at a standing clock: a burst of
    /// `u32::MAX` cells (admit), or one cell per hour (reject after the first).
    pub fn quota(self) -> Quota {
        match self {
            Path::Admit => Quota::per_second(NonZeroU32::MAX).allow_burst(NonZeroU32::MAX),
            Path::Reject => Quota::per_hour(NonZeroU32::MIN),
        }
    }
}

impl Path {
    /// The policy of this crate's designs with time moving, and the cost of each call:
    /// *admit* as at a standing time (10⁹ tokens, refilled at 10⁶ a second, cost 1); *reject*
    /// 3,600 tokens refilled at one a second, each call costing all 3,600, so that a key is
    /// admitted once an hour, as governor's quota of one cell an hour admits it.
    pub fn moving_policy(self) -> (Policy, u64) {
        match self {
            Path::Admit => (self.policy(), 1),
            Path::Reject => {
                let made = Policy::new(1, 3_600, 1);
                (
                    made.unwrap_or_else(|e| panic!("the benchmark's policy is valid: {e}")),
                    3_600,
                )
            }
        }
    }
}

/// governor's keyed limiter (GCRA state per key in a `DashMap`) on a clock that stands still.
pub type Governor = RateLimiter<
    String,
    DefaultKeyedStateStore<String>,
    FakeRelativeClock,
    NoOpMiddleware<<FakeRelativeClock as Clock>::Instant>,
>;

/// One design under measurement: a call on a key, answering whether it was admitted.
pub trait Contender: Sync {
    /// One admission decision for `key` at [`NOW`], cost one token. (A `&String`, not a
    /// `&str`: governor's keyed limiter takes a reference to its key type.)
    #[allow(clippy::ptr_arg)]
    fn call(&self, key: &String) -> bool;
}

/// A design of this crate, called through [`Limiter`] at [`NOW`].
#[derive(Debug)]
pub struct Ours<L>(pub L);

impl<L: Limiter> Contender for Ours<L> {
    #[inline]
    fn call(&self, key: &String) -> bool {
        matches!(self.0.allow(key, 1, NOW), Ok(d) if d.allowed)
    }
}

/// governor's keyed limiter on any clock: [`Governor`], [`StdGovernor`] and [`TscGovernor`].
impl<C: Clock> Contender
    for RateLimiter<String, DefaultKeyedStateStore<String>, C, NoOpMiddleware<C::Instant>>
where
    Self: Sync,
{
    #[inline]
    fn call(&self, key: &String) -> bool {
        self.check_key(key).is_ok()
    }
}

/// A design of this crate on `path`, tracking exactly `keys` (each called once).
///
/// # Panics
///
/// When the design refuses the workload, which would make its figures meaningless.
pub fn ours<L: Limiter>(path: Path, keys: &[String]) -> Ours<L> {
    let limiter = L::new(path.policy(), keys.len()).unwrap_or_else(|e| panic!("{e}"));
    for key in keys {
        let first = limiter.allow(key, 1, NOW).unwrap_or_else(|e| panic!("{e}"));
        assert!(first.allowed, "a new key starts full");
    }
    Ours(limiter)
}

/// governor on `path`, tracking `keys` (each called once).
pub fn governor(path: Path, keys: &[String]) -> Governor {
    let limiter = RateLimiter::new(
        path.quota(),
        DefaultKeyedStateStore::default(),
        FakeRelativeClock::default(),
    );
    for key in keys {
        assert!(limiter.check_key(key).is_ok(), "a new key starts full");
    }
    limiter
}

/// The reference with time read from the machine's monotonic clock inside [`Clocked`]'s gate.
#[derive(Debug)]
pub struct ClockedReference(pub Clocked<TokenBucket, MonotonicClock>);

impl Contender for ClockedReference {
    #[inline]
    fn call(&self, key: &String) -> bool {
        matches!(self.0.allow(key, 1), Ok(d) if d.allowed)
    }
}

/// [`ClockedShardedBucket`] reading clock `C` inside its own boundary.
#[derive(Debug)]
pub struct ClockedSharded<C>(pub ClockedShardedBucket<C>);

impl<C: OurClock> Contender for ClockedSharded<C> {
    #[inline]
    fn call(&self, key: &String) -> bool {
        matches!(self.0.allow(key, 1), Ok(d) if d.allowed)
    }
}

/// The clock governor reads by default (`quanta`: the processor's time-stamp counter, scaled
/// to nanoseconds), as a clock of this crate's designs, so that both sides of a comparison
/// can read the same clock.
#[derive(Debug, Clone)]
pub struct Tsc(quanta::Clock);

impl Tsc {
    /// A new calibrated clock.
    pub fn new() -> Self {
        Tsc(quanta::Clock::new())
    }
}

impl Default for Tsc {
    fn default() -> Self {
        Self::new()
    }
}

impl OurClock for Tsc {
    #[inline]
    fn now_nanos(&self) -> u64 {
        // As governor's `QuantaClock::now` reads it.
        self.0.delta_as_nanos(0, self.0.raw())
    }
}

/// A clock that advances by a fixed step on every reading, shared by its clones: with it every
/// call finds time moved since the key's last call, so every call refills. It is a clock of
/// this crate's designs and of governor's, so both sides of a pair read the same kind of clock
/// (one atomic add per reading).
#[derive(Debug, Clone)]
pub struct Step {
    now: Arc<AtomicU64>,
    step: u64,
}

impl Step {
    /// The step used by the benchmarks, in nanoseconds: with 1,000 keys each key finds
    /// 100 µs of refill, with 100,000 keys 10 ms.
    pub const NANOS: u64 = 100;

    /// A clock reading 0 that moves `step` nanoseconds forward on every reading.
    pub fn new(step: u64) -> Self {
        Step {
            now: Arc::new(AtomicU64::new(0)),
            step,
        }
    }

    #[inline]
    fn tick(&self) -> u64 {
        self.now.fetch_add(self.step, Ordering::Relaxed) + self.step
    }
}

impl OurClock for Step {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.tick()
    }
}

impl Clock for Step {
    type Instant = governor::nanos::Nanos;

    #[inline]
    fn now(&self) -> Self::Instant {
        self.tick().into()
    }
}

/// A design of this crate with time moving: the caller reads `clock` and calls
/// `allow(key, cost, now)`, one thread at a time (a reading taken outside the design's lock
/// can be overtaken by another thread's; the benchmarks run these on one thread).
#[derive(Debug)]
pub struct Moving<L, C> {
    /// The design.
    pub limiter: L,
    clock: C,
    cost: u64,
}

impl<L: Limiter, C: OurClock> Contender for Moving<L, C> {
    #[inline]
    fn call(&self, key: &String) -> bool {
        let now = self.clock.now_nanos();
        match self.limiter.allow(key, self.cost, now) {
            Ok(d) => d.allowed,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A design of this crate on `path` with time moving on `clock`, tracking exactly `keys`
/// (each called once, at the clock's readings).
///
/// # Panics
///
/// When the design refuses the workload.
pub fn moving<L: Limiter, C: OurClock>(path: Path, keys: &[String], clock: C) -> Moving<L, C> {
    let (policy, cost) = path.moving_policy();
    let limiter = L::new(policy, keys.len()).unwrap_or_else(|e| panic!("{e}"));
    let moving = Moving {
        limiter,
        clock,
        cost,
    };
    for key in keys {
        assert!(moving.call(key), "a new key starts full");
    }
    moving
}

/// governor's keyed limiter on clock `C`.
pub type GovernorOn<C> =
    RateLimiter<String, DefaultKeyedStateStore<String>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// governor on `path` reading `clock` inside each call, tracking `keys` (each called once).
pub fn moving_governor<C: Clock>(path: Path, keys: &[String], clock: C) -> GovernorOn<C> {
    let limiter = RateLimiter::new(path.quota(), DefaultKeyedStateStore::default(), clock);
    for key in keys {
        assert!(limiter.check_key(key).is_ok(), "a new key starts full");
    }
    limiter
}

/// governor's keyed limiter on its default clock (`quanta`, the time-stamp counter).
pub type TscGovernor = DefaultKeyedRateLimiter<String>;

/// governor's keyed limiter on the standard library's monotonic clock (`Instant`).
pub type StdGovernor = RateLimiter<
    String,
    DefaultKeyedStateStore<String>,
    governor::clock::MonotonicClock,
    NoOpMiddleware<std::time::Instant>,
>;

/// The designs on the admit path with real time read inside each one's boundary, each
/// tracking `keys`: on the standard library's monotonic clock, the reference behind
/// [`Clocked`], [`ClockedShardedBucket`] and governor; on the time-stamp counter (governor's
/// default clock), [`ClockedShardedBucket`] and governor.
pub struct RealTime {
    /// The reference behind [`Clocked`]'s gate, on the standard clock.
    pub reference: ClockedReference,
    /// The sharded design on the standard clock.
    pub sharded: ClockedSharded<MonotonicClock>,
    /// governor on the standard clock.
    pub governor: StdGovernor,
    /// The sharded design on the time-stamp counter.
    pub sharded_tsc: ClockedSharded<Tsc>,
    /// governor on its default clock, the time-stamp counter.
    pub governor_tsc: TscGovernor,
}

impl std::fmt::Debug for RealTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // governor's limiters print nothing of themselves.
        f.debug_struct("RealTime")
            .field("reference", &self.reference)
            .field("sharded", &self.sharded)
            .field("sharded_tsc", &self.sharded_tsc)
            .finish_non_exhaustive()
    }
}

/// Every design of [`RealTime`], each tracking `keys`.
///
/// # Panics
///
/// When a design refuses the workload.
pub fn real_time(keys: &[String]) -> RealTime {
    let policy = Path::Admit.policy();
    let build = |e: ratelimit_lab_api::LimitError| -> ! { panic!("{e}") };
    let all = RealTime {
        reference: ClockedReference(Clocked::new(
            TokenBucket::new(policy, keys.len()).unwrap_or_else(|e| build(e)),
            MonotonicClock::new(),
        )),
        sharded: ClockedSharded(
            ClockedShardedBucket::new(policy, keys.len(), MonotonicClock::new())
                .unwrap_or_else(|e| build(e)),
        ),
        governor: RateLimiter::new(
            Path::Admit.quota(),
            DefaultKeyedStateStore::default(),
            governor::clock::MonotonicClock,
        ),
        sharded_tsc: ClockedSharded(
            ClockedShardedBucket::new(policy, keys.len(), Tsc::new()).unwrap_or_else(|e| build(e)),
        ),
        governor_tsc: RateLimiter::keyed(Path::Admit.quota()),
    };
    for key in keys {
        assert!(
            all.reference.call(key)
                && all.sharded.call(key)
                && all.governor.call(key)
                && all.sharded_tsc.call(key)
                && all.governor_tsc.call(key)
        );
    }
    all
}

/// Wall time for `iters` calls in all, split evenly over `threads` threads that start
/// together, each walking its own share of the keys (as when each thread serves its own
/// clients), round and round. Checks that every call took `path`.
pub fn wall<C: Contender>(
    c: &C,
    keys: &[String],
    path: Path,
    threads: usize,
    iters: u64,
) -> Duration {
    let per = iters.div_ceil(threads as u64);
    let walk = |t: usize| {
        let share = &keys[t * keys.len() / threads..(t + 1) * keys.len() / threads];
        let mut i = 0;
        let mut admitted = 0u64;
        for _ in 0..per {
            admitted += u64::from(c.call(&share[i]));
            i += 1;
            if i == share.len() {
                i = 0;
            }
        }
        let want = if path == Path::Admit { per } else { 0 };
        assert_eq!(admitted, want, "a call left the {} path", path.name());
    };
    if threads == 1 {
        let start = Instant::now();
        walk(0);
        return start.elapsed();
    }
    let barrier = Barrier::new(threads + 1);
    thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, walk) = (&barrier, &walk);
                s.spawn(move || {
                    barrier.wait();
                    walk(t);
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for w in workers {
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
        start.elapsed()
    })
}
