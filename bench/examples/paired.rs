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
//! For each pair and thread count: `ROUNDS` (default 21) pairs of runs of 2,000,000 calls
//! each over 1,000 keys, admit path, time read inside each design's boundary; prints the
//! median ratio (first design ÷ second, per call; below 1 the first is faster) and the range.
use ratelimit_lab_bench::{keys, real_time, wall, Contender, Path};

const CALLS: u64 = 2_000_000;

/// The median and range of `a ÷ b` over `rounds` alternating pairs.
fn paired<A: Contender, B: Contender>(
    a: &A,
    b: &B,
    keys: &[String],
    threads: usize,
    rounds: usize,
) -> (f64, f64, f64, f64, f64) {
    let mut ratios = Vec::with_capacity(rounds);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = wall(a, keys, Path::Admit, threads, CALLS);
            (x, wall(b, keys, Path::Admit, threads, CALLS))
        } else {
            let y = wall(b, keys, Path::Admit, threads, CALLS);
            (wall(a, keys, Path::Admit, threads, CALLS), y)
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

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(21);
    let keys = keys(1_000);
    let all = real_time(&keys);
    println!("{rounds} alternating pairs of {CALLS} calls, 1,000 keys, admit, clock read inside");
    println!(
        "{:<44} {:>7} {:>8} {:>15} {:>9} {:>9}",
        "pair (a ÷ b)", "threads", "median", "range", "a ns", "b ns"
    );
    for threads in [1, 2] {
        let rows = [
            (
                "sharded ÷ governor, time-stamp counter",
                paired(&all.sharded_tsc, &all.governor_tsc, &keys, threads, rounds),
            ),
            (
                "sharded ÷ governor, std monotonic clock",
                paired(&all.sharded, &all.governor, &keys, threads, rounds),
            ),
            (
                "sharded ÷ reference behind Clocked, std",
                paired(&all.sharded, &all.reference, &keys, threads, rounds),
            ),
        ];
        for (name, (median, lo, hi, a, b)) in rows {
            println!(
                "{name:<44} {threads:>7} {median:>7.2}x {:>15} {a:>9.1} {b:>9.1}",
                format!("{lo:.2}-{hi:.2}x")
            );
        }
    }
}
