//! The facade builds one design under all three backends: a small lock-free registry that
//! uses `AtomicPtr`, every other atomic type, `Barrier`, `Once`, `OnceLock`, `LazyLock`,
//! `Mutex`, `RwLock`, `Condvar`, `mpsc` and `thread` from `ratelimit_lab_api::sync`, with
//! nothing but `std`'s names and methods.
//!
//! - `cargo test -p ratelimit-lab-api --test facade`: real threads, with and without the
//!   facade's perturbation;
//! - `--features shuttle`: inside `shuttle::check_random(.., 10)`;
//! - `RUSTFLAGS="--cfg loom"` (with `--release`): inside loom's model (`loom::model` with a
//!   preemption bound), every interleaving with at most two preemptions.
use std::ptr;

use ratelimit_lab_api::sync::atomic::{
    AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicPtr, AtomicU16,
    AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use ratelimit_lab_api::sync::{
    mpsc, thread, Arc, Barrier, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock,
};

/// Runs `body` under the backend the crate is built with.
fn explore(body: fn()) {
    #[cfg(loom)]
    {
        // Every interleaving with at most two preemptions (loom's usual bound; the design has
        // a dozen contended locations, and an unbounded search runs for hours), unless
        // `LOOM_MAX_PREEMPTIONS` says otherwise.
        let mut model = loom::model::Builder::new();
        model.preemption_bound = model.preemption_bound.or(Some(2));
        model.check(body);
    }
    #[cfg(all(not(loom), feature = "shuttle"))]
    shuttle::check_random(body, 10);
    #[cfg(all(not(loom), not(feature = "shuttle")))]
    {
        body();
        for seed in 0..20 {
            let _on = ratelimit_lab_api::sync::perturbation::enable(seed);
            body();
        }
    }
}

/// Under `std`, a `LazyLock` and a `OnceLock` can be `static`s; under loom and shuttle they
/// live in the design instead (see the facade's docs).
#[cfg(not(any(loom, feature = "shuttle")))]
static CAPACITY: LazyLock<usize> = LazyLock::new(|| 2);
#[cfg(not(any(loom, feature = "shuttle")))]
static STARTED: OnceLock<&'static str> = OnceLock::new();

/// One registered id, in a lock-free stack.
struct Node {
    id: u64,
    next: *mut Node,
}

/// A counter of every atomic type: each registration adds to all of them.
#[derive(Default, Debug)]
struct Tally {
    u8: AtomicU8,
    u16: AtomicU16,
    u32: AtomicU32,
    u64: AtomicU64,
    usize: AtomicUsize,
    i8: AtomicI8,
    i16: AtomicI16,
    i32: AtomicI32,
    i64: AtomicI64,
    isize: AtomicIsize,
    any: AtomicBool,
}

impl Tally {
    fn add(&self, id: u64) {
        self.u8.fetch_add(1, Ordering::Relaxed);
        self.u16.fetch_sub(1, Ordering::Relaxed);
        self.u32.fetch_or(1 << id, Ordering::Relaxed);
        self.u64.fetch_max(id, Ordering::Relaxed);
        let _ = self
            .usize
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(2));
        self.i8.fetch_xor(1, Ordering::Relaxed);
        self.i16.fetch_and(!(1 << id), Ordering::Relaxed);
        self.i32.fetch_min(-(id as i32), Ordering::Relaxed);
        self.i64.fetch_nand(0, Ordering::Relaxed);
        let mut seen = self.isize.load(Ordering::Relaxed);
        while let Err(now) =
            self.isize
                .compare_exchange_weak(seen, seen - 1, Ordering::Relaxed, Ordering::Relaxed)
        {
            seen = now;
        }
        self.any.fetch_or(true, Ordering::Relaxed);
    }
}

/// The design: registrants check a limit computed once, push themselves on a lock-free
/// stack and count themselves in a [`Tally`]; the first one is remembered; the registry opens once;
/// names go under a lock; a policy is read under a read lock; whoever waits for `n`
/// registrations waits on a condition variable.
struct Registry {
    head: AtomicPtr<Node>,
    tally: Tally,
    first: OnceLock<u64>,
    opened: Once,
    limit: LazyLock<usize>,
    names: Mutex<Vec<String>>,
    policy: RwLock<&'static str>,
    registered: Mutex<usize>,
    changed: Condvar,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            head: AtomicPtr::default(),
            tally: Tally::default(),
            first: OnceLock::new(),
            opened: Once::new(),
            limit: LazyLock::new(|| 2),
            names: Mutex::new(Vec::new()),
            policy: RwLock::new("open"),
            registered: Mutex::new(0),
            changed: Condvar::new(),
        }
    }

    /// Registers `id`; returns the first id registered.
    fn register(&self, id: u64) -> u64 {
        let first = *self.first.get_or_init(|| id);
        self.opened
            .call_once(|| self.names.lock().unwrap().push("opened".to_string()));
        assert_eq!(*self.limit, 2, "every registrant sees the one limit");
        let node = Box::into_raw(Box::new(Node {
            id,
            next: ptr::null_mut(),
        }));
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `node` is not published yet; this thread alone touches it.
            unsafe { (*node).next = head };
            match self
                .head
                .compare_exchange_weak(head, node, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        self.tally.add(id);
        let policy = *self.policy.read().unwrap();
        self.names.lock().unwrap().push(format!("{policy} #{id}"));
        *self.registered.lock().unwrap() += 1;
        self.changed.notify_all();
        first
    }

    /// Waits until `n` registrations have finished.
    fn wait_for(&self, n: usize) {
        let guard = self.registered.lock().unwrap();
        let guard = self.changed.wait_while(guard, |count| *count < n).unwrap();
        assert_eq!(*guard, n);
    }

    fn ids(&self) -> Vec<u64> {
        let mut ids = Vec::new();
        let mut node = self.head.load(Ordering::Acquire);
        while !node.is_null() {
            // SAFETY: published nodes live until the registry is dropped.
            let n = unsafe { &*node };
            ids.push(n.id);
            node = n.next;
        }
        ids.sort_unstable();
        ids
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // `get_mut` is `std`'s way; a relaxed `swap` is every backend's (loom has no `get_mut`).
        let mut node = self.head.swap(ptr::null_mut(), Ordering::Relaxed);
        while !node.is_null() {
            // SAFETY: every node came from `Box::into_raw` and is freed once, here.
            let boxed = unsafe { Box::from_raw(node) };
            node = boxed.next;
        }
    }
}

fn two_registrants() {
    #[cfg(not(any(loom, feature = "shuttle")))]
    let capacity = {
        let _ = STARTED.set("std");
        assert_eq!(STARTED.get(), Some(&"std"));
        *CAPACITY
    };
    #[cfg(any(loom, feature = "shuttle"))]
    let capacity = 2;

    let registry = Arc::new(Registry::new());
    let start = Arc::new(Barrier::new(2));
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (1..=2u64)
        .map(|id| {
            let (registry, start, tx) = (Arc::clone(&registry), Arc::clone(&start), tx.clone());
            thread::spawn(move || {
                let leader = start.wait().is_leader();
                let first = registry.register(id);
                tx.send((id, leader, first)).unwrap();
            })
        })
        .collect();
    drop(tx);

    registry.wait_for(*registry.limit);
    let mut replies = vec![rx.recv().unwrap(), rx.recv().unwrap()];
    replies.sort_unstable();
    assert_eq!(replies.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(replies.iter().filter(|r| r.1).count(), 1, "one leader");
    let first = replies[0].2;
    assert!(
        replies.iter().all(|r| r.2 == first),
        "one first: {replies:?}"
    );
    for handle in handles {
        handle.join().unwrap();
    }

    assert_eq!(registry.ids(), [1, 2]);
    assert_eq!(registry.first.get(), Some(&first));
    assert!(registry.opened.is_completed());
    assert_eq!(*registry.limit, capacity);
    let mut names = registry.names.lock().unwrap().clone();
    names.sort();
    assert_eq!(names, ["open #1", "open #2", "opened"]);

    let t = &registry.tally;
    assert_eq!(t.u8.load(Ordering::Relaxed), 2);
    assert_eq!(t.u16.load(Ordering::Relaxed), u16::MAX - 1);
    assert_eq!(t.u32.load(Ordering::Relaxed), 0b110);
    assert_eq!(t.u64.load(Ordering::Relaxed), 2);
    assert_eq!(t.usize.load(Ordering::Relaxed), 4);
    assert_eq!(t.i8.load(Ordering::Relaxed), 0);
    assert_eq!(t.i16.load(Ordering::Relaxed), 0);
    assert_eq!(t.i32.load(Ordering::Relaxed), -2);
    assert_eq!(t.i64.load(Ordering::Relaxed), -1);
    assert_eq!(t.isize.load(Ordering::Relaxed), -2);
    assert!(t.any.load(Ordering::Relaxed));
}

#[test]
fn one_design_builds_and_runs_under_the_backend() {
    explore(two_registrants);
}

/// Every atomic type's whole method set, one thread.
macro_rules! every_method {
    ($($atomic:ident $value:ty;)*) => {$(
        {
            let a = <$atomic>::new(5 as $value);
            assert_eq!(a.load(Ordering::SeqCst), 5 as $value);
            a.store(6 as $value, Ordering::SeqCst);
            assert_eq!(a.swap(7 as $value, Ordering::AcqRel), 6 as $value);
            assert_eq!(a.compare_exchange(7 as $value, 8 as $value, Ordering::AcqRel, Ordering::Acquire), Ok(7 as $value));
            assert_eq!(a.compare_exchange(7 as $value, 9 as $value, Ordering::AcqRel, Ordering::Acquire), Err(8 as $value));
            let mut seen = a.load(Ordering::Relaxed);
            while let Err(now) = a.compare_exchange_weak(seen, 10 as $value, Ordering::Relaxed, Ordering::Relaxed) {
                seen = now;
            }
            assert_eq!(a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v + 1)), Ok(10 as $value));
            assert_eq!(a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |_| None), Err(11 as $value));
            assert_eq!(a.fetch_add(1 as $value, Ordering::Relaxed), 11 as $value);
            assert_eq!(a.fetch_sub(2 as $value, Ordering::Relaxed), 12 as $value);
            assert_eq!(a.fetch_and(0b1110 as $value, Ordering::Relaxed), 10 as $value);
            assert_eq!(a.fetch_or(1 as $value, Ordering::Relaxed), 10 as $value);
            assert_eq!(a.fetch_xor(0b11 as $value, Ordering::Relaxed), 11 as $value);
            assert_eq!(a.fetch_nand(!0 as $value, Ordering::Relaxed), 8 as $value);
            assert_eq!(a.fetch_max(20 as $value, Ordering::Relaxed), !8 as $value);
            let before = a.load(Ordering::Relaxed);
            assert_eq!(a.fetch_min(3 as $value, Ordering::Relaxed), before);
            assert_eq!(format!("{a:?}"), format!("{:?}", a.load(Ordering::Relaxed)));
            assert_eq!(<$atomic>::default().into_inner(), 0 as $value);
            assert_eq!(<$atomic>::from(4 as $value).into_inner(), 4 as $value);
            #[cfg(not(loom))]
            {
                let mut b = <$atomic>::new(1 as $value);
                *b.get_mut() += 1 as $value;
                assert_eq!(b.into_inner(), 2 as $value);
            }
            #[cfg(not(any(loom, feature = "shuttle")))]
            {
                let c = <$atomic>::new(3 as $value);
                // SAFETY: `as_ptr` points at `c`'s value, used only atomically here.
                let d = unsafe { <$atomic>::from_ptr(c.as_ptr()) };
                assert_eq!(d.fetch_add(1 as $value, Ordering::SeqCst), 3 as $value);
                assert_eq!(c.into_inner(), 4 as $value);
            }
        }
    )*};
}

fn every_atomic_method() {
    every_method! {
        AtomicU8 u8; AtomicU16 u16; AtomicU32 u32; AtomicU64 u64; AtomicUsize usize;
        AtomicI8 i8; AtomicI16 i16; AtomicI32 i32; AtomicI64 i64; AtomicIsize isize;
    }

    let b = AtomicBool::new(false);
    assert!(!b.fetch_not(Ordering::SeqCst));
    assert!(b.fetch_and(false, Ordering::SeqCst));
    assert!(!b.fetch_or(true, Ordering::SeqCst));
    assert!(b.fetch_xor(true, Ordering::SeqCst));
    assert!(!b.fetch_nand(true, Ordering::SeqCst));
    assert_eq!(
        b.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(!v)),
        Ok(true)
    );
    assert!(!b.swap(true, Ordering::SeqCst));
    assert_eq!(
        b.compare_exchange(true, false, Ordering::SeqCst, Ordering::SeqCst),
        Ok(true)
    );
    assert_eq!(format!("{b:?}"), "false");
    assert!(!AtomicBool::default().into_inner());
    assert!(AtomicBool::from(true).into_inner());

    let mut slots = [1u32, 2];
    let [first, second] = &mut slots;
    let (first, second): (*mut u32, *mut u32) = (first, second);
    let p = AtomicPtr::new(first);
    assert_eq!(p.load(Ordering::Acquire), first);
    assert_eq!(p.swap(second, Ordering::AcqRel), first);
    assert_eq!(
        p.compare_exchange(first, second, Ordering::AcqRel, Ordering::Acquire),
        Err(second)
    );
    assert_eq!(
        p.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |_| Some(first)),
        Ok(second)
    );
    p.store(ptr::null_mut(), Ordering::Release);
    assert!(AtomicPtr::<u32>::default().into_inner().is_null());
    assert_eq!(AtomicPtr::from(second).into_inner(), second);
    assert_eq!(format!("{p:?}"), format!("{:?}", ptr::null_mut::<u32>()));
    assert_eq!(format!("{p:p}"), format!("{:p}", ptr::null_mut::<u32>()));
    #[cfg(not(loom))]
    {
        let mut q = AtomicPtr::new(first);
        *q.get_mut() = second;
        assert_eq!(q.into_inner(), second);
    }
    ratelimit_lab_api::sync::atomic::fence(Ordering::SeqCst);
    ratelimit_lab_api::sync::atomic::compiler_fence(Ordering::SeqCst);
}

#[test]
fn every_atomic_type_has_std_methods() {
    explore(every_atomic_method);
}

fn once_cells_and_barrier() {
    let cell = OnceLock::new();
    assert_eq!(format!("{cell:?}"), "OnceLock(<uninit>)");
    assert_eq!(cell.get(), None);
    assert_eq!(cell.set(1), Ok(()));
    assert_eq!(cell.set(2), Err(2));
    assert_eq!(*cell.get_or_init(|| 3), 1);
    assert_eq!(*cell.wait(), 1);
    assert_eq!(format!("{cell:?}"), "OnceLock(1)");
    let mut copy = cell.clone();
    assert_eq!(copy, cell);
    *copy.get_mut().unwrap() = 4;
    assert_eq!(copy.take(), Some(4));
    assert_eq!(copy.get(), None);
    assert_eq!(OnceLock::from(5).into_inner(), Some(5));
    assert_eq!(OnceLock::<u8>::default().into_inner(), None);

    let base = 20;
    let lazy = LazyLock::new(move || base + 1);
    assert_eq!(format!("{lazy:?}"), "LazyLock(<uninit>)");
    assert_eq!(*LazyLock::force(&lazy), 21);
    assert_eq!(*lazy, 21);
    assert_eq!(format!("{lazy:?}"), "LazyLock(21)");
    assert_eq!(*LazyLock::<Vec<u8>>::default(), Vec::<u8>::new());

    let once = Once::new();
    assert!(!once.is_completed());
    once.call_once_force(|state| assert!(!state.is_poisoned()));
    once.call_once(|| unreachable!("ran already"));
    assert!(once.is_completed());

    assert!(Barrier::new(1).wait().is_leader());

    let lock = Mutex::new(true);
    let changed = Condvar::new();
    let (guard, result) = changed
        .wait_timeout_while(
            lock.lock().unwrap(),
            std::time::Duration::from_secs(1),
            |done| !*done,
        )
        .unwrap();
    assert!(!result.timed_out());
    drop(guard);
}

#[test]
fn once_cells_barrier_and_condvar_behave_as_std() {
    explore(once_cells_and_barrier);
}
