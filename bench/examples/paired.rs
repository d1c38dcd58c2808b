//! Same-run ratios from alternating, paired runs: on a machine whose cores come and go (a
//! virtual machine's), one long criterion run per design can land in a slow stretch for one
//! and a fast one for the other; pairs of short runs, alternating which goes first, put
//! both designs of a pair in the same stretch, and the median of the pairs' ratios shrugs
//! off the stretches.
//!
//! ```text
//! cargo run --release --manifest-path bench/Cargo.toml --example paired [ROUNDS] [FILTER]
//! ```
//!
//! Each row is `ROUNDS` (default 21) pairs of runs of 2,000,000 calls; with `FILTER`, only
//! the rows whose name contains it run. Two sets of rows:
//!
//! - the reference ÷ governor on one thread, on the admit and the reject path, over 1,000
//!   and 100,000 keys, four ways: **time moving** on the time-stamp counter (governor's
//!   default clock) and on the standard library's monotonic clock, both sides reading the
//!   same clock once per call (the reference through `allow(key, cost, now)` with `now` read
//!   by the caller, governor inside `check_key`); a **fixed step** (each reading 100 ns later
//!   than the last, so every call refills); and **time frozen** (every call at the same
//!   `now`, governor on a clock that stands still: the admission alone);
//! - time read inside each design's boundary, admit path, 1,000 keys, on 1 and 2 threads:
//!   `ClockedShardedBucket` ÷ governor on the same clock (the time-stamp counter, then the
//!   standard library's monotonic clock), and `ClockedShardedBucket` ÷ the reference behind
//!   `Clocked`.
//!
//! Each row prints the median ratio (first design ÷ second, per call; below 1 the first is
//! faster), the range of the ratios, and each design's median nanoseconds per call (wall
//! time over all calls: on 2 threads, half the 1-thread figure is perfect scaling).
use ratelimit_lab_api::Limiter as _;
use ratelimit_lab_bench::{
    governor, keys, moving, moving_governor, ours, real_time, wall, Contender, Path, Step, Tsc,
};
use ratelimit_lab_reference::{MonotonicClock, TokenBucket};

const CALLS: u64 = 2_000_000;
/// The median and range of `a ÷ b` over `rounds` alternating pairs.
fn paired<A: Contender, B: Contender>(
    a: &A,
    b: &B,
    keys: &[String],
    path: Path,
    threads: usize,
    rounds: usize,
) -> (f64, f64, f64, f64, f64) {
    let mut ratios = Vec::with_capacity(rounds);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = wall(a, keys, path, threads, CALLS);
            (x, wall(b, keys, path, threads, CALLS))
        } else {
            let y = wall(b, keys, path, threads, CALLS);
            (wall(a, keys, path, threads, CALLS), y)
        };
        ratios.push(x.as_secs_f64() / y.as_secs_f64());
        ta.push(x.as_secs_f64() * 1e9 / CALLS as f64);
        tb.push(y.as_secs_f64() * 1e9 / CALLS as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (lo, hi) = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
    (
        median(&mut ratios),
        lo,
        hi,
        median(&mut ta),
        median(&mut tb),
    )
}

/// Prints one row of the table.
fn row(name: &str, threads: usize, (median, lo, hi, a, b): (f64, f64, f64, f64, f64)) {
    println!(
        "{name:<60} {threads:>7} {median:>7.2}x {:>15} {a:>9.1} {b:>9.1}",
        format!("{lo:.2}-{hi:.2}x")
    );
}

/// The rows to run: those whose name contains the filter.
struct Rows {
    rounds: usize,
    filter: String,
}

impl Rows {
    fn wanted(&self, name: &str) -> bool {
        name.contains(&self.filter)
    }

    /// Measures and prints the row `name` if it is wanted.
    fn pair<A: Contender, B: Contender>(
        &self,
        name: &str,
        (a, b): (&A, &B),
        keys: &[String],
        path: Path,
        threads: usize,
    ) {
        row(
            name,
            threads,
            paired(a, b, keys, path, threads, self.rounds),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows = Rows {
        rounds: args.get(1).and_then(|r| r.parse().ok()).unwrap_or(21),
        filter: args.get(2).cloned().unwrap_or_default(),
    };
    println!("{} alternating pairs of {CALLS} calls per row", rows.rounds);
    println!(
        "{:<60} {:>7} {:>8} {:>15} {:>9} {:>9}",
        "pair (a ÷ b)", "threads", "median", "range", "a ns", "b ns"
    );
    for n in [1_000, 100_000] {
        let keys = keys(n);
        for path in Path::ALL {
            let at = format!("{}, {n} keys", path.name());
            let name = format!("moving TSC, {at}: reference ÷ governor");
            if rows.wanted(&name) {
                let a = moving::<TokenBucket, _>(path, &keys, Tsc::new());
                let b = moving_governor(path, &keys, governor::clock::QuantaClock::default());
                rows.pair(&name, (&a, &b), &keys, path, 1);
                assert_eq!((a.limiter.key_count(), b.len()), (n, n));
            }
            let name = format!("moving std, {at}: reference ÷ governor");
            if rows.wanted(&name) {
                let a = moving::<TokenBucket, _>(path, &keys, MonotonicClock::new());
                let b = moving_governor(path, &keys, governor::clock::MonotonicClock);
                rows.pair(&name, (&a, &b), &keys, path, 1);
                assert_eq!((a.limiter.key_count(), b.len()), (n, n));
            }
            let name = format!("step {} ns, {at}: reference ÷ governor", Step::NANOS);
            if rows.wanted(&name) {
                let a = moving::<TokenBucket, _>(path, &keys, Step::new(Step::NANOS));
                let b = moving_governor(path, &keys, Step::new(Step::NANOS));
                rows.pair(&name, (&a, &b), &keys, path, 1);
                assert_eq!((a.limiter.key_count(), b.len()), (n, n));
            }
            let name = format!("frozen, {at}: reference ÷ governor");
            if rows.wanted(&name) {
                let a = ours::<TokenBucket>(path, &keys);
                let b = governor(path, &keys);
                rows.pair(&name, (&a, &b), &keys, path, 1);
                // Both keep tracking every key: the workload did not change under them.
                assert_eq!((a.0.key_count(), b.len()), (n, n));
            }
        }
    }
    let keys = keys(1_000);
    let admit = Path::Admit;
    let names = [
        "clock inside, 1000 keys: sharded ÷ governor, TSC",
        "clock inside, 1000 keys: sharded ÷ governor, std",
        "clock inside, 1000 keys: sharded ÷ reference, std",
    ];
    if !names.iter().any(|n| rows.wanted(n)) {
        return;
    }
    let all = real_time(&keys);
    for threads in [1, 2] {
        if rows.wanted(names[0]) {
            let pair = (&all.sharded_tsc, &all.governor_tsc);
            rows.pair(names[0], pair, &keys, admit, threads);
        }
        if rows.wanted(names[1]) {
            let pair = (&all.sharded, &all.governor);
            rows.pair(names[1], pair, &keys, admit, threads);
        }
        if rows.wanted(names[2]) {
            let pair = (&all.sharded, &all.reference);
            rows.pair(names[2], pair, &keys, admit, threads);
        }
    }
}
