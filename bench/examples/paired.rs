//! Same-run ratios from alternating, paired runs: on a machine whose cores come and go (a
//! virtual machine's), one long criterion run per design can land in a slow stretch for one
//! and a fast one for the other; pairs of short runs, alternating which goes first, put
//! both designs of a pair in the same stretch, and the median of the pairs' ratios shrugs
//! off the stretches.
//!
//! ```text
//! cargo run --release --manifest-path bench/Cargo.toml --example paired [ROUNDS]
//! ```
//!
//! Two sets of pairs, each `ROUNDS` (default 21) pairs of runs of 2,000,000 calls:
//!
//! - time given (every call at the same `now`, governor on a clock that stands still), one
//!   thread: the reference ÷ governor on the admit and the reject path, over 1,000 and
//!   100,000 keys;
//! - time read inside each design's boundary, admit path, 1,000 keys, on 1 and 2 threads:
//!   `ClockedShardedBucket` ÷ governor on the same clock (the time-stamp counter, then the
//!   standard library's monotonic clock), and `ClockedShardedBucket` ÷ the reference behind
//!   `Clocked`.
//!
//! Each row prints the median ratio (first design ÷ second, per call; below 1 the first is
//! faster), the range of the ratios, and each design's median nanoseconds per call (wall
//! time over all calls: on 2 threads, half the 1-thread figure is perfect scaling).
use ratelimit_lab_api::Limiter as _;
use ratelimit_lab_bench::{governor, keys, ours, real_time, wall, Contender, Path};
use ratelimit_lab_reference::TokenBucket;

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
        "{name:<56} {threads:>7} {median:>7.2}x {:>15} {a:>9.1} {b:>9.1}",
        format!("{lo:.2}-{hi:.2}x")
    );
}

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(21);
    println!("{rounds} alternating pairs of {CALLS} calls per row");
    println!(
        "{:<56} {:>7} {:>8} {:>15} {:>9} {:>9}",
        "pair (a ÷ b)", "threads", "median", "range", "a ns", "b ns"
    );
    for n in [1_000, 100_000] {
        let keys = keys(n);
        for path in Path::ALL {
            let reference = ours::<TokenBucket>(path, &keys);
            let gov = governor(path, &keys);
            let name = format!(
                "reference ÷ governor, time given, {}, {n} keys",
                path.name()
            );
            row(&name, 1, paired(&reference, &gov, &keys, path, 1, rounds));
            // Both keep tracking every key: the workload did not change under them.
            assert_eq!(reference.0.key_count(), n);
            assert_eq!(gov.len(), n);
        }
    }
    let keys = keys(1_000);
    let all = real_time(&keys);
    let admit = Path::Admit;
    for threads in [1, 2] {
        row(
            "clock inside, 1000 keys: sharded ÷ governor, TSC",
            threads,
            paired(
                &all.sharded_tsc,
                &all.governor_tsc,
                &keys,
                admit,
                threads,
                rounds,
            ),
        );
        row(
            "clock inside, 1000 keys: sharded ÷ governor, std",
            threads,
            paired(&all.sharded, &all.governor, &keys, admit, threads, rounds),
        );
        row(
            "clock inside, 1000 keys: sharded ÷ reference, std",
            threads,
            paired(&all.sharded, &all.reference, &keys, admit, threads, rounds),
        );
    }
}
