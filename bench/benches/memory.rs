//! `cargo bench --manifest-path bench/Cargo.toml --bench memory`: heap bytes per tracked key
//! for each design beside governor, and what a flood of new keys does to a limiter already
//! at `max_keys`. Counts bytes through a counting global allocator, so the figures are exact
//! and repeatable (no timing).
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use ratelimit_lab_api::Limiter;
use ratelimit_lab_bench::{governor, keys, Path, NOW};
use ratelimit_lab_model::ModelLimiter;
use ratelimit_lab_reference::{ShardedBucket, TokenBucket};

/// The system allocator, counting live bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Heap bytes per key of a design of this crate holding `n` keys (the key strings included).
fn per_key<L: Limiter>(n: usize) -> f64 {
    let keys = keys(n);
    let before = live();
    let limiter = L::new(Path::Admit.policy(), n).unwrap_or_else(|e| panic!("{e}"));
    for k in &keys {
        assert!(matches!(limiter.allow(k, 1, NOW), Ok(d) if d.allowed));
    }
    let bytes = live() - before;
    drop(limiter);
    bytes as f64 / n as f64
}

/// Live heap bytes of a limiter at `max_keys` before and after `flood` calls with keys it
/// has never seen (each refused with `KeyCapacityReached`).
fn flood<L: Limiter>(max_keys: usize, flood: usize) -> (isize, isize, usize) {
    let limiter = L::new(Path::Admit.policy(), max_keys).unwrap_or_else(|e| panic!("{e}"));
    for k in keys(max_keys) {
        assert!(matches!(limiter.allow(&k, 1, NOW), Ok(d) if d.allowed));
    }
    let strangers: Vec<String> = (0..flood).map(|i| format!("stranger-{i:08}")).collect();
    let before = live();
    let mut refused = 0;
    for k in &strangers {
        refused += usize::from(limiter.allow(k, 1, NOW).is_err());
    }
    (before, live(), refused)
}

fn main() {
    let n = 100_000;
    println!("heap bytes per tracked key at {n} keys (keys of 12 bytes, in the count):");
    println!("  reference      {:>8.1}", per_key::<TokenBucket>(n));
    println!("  sharded        {:>8.1}", per_key::<ShardedBucket>(n));
    println!("  specification  {:>8.1}", per_key::<ModelLimiter>(n));
    let keys = keys(n);
    let before = live();
    let gov = governor(Path::Admit, &keys);
    println!(
        "  governor       {:>8.1}",
        (live() - before) as f64 / n as f64
    );
    drop(gov);

    let (max_keys, strangers) = (10_000, 100_000);
    println!("\na flood of {strangers} new keys at max_keys = {max_keys}: live heap bytes before -> after");
    for (name, (before, after, refused)) in [
        ("reference", flood::<TokenBucket>(max_keys, strangers)),
        ("sharded", flood::<ShardedBucket>(max_keys, strangers)),
    ] {
        println!(
            "  {name:<14} {before:>10} -> {after:>10} ({:+} bytes; {refused} refused)",
            after - before
        );
        assert_eq!(
            after, before,
            "{name}: memory grew under a flood of refused keys"
        );
    }
    let gov = governor(Path::Admit, &keys[..max_keys]);
    let before = live();
    for i in 0..strangers {
        let _ = gov.check_key(&format!("stranger-{i:08}"));
    }
    let after = live();
    println!(
        "  governor       {before:>10} -> {after:>10} ({:+} bytes; no key bound: {} keys tracked)",
        after - before,
        gov.len()
    );
}
