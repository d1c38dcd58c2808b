//! `cargo bench --manifest-path bench/Cargo.toml --bench limiters`: every design of this
//! crate beside governor's keyed limiter, in one run, then a table of each figure as a ratio
//! to governor's on the same workload (see `BENCHMARKS.md`).
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use governor::clock::{Clock as _, DefaultClock};
use ratelimit_lab_api::{Limiter, Policy};
use ratelimit_lab_bench::{
    governor, keys, moving, moving_governor, ours, real_time, wall, Path, Step, Tsc, NOW,
};
use ratelimit_lab_model::ModelLimiter;
use ratelimit_lab_reference::{Clock, Clocked, MonotonicClock, ShardedBucket, TokenBucket};

fn allow(c: &mut Criterion) {
    for n in [1_000, 100_000] {
        let keys = keys(n);
        for path in Path::ALL {
            let mut group = c.benchmark_group(format!("allow_{}_{n}keys", path.name()));
            group
                .warm_up_time(Duration::from_millis(700))
                .measurement_time(Duration::from_secs(2));
            for threads in [1, 2] {
                let id = |design: &str| BenchmarkId::new(design, format!("{threads}t"));
                let reference = ours::<TokenBucket>(path, &keys);
                group.bench_function(id("reference"), |b| {
                    b.iter_custom(|iters| wall(&reference, &keys, path, threads, iters))
                });
                drop(reference);
                let sharded = ours::<ShardedBucket>(path, &keys);
                group.bench_function(id("sharded"), |b| {
                    b.iter_custom(|iters| wall(&sharded, &keys, path, threads, iters))
                });
                drop(sharded);
                let spec = ours::<ModelLimiter>(path, &keys);
                group.bench_function(id("specification"), |b| {
                    b.iter_custom(|iters| wall(&spec, &keys, path, threads, iters))
                });
                drop(spec);
                let gov = governor(path, &keys);
                group.bench_function(id("governor"), |b| {
                    b.iter_custom(|iters| wall(&gov, &keys, path, threads, iters))
                });
            }
            group.finish();
        }
    }
}

/// Time moving, one thread: the reference (`allow(key, cost, now)`, `now` read by the caller)
/// beside governor (the clock read inside `check_key`), both reading the same clock once per
/// call: the time-stamp counter (`_tsc`), the standard library's monotonic clock (`_std`), and
/// a clock [`Step::NANOS`] further on at every reading (`_step`, a refill on every call).
fn allow_moving(c: &mut Criterion) {
    for n in [1_000, 100_000] {
        let keys = keys(n);
        for path in Path::ALL {
            let mut group = c.benchmark_group(format!("allow_moving_{}_{n}keys", path.name()));
            group
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(2));
            let k = &keys;
            let r = moving::<TokenBucket, _>(path, k, Tsc::new());
            group.bench_function("reference_tsc", |b| {
                b.iter_custom(|iters| wall(&r, k, path, 1, iters))
            });
            let g = moving_governor(path, k, governor::clock::QuantaClock::default());
            group.bench_function("governor_tsc", |b| {
                b.iter_custom(|iters| wall(&g, k, path, 1, iters))
            });
            let r = moving::<TokenBucket, _>(path, k, MonotonicClock::new());
            group.bench_function("reference_std", |b| {
                b.iter_custom(|iters| wall(&r, k, path, 1, iters))
            });
            let g = moving_governor(path, k, governor::clock::MonotonicClock);
            group.bench_function("governor_std", |b| {
                b.iter_custom(|iters| wall(&g, k, path, 1, iters))
            });
            let r = moving::<TokenBucket, _>(path, k, Step::new(Step::NANOS));
            group.bench_function("reference_step", |b| {
                b.iter_custom(|iters| wall(&r, k, path, 1, iters))
            });
            let g = moving_governor(path, k, Step::new(Step::NANOS));
            group.bench_function("governor_step", |b| {
                b.iter_custom(|iters| wall(&g, k, path, 1, iters))
            });
            group.finish();
        }
    }
}

/// A limiter of `L` holding `n` keys, none of them full (each spent its one token at [`NOW`]).
fn drained<L: Limiter>(n: usize) -> L {
    ours::<L>(Path::Reject, &keys(n)).0
}

/// Admissions with real time read inside each design's boundary, on 1 and 2 threads, each
/// design beside governor on the same clock: on the standard library's monotonic clock, the
/// reference behind [`Clocked`]'s gate, `ClockedShardedBucket` and governor; on the
/// time-stamp counter (governor's default clock), `ClockedShardedBucket` and governor.
fn allow_clocked(c: &mut Criterion) {
    let keys = keys(1_000);
    let mut group = c.benchmark_group("allow_clocked_admit_1000keys");
    group
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(2));
    for threads in [1, 2] {
        let id = |design: &str| BenchmarkId::new(design, format!("{threads}t"));
        let all = real_time(&keys);
        group.bench_function(id("reference"), |b| {
            b.iter_custom(|iters| wall(&all.reference, &keys, Path::Admit, threads, iters))
        });
        group.bench_function(id("sharded"), |b| {
            b.iter_custom(|iters| wall(&all.sharded, &keys, Path::Admit, threads, iters))
        });
        group.bench_function(id("governor"), |b| {
            b.iter_custom(|iters| wall(&all.governor, &keys, Path::Admit, threads, iters))
        });
        group.bench_function(id("sharded_tsc"), |b| {
            b.iter_custom(|iters| wall(&all.sharded_tsc, &keys, Path::Admit, threads, iters))
        });
        group.bench_function(id("governor_tsc"), |b| {
            b.iter_custom(|iters| wall(&all.governor_tsc, &keys, Path::Admit, threads, iters))
        });
    }
    group.finish();
}

/// `evict_full` and `replace_policy` over every key, at 10⁴, 10⁵ and 10⁶ keys: the pause
/// each causes. Nothing is full, so `evict_full` scans every key and keeps it, and the same
/// limiter serves every iteration; `replace_policy` refills and clamps every key, each
/// iteration with the next version.
fn pauses(c: &mut Criterion) {
    fn evict<L: Limiter>(l: &L, iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            assert_eq!(l.evict_full(NOW), Ok(0), "no bucket is full");
        }
        start.elapsed()
    }
    fn cutover<L: Limiter>(l: &L, version: &mut u64, iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            let next = Policy::new(*version + 1, 1, 1).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(l.replace_policy(next, *version, NOW), Ok(()));
            *version += 1;
        }
        start.elapsed()
    }
    for n in [10_000, 100_000, 1_000_000] {
        let mut group = c.benchmark_group(format!("pause_{n}keys"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        let reference = drained::<TokenBucket>(n);
        group.bench_function("reference_evict_full", |b| {
            b.iter_custom(|iters| evict(&reference, iters))
        });
        let mut version = 1;
        group.bench_function("reference_replace_policy", |b| {
            b.iter_custom(|iters| cutover(&reference, &mut version, iters))
        });
        drop(reference);
        let sharded = drained::<ShardedBucket>(n);
        group.bench_function("sharded_evict_full", |b| {
            b.iter_custom(|iters| evict(&sharded, iters))
        });
        let mut version = 1;
        group.bench_function("sharded_replace_policy", |b| {
            b.iter_custom(|iters| cutover(&sharded, &mut version, iters))
        });
        drop(sharded);
        let spec = drained::<ModelLimiter>(n);
        group.bench_function("specification_evict_full", |b| {
            b.iter_custom(|iters| evict(&spec, iters))
        });
        drop(spec);
        let gov = governor(Path::Reject, &keys(n));
        group.bench_function("governor_retain_recent", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    gov.retain_recent();
                }
                assert_eq!(gov.len(), n, "no state is fresh");
                start.elapsed()
            })
        });
        group.finish();
    }
}

/// What reading time costs: the monotonic clock alone, governor's default clock, and an
/// admission through [`Clocked`] (clock read inside its gate) beside the same admission at a
/// given time.
fn clock(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    group
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(2));
    let monotonic = MonotonicClock::new();
    group.bench_function("monotonic_now_nanos", |b| {
        b.iter(|| black_box(monotonic.now_nanos()))
    });
    let quanta = DefaultClock::default();
    group.bench_function("governor_default_clock_now", |b| {
        b.iter(|| black_box(quanta.now()))
    });
    let keys = keys(1_000);
    let at_now = ours::<TokenBucket>(Path::Admit, &keys);
    group.bench_function("reference_allow_at_given_time", |b| {
        b.iter_custom(|iters| wall(&at_now, &keys, Path::Admit, 1, iters))
    });
    // A limiter of its own: the clock starts at 0, below the time the other one has seen.
    let fresh =
        TokenBucket::new(Path::Admit.policy(), keys.len()).unwrap_or_else(|e| panic!("{e}"));
    let clocked = Clocked::new(fresh, MonotonicClock::new());
    group.bench_function("reference_allow_clocked", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters {
                let key = &keys[i as usize % keys.len()];
                assert!(matches!(clocked.allow(key, 1), Ok(d) if d.allowed));
            }
            start.elapsed()
        })
    });
    group.finish();
}

/// Where criterion keeps its estimates.
fn criterion_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// The median of the benchmark `group/id` measured in this run, in nanoseconds per call.
fn median(group: &str, id: &str) -> Option<f64> {
    let file = criterion_dir()
        .join(group)
        .join(id)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(file).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// Every `allow` figure of this run as a ratio to governor's on the same workload and thread
/// count (above 1: slower than governor), and the pauses beside governor's `retain_recent`.
fn ratios() {
    println!(
        "\ntime moving, 1 thread: the reference ÷ governor on the same clock (median ns per call):"
    );
    println!(
        "{:<28} {:<8} {:>14} {:>11} {:>12} {:>11}",
        "workload", "clock", "design", "ns/call", "governor ns", "ratio"
    );
    for n in [1_000, 100_000] {
        for path in Path::ALL {
            let group = format!("allow_moving_{}_{n}keys", path.name());
            for clock in ["tsc", "std", "step"] {
                if let (Some(ns), Some(gov)) = (
                    median(&group, &format!("reference_{clock}")),
                    median(&group, &format!("governor_{clock}")),
                ) {
                    println!(
                        "{group:<28} {clock:<8} {:>14} {ns:>11.1} {gov:>12.1} {:>10.2}x",
                        "reference",
                        ns / gov
                    );
                }
            }
        }
    }
    println!("\ntime frozen (admission alone): ratios to governor keyed, measured in this run (median ns per call; ratio > 1 is slower):");
    println!(
        "{:<28} {:<8} {:>14} {:>11} {:>12} {:>11}",
        "workload", "threads", "design", "ns/call", "governor ns", "ratio"
    );
    for n in [1_000, 100_000] {
        for path in Path::ALL {
            let group = format!("allow_{}_{n}keys", path.name());
            for threads in ["1t", "2t"] {
                let Some(gov) = median(&group, &format!("governor/{threads}")) else {
                    continue;
                };
                for design in ["reference", "sharded", "specification"] {
                    if let Some(ns) = median(&group, &format!("{design}/{threads}")) {
                        println!(
                            "{group:<28} {threads:<8} {design:>14} {ns:>11.1} {gov:>12.1} {:>10.2}x",
                            ns / gov
                        );
                    }
                }
            }
        }
    }
    // Each design beside governor on the same clock: the standard library's monotonic clock,
    // then the time-stamp counter.
    let group = "allow_clocked_admit_1000keys";
    for threads in ["1t", "2t"] {
        for (designs, peer) in [
            (&["reference", "sharded"][..], "governor"),
            (&["sharded_tsc"][..], "governor_tsc"),
        ] {
            let Some(gov) = median(group, &format!("{peer}/{threads}")) else {
                continue;
            };
            for design in designs {
                if let Some(ns) = median(group, &format!("{design}/{threads}")) {
                    println!(
                        "{group:<28} {threads:<8} {design:>14} {ns:>11.1} {gov:>12.1} {:>10.2}x  ({peer})",
                        ns / gov
                    );
                }
            }
        }
    }
    if let (Some(r), Some(s)) = (median(group, "reference/2t"), median(group, "sharded/2t")) {
        println!(
            "sharded throughput on 2 threads, std clock read inside: {:.2}x the reference's behind Clocked",
            r / s
        );
    }
    println!("\npauses (median ms per call over every key):");
    for n in [10_000, 100_000, 1_000_000] {
        let group = format!("pause_{n}keys");
        let gov = median(&group, "governor_retain_recent");
        for id in [
            "reference_evict_full",
            "reference_replace_policy",
            "sharded_evict_full",
            "sharded_replace_policy",
            "specification_evict_full",
            "governor_retain_recent",
        ] {
            if let Some(ns) = median(&group, id) {
                let ratio = gov.map_or(String::new(), |g| {
                    format!("{:.2}x governor retain_recent", ns / g)
                });
                println!("{group:<18} {id:<26} {:>10.3} ms  {ratio}", ns / 1e6);
            }
        }
    }
    if let (Some(given), Some(clocked), Some(clock)) = (
        median("clock", "reference_allow_at_given_time"),
        median("clock", "reference_allow_clocked"),
        median("clock", "monotonic_now_nanos"),
    ) {
        println!(
            "\nclock: now_nanos {clock:.1} ns; allow at a given time {given:.1} ns, through Clocked {clocked:.1} ns (+{:.1} ns)",
            clocked - given
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    allow_moving(&mut c);
    allow(&mut c);
    allow_clocked(&mut c);
    pauses(&mut c);
    clock(&mut c);
    c.final_summary();
    ratios();
}
