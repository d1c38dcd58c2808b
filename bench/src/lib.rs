//! The workloads the benchmarks run, shared by `benches/limiters.rs` and `benches/memory.rs`:
//! the same keys, policies and fixed time for every design, and governor's keyed limiter
//! set up to make the same decisions.
//!
//! Time is fixed during an `allow` benchmark (every design is called at the same `now`, and
//! governor reads a [`FakeRelativeClock`] that never moves), so that what is measured is the
//! admission itself, not a clock; the clock's own cost is a separate benchmark.
use std::num::NonZeroU32;

use governor::clock::{Clock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::DefaultKeyedRateLimiter;
use governor::{Quota, RateLimiter};
use ratelimit_lab_api::{Limiter, Policy};
use ratelimit_lab_reference::{Clocked, MonotonicClock, ShardedBucket, TokenBucket};

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

impl Contender for Governor {
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

/// [`ShardedBucket`] reading the machine's monotonic clock inside its own boundary.
#[derive(Debug)]
pub struct ClockedSharded(pub ShardedBucket, pub MonotonicClock);

impl Contender for ClockedSharded {
    #[inline]
    fn call(&self, key: &String) -> bool {
        matches!(self.0.allow_now(key, 1, &self.1), Ok(d) if d.allowed)
    }
}

/// governor's keyed limiter on its default (real) clock.
pub struct RealGovernor(pub DefaultKeyedRateLimiter<String>);

impl Contender for RealGovernor {
    #[inline]
    fn call(&self, key: &String) -> bool {
        self.0.check_key(key).is_ok()
    }
}

/// The three designs on the admit path with real time, each tracking `keys`.
///
/// # Panics
///
/// When a design refuses the workload.
pub fn clocked(keys: &[String]) -> (ClockedReference, ClockedSharded, RealGovernor) {
    let policy = Path::Admit.policy();
    let build = |e: ratelimit_lab_api::LimitError| -> ! { panic!("{e}") };
    let reference = ClockedReference(Clocked::new(
        TokenBucket::new(policy, keys.len()).unwrap_or_else(|e| build(e)),
        MonotonicClock::new(),
    ));
    let sharded = ClockedSharded(
        ShardedBucket::new(policy, keys.len()).unwrap_or_else(|e| build(e)),
        MonotonicClock::new(),
    );
    let gov = RealGovernor(RateLimiter::keyed(Path::Admit.quota()));
    for key in keys {
        assert!(reference.call(key) && sharded.call(key) && gov.call(key));
    }
    (reference, sharded, gov)
}
