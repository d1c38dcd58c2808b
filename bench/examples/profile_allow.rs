//! A fixed workload for an instruction-level profile of one design's `allow`:
//!
//! ```text
//! cargo build --release --manifest-path bench/Cargo.toml --example profile_allow
//! valgrind --tool=callgrind bench/target/release/examples/profile_allow reference admit
//! callgrind_annotate callgrind.out.<pid> | head -40
//! ```
//!
//! `DESIGN` is `reference`, `sharded` or `governor` at a standing time; `reference_tsc` and
//! `governor_tsc`, `reference_std` and `governor_std`, `reference_step` and `governor_step`
//! with time moving (both sides reading the same clock once per call: the time-stamp
//! counter, the standard library's monotonic clock, or a clock 100 ns further on at every
//! reading); or `sharded_tsc` (the clock read inside `ClockedShardedBucket`, admit path only).
//! `PATH` is `admit` or `reject`. `CALLS` (default one million) calls over 1,000 keys, after
//! each key's first call: the difference between two profiles of different `CALLS` is the
//! cost of the calls alone, without the set-up.
use std::hint::black_box;

use ratelimit_lab_bench::{
    governor, keys, moving, moving_governor, ours, real_time, Contender, Path, Step, Tsc,
};
use ratelimit_lab_reference::{MonotonicClock, ShardedBucket, TokenBucket};

fn run<C: Contender>(c: &C, keys: &[String]) -> u64 {
    let calls = std::env::args()
        .nth(3)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let mut admitted = 0;
    for i in 0..calls {
        admitted += u64::from(c.call(&keys[i % keys.len()]));
    }
    admitted
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = match args.get(2).map(String::as_str) {
        Some("reject") => Path::Reject,
        _ => Path::Admit,
    };
    let keys = keys(1_000);
    let k = &keys;
    let admitted = match args.get(1).map(String::as_str) {
        Some("sharded") => run(&ours::<ShardedBucket>(path, k), k),
        Some("governor") => run(&governor(path, k), k),
        Some("sharded_tsc") => run(&real_time(k).sharded_tsc, k),
        Some("reference_tsc") => run(&moving::<TokenBucket, _>(path, k, Tsc::new()), k),
        Some("governor_tsc") => {
            let clock = governor::clock::QuantaClock::default();
            run(&moving_governor(path, k, clock), k)
        }
        Some("reference_std") => run(&moving::<TokenBucket, _>(path, k, MonotonicClock::new()), k),
        Some("governor_std") => run(
            &moving_governor(path, k, governor::clock::MonotonicClock),
            k,
        ),
        Some("reference_step") => run(
            &moving::<TokenBucket, _>(path, k, Step::new(Step::NANOS)),
            k,
        ),
        Some("governor_step") => run(&moving_governor(path, k, Step::new(Step::NANOS)), k),
        _ => run(&ours::<TokenBucket>(path, k), k),
    };
    println!("{}", black_box(admitted));
}
