//! `TokenBucket` allocates nothing per call: a counting global allocator shows that `allow`
//! on a tracked key (allowed or rejected), `evict_full` and `replace_policy` make no heap
//! allocation, and that `allow` on a new key makes exactly one, the `String` that stores the
//! key, while the key table has room; at `MAX_QUANTITY` extremes as well.
#![cfg(not(loom))]
#![cfg(not(feature = "shuttle"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ratelimit_lab_api::{LimitError, Limiter, Policy, MAX_QUANTITY};
use ratelimit_lab_reference::TokenBucket;

/// The system allocator, counting the allocations each thread makes.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn bump() {
    // `try_with`: allocations during thread teardown, after the counter is gone, are not ours.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` unchanged; counting touches only a const-initialized
// thread-local `Cell` with no destructor, which neither allocates nor re-enters the allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The result of `f` and how many allocations (including reallocations) this thread made
/// while running it.
fn count<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    let after = ALLOCATIONS.with(Cell::get);
    (out, after - before)
}

const M: u64 = MAX_QUANTITY;

/// A limiter holding `keys` (each started full at time 0) whose table has room for `room`
/// more keys without growing: it was filled with `keys + room` keys, the surplus of which were
/// evicted again (eviction keeps the table's capacity).
fn warmed(policy: Policy, max_keys: usize, keys: &[&str], room: usize) -> TokenBucket {
    let limiter = TokenBucket::new(policy, max_keys).unwrap();
    for i in 0..room {
        limiter.allow(&format!("warm-{i}"), 1, 0).unwrap();
    }
    // The warm-up keys spent one token each at time 0; at a time by which they have all
    // refilled, evict them (the real keys are added afterwards, so they stay).
    limiter.evict_full(u64::MAX / 2).unwrap();
    assert_eq!(limiter.key_count(), 0, "the warm-up keys were evicted");
    for k in keys {
        limiter.allow(k, 1, u64::MAX / 2).unwrap();
    }
    limiter
}

#[test]
fn the_counter_sees_allocations() {
    // Guards every other test in this file: a counter that never moved would pass them all.
    let (s, n) = count(|| String::from("k"));
    assert_eq!((s.as_str(), n), ("k", 1));
    let (v, n) = count(|| vec![0u8; 64]);
    assert_eq!((v.len(), n), (64, 1));
}

#[test]
fn allow_on_a_tracked_key_allocates_nothing() {
    for policy in [
        Policy::new(1, 10, 2).unwrap(),
        Policy::new(1, M, M).unwrap(),
        Policy::new(M, M, 1).unwrap(),
        Policy::new(1, 1, 1).unwrap(),
    ] {
        let limiter = TokenBucket::new(policy, 1).unwrap();
        limiter.allow("k", 1, 0).unwrap();
        let cap = policy.capacity();
        // Allowed after a refill, then rejected, then allowed after a refill to u64::MAX.
        let (d, n) = count(|| limiter.allow("k", 1, 2_000_000_000).unwrap());
        assert!(d.allowed, "{policy:?}: {d:?}");
        assert_eq!(n, 0, "{policy:?}: allowed call on a tracked key allocated");
        let (d, n) = count(|| limiter.allow("k", cap, 2_000_000_000).unwrap());
        assert!(!d.allowed, "{policy:?}: {d:?}");
        assert_eq!(n, 0, "{policy:?}: rejection allocated");
        let (d, n) = count(|| limiter.allow("k", 1, u64::MAX).unwrap());
        assert!(d.allowed, "{policy:?}: {d:?}");
        assert_eq!(n, 0, "{policy:?}: allow after the largest refill allocated");
    }
}

#[test]
fn rejections_allocate_nothing_at_the_extremes() {
    // Capacity MAX_QUANTITY at one token per second: the shortfall is as large as it gets and
    // the retry estimate saturates.
    let limiter = TokenBucket::new(Policy::new(1, M, 1).unwrap(), 1).unwrap();
    limiter.allow("k", M, 0).unwrap();
    let (d, n) = count(|| limiter.allow("k", M, 1).unwrap());
    assert_eq!((d.allowed, d.retry_after_nanos), (false, M));
    assert_eq!(n, 0);
    // Key capacity reached and every input error: no allocation either (nothing is stored).
    let (e, n) = count(|| limiter.allow("other", 1, 2).unwrap_err());
    assert_eq!((e, n), (LimitError::KeyCapacityReached { max_keys: 1 }, 0));
    let (_, n) = count(|| {
        assert!(limiter.allow(" \t\u{2003}", 1, 2).is_err());
        assert!(limiter.allow("k", 0, 2).is_err());
        assert!(limiter.allow("k", u64::MAX, 2).is_err());
        assert!(limiter.allow("k", 1, 0).is_err());
    });
    assert_eq!(n, 0);
}

#[test]
fn evict_full_and_replace_policy_allocate_nothing() {
    const T: u64 = 1_000;
    const SECOND: u64 = 1_000_000_000;
    let limiter = TokenBucket::new(Policy::new(1, M, 1).unwrap(), 64).unwrap();
    limiter.allow("a", M, T).unwrap(); // empty
    for k in ["b", "c", "d"] {
        limiter.allow(k, 1, T).unwrap(); // one token short of full
    }
    limiter.allow("b", 1, T + SECOND).unwrap(); // one token short again, a second later
                                                // c and d have refilled; a and b have not.
    let (removed, n) = count(|| limiter.evict_full(T + SECOND).unwrap());
    assert_eq!((removed, n, limiter.key_count()), (2, 0, 2));
    // Cut over to a smaller capacity (both clamp to one token), then to the largest policy
    // at the largest time.
    let (r, n) = count(|| limiter.replace_policy(Policy::new(2, 1, 1).unwrap(), 1, T + SECOND + 1));
    assert_eq!((r, n), (Ok(()), 0));
    let (r, n) = count(|| limiter.replace_policy(Policy::new(M, M, M).unwrap(), 2, u64::MAX));
    assert_eq!((r, n), (Ok(()), 0));
    // A stale cutover and a backwards eviction fail without allocating.
    let (r, n) = count(|| limiter.replace_policy(Policy::new(M, 1, 1).unwrap(), M, u64::MAX));
    assert!(r.is_err());
    assert_eq!(n, 0);
    let (r, n) = count(|| limiter.evict_full(0));
    assert!(r.is_err());
    assert_eq!(n, 0);
    // A scan that removes nothing: the buckets hold one token of a MAX_QUANTITY capacity.
    let (removed, n) = count(|| limiter.evict_full(u64::MAX).unwrap());
    assert_eq!((removed, n, limiter.key_count()), (0, 0, 2));
    let snapshot = limiter.snapshot().unwrap();
    assert!(
        snapshot.buckets.values().all(|b| b.units == 1_000_000_000),
        "clamped to 1 token"
    );
}

#[test]
fn a_new_key_allocates_exactly_its_string() {
    for policy in [
        Policy::new(1, 10, 2).unwrap(),
        Policy::new(M, M, M).unwrap(),
    ] {
        let limiter = warmed(policy, 16, &["a"], 8);
        for (i, key) in ["b", "a key longer than any inline buffer", "\u{a0}"]
            .iter()
            .enumerate()
        {
            let (d, n) = count(|| limiter.allow(key, policy.capacity(), u64::MAX / 2).unwrap());
            assert!(d.allowed, "{policy:?}: a new key starts full");
            assert_eq!(
                n, 1,
                "{policy:?}: new key {key:?} made {n} allocations, not 1"
            );
            assert_eq!(limiter.key_count(), 2 + i);
        }
    }
}

#[test]
fn a_new_key_that_outgrows_the_table_adds_only_the_table() {
    // Without room, the key table grows (amortized, like any hash map): the String and the
    // new table, nothing else.
    let limiter = TokenBucket::new(Policy::new(1, M, M).unwrap(), usize::MAX).unwrap();
    let mut grew = 0;
    for i in 0..100u64 {
        let key = format!("key-{i}");
        let (d, n) = count(|| limiter.allow(&key, M, i).unwrap());
        assert!(d.allowed);
        assert!(n == 1 || n == 2, "new key #{i} made {n} allocations");
        grew += usize::from(n == 2);
    }
    assert!(
        (1..=10).contains(&grew),
        "the table grew {grew} times for 100 keys"
    );
}
