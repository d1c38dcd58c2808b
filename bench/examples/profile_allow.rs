//! A fixed workload for an instruction-level profile of one design's `allow`:
//!
//! ```text
//! cargo build --release --manifest-path bench/Cargo.toml --example profile_allow
//! valgrind --tool=callgrind bench/target/release/examples/profile_allow reference admit
//! callgrind_annotate callgrind.out.<pid> | head -40
//! ```
//!
//! `DESIGN` is `reference`, `sharded` or `governor` (at a standing time), or `sharded_tsc` or
//! `governor_tsc` (reading the time-stamp counter inside each call, admit path only);
//! `PATH` is `admit` or `reject`. One million calls over 1,000 keys, after each key's first
//! call.
use std::hint::black_box;

use ratelimit_lab_bench::{governor, keys, ours, real_time, Contender, Path};
use ratelimit_lab_reference::{ShardedBucket, TokenBucket};

fn run<C: Contender>(c: &C, keys: &[String]) -> u64 {
    let mut admitted = 0;
    for i in 0..1_000_000 {
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
    let admitted = match args.get(1).map(String::as_str) {
        Some("sharded") => run(&ours::<ShardedBucket>(path, &keys), &keys),
        Some("governor") => run(&governor(path, &keys), &keys),
        Some("sharded_tsc") => run(&real_time(&keys).sharded_tsc, &keys),
        Some("governor_tsc") => run(&real_time(&keys).governor_tsc, &keys),
        _ => run(&ours::<TokenBucket>(path, &keys), &keys),
    };
    println!("{}", black_box(admitted));
}
