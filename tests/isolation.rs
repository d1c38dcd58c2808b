//! A design that panics or hangs fails the check it is in, with its message or a timeout,
//! and nothing else: the runner isolates every check.
use std::time::Duration;

use ratelimit_lab::suite::{run_check, run_check_within, Status};
use ratelimit_lab::suspects;
use ratelimit_lab::{Decision, LimitError, Limiter, Policy};
#[cfg(not(any(loom, feature = "shuttle")))]
use ratelimit_lab_catalog::mistakes::FixedWindowBucket;
use ratelimit_lab_reference::TokenBucket;

/// The reference, except that `allow` panics on one key.
#[derive(Debug)]
struct PanicsOnKeyB(TokenBucket);

impl Limiter for PanicsOnKeyB {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        TokenBucket::new(policy, max_keys).map(PanicsOnKeyB)
    }
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        assert_ne!(key, "b", "the design gave up on key b");
        self.0.allow(key, cost, now)
    }
    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        self.0.evict_full(now)
    }
    fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected, now)
    }
    fn key_count(&self) -> usize {
        self.0.key_count()
    }
}

/// A design (the reference unless given), except that `evict_full` never returns.
#[derive(Debug)]
struct EvictionHangs<D = TokenBucket>(D);

impl<D: Limiter> Limiter for EvictionHangs<D> {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        D::new(policy, max_keys).map(EvictionHangs)
    }
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        self.0.allow(key, cost, now)
    }
    fn evict_full(&self, _now: u64) -> Result<usize, LimitError> {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
        self.0.replace_policy(next, expected, now)
    }
    fn key_count(&self) -> usize {
        self.0.key_count()
    }
}

/// The catalogued `FixedWindowBucket` whose `evict_full` never returns: a sequential check
/// fails at once, a catalogued design reproduces the failure, and checking that design
/// against this one runs this one on traces that evict.
#[cfg(not(any(loom, feature = "shuttle")))]
type WrongAndEvictionHangs = EvictionHangs<FixedWindowBucket>;

/// The diagnosis runs the design beyond the check's own calls; where it hangs there, the
/// failure is reported undiagnosed after the check's limit, never as a hung test.
#[cfg(not(any(loom, feature = "shuttle")))]
#[test]
fn a_hang_in_the_diagnosis_leaves_the_failure_undiagnosed() {
    // The check itself takes microseconds; the limit bounds the diagnosis, which always
    // reaches the hang (the catalogued design reproduces the failure and departs on the
    // eviction probe), so the test takes the limit.
    let r = run_check_within::<WrongAndEvictionHangs>(
        "seed_trace_table",
        Duration::from_secs(5),
        suspects(),
    );
    let Status::Failed(f) = &r.status else {
        panic!("expected a failure, got {:?}", r.status)
    };
    assert!(!f.panicked, "{f:?}");
    assert_eq!(r.mistake(), None, "no diagnosis came back");
}

#[test]
fn a_panic_fails_only_its_check_with_the_message_and_the_trace() {
    let r = run_check::<PanicsOnKeyB>("r1_new_key_starts_full", suspects());
    let Status::Failed(f) = &r.status else {
        panic!("expected a failure, got {:?}", r.status)
    };
    assert!(f.panicked);
    assert!(
        f.summary.contains("the design gave up on key b"),
        "{}",
        f.summary
    );
    // The check's two calls (key "a", then key "b") shrink to the one that panics.
    assert_eq!(
        f.trace.len(),
        1,
        "the trace is shrunk to the panicking step"
    );
    assert!(f.trace[0].action.contains("\"b\""), "{:?}", f.trace);
    assert!(f.trace[0].got.contains("panicked"), "{:?}", f.trace);
    assert_eq!(r.mistake(), None, "a panic resembles no particular mistake");
    let text = r.explain("cargo test -- --exact r1_new_key_starts_full");
    assert!(text.contains("to rerun it: cargo test -- --exact r1_new_key_starts_full"));
    // In std mode the panic printed nothing on its own; the report says where it happened.
    if !cfg!(any(loom, feature = "shuttle")) {
        assert!(
            text.contains("the first panic happened at tests/isolation.rs:"),
            "{text}"
        );
    }
    // A check that never touches key "b" is unaffected.
    assert!(run_check::<PanicsOnKeyB>("seed_trace_table", suspects()).passed());
}

#[test]
fn a_hang_times_out_that_check_alone() {
    // The hang never ends, so the limit always strikes; the check that never evicts gets a
    // limit no loaded machine comes near.
    let r = run_check_within::<EvictionHangs>(
        "r3_evict_full_drops_only_full_buckets",
        Duration::from_secs(1),
        suspects(),
    );
    let Status::TimedOut {
        limit_secs,
        call,
        waiting,
    } = &r.status
    else {
        panic!("expected a timeout, got {:?}", r.status)
    };
    assert_eq!((*limit_secs, waiting.len()), (1, 0));
    assert!(
        call.starts_with("evict_full(at "),
        "the call is named: {call}"
    );
    let text = r.explain("x");
    assert!(
        text.contains(&format!("{call} did not return within 1 s")),
        "{text}"
    );
    assert!(
        text.contains("none of the check's threads waits in a lock"),
        "a sleep is not a wait the facade sees: {text}"
    );
    let r =
        run_check_within::<EvictionHangs>("seed_trace_table", Duration::from_secs(600), suspects());
    assert!(r.passed(), "{:?}", r.status);
}

#[test]
fn an_unknown_check_is_reported_not_panicked() {
    let r = run_check::<TokenBucket>("r9_no_such_check", suspects());
    let Status::Failed(f) = &r.status else {
        panic!("expected a failure")
    };
    assert!(
        f.summary.contains("r1_fractional_credit_is_kept"),
        "lists the known checks"
    );
}

/// Deadlocks on the facade's locks, to show that a hang is reported as which threads wait on
/// what (real threads only: shuttle and loom report a deadlock themselves).
#[cfg(not(any(loom, feature = "shuttle")))]
mod deadlocks {
    use super::*;
    use ratelimit_lab::suite::CheckResult;
    use ratelimit_lab::sync::{mpsc, thread, Arc, Mutex};

    /// The reference behind a lock that `evict_full` takes twice.
    #[derive(Debug)]
    struct LocksTwice(Mutex<TokenBucket>);

    impl Limiter for LocksTwice {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
            TokenBucket::new(policy, max_keys).map(|b| LocksTwice(Mutex::new(b)))
        }
        fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
            let b = self.0.lock().unwrap_or_else(|p| p.into_inner());
            b.allow(key, cost, now)
        }
        fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
            let _held = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let b = self.0.lock().unwrap_or_else(|p| p.into_inner());
            b.evict_full(now)
        }
        fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
            let b = self.0.lock().unwrap_or_else(|p| p.into_inner());
            b.replace_policy(next, expected, now)
        }
        fn key_count(&self) -> usize {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).key_count()
        }
    }

    /// The reference, whose `evict_full` takes two locks in one order on the calling thread
    /// and in the other on a helper thread, each waiting until the other holds its first.
    #[derive(Debug)]
    struct OppositeOrders {
        bucket: TokenBucket,
        first: Arc<Mutex<()>>,
        second: Arc<Mutex<()>>,
    }

    impl Limiter for OppositeOrders {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
            Ok(OppositeOrders {
                bucket: TokenBucket::new(policy, max_keys)?,
                first: Arc::new(Mutex::new(())),
                second: Arc::new(Mutex::new(())),
            })
        }
        fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
            self.bucket.allow(key, cost, now)
        }
        fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
            let _first = self.first.lock().unwrap_or_else(|p| p.into_inner());
            let (tx, rx) = mpsc::channel();
            let (first, second) = (Arc::clone(&self.first), Arc::clone(&self.second));
            let _helper = thread::spawn(move || {
                let _second = second.lock().unwrap_or_else(|p| p.into_inner());
                let _ = tx.send(());
                let _first = first.lock().unwrap_or_else(|p| p.into_inner());
            });
            let _ = rx.recv();
            let _second = self.second.lock().unwrap_or_else(|p| p.into_inner());
            self.bucket.evict_full(now)
        }
        fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
            self.bucket.replace_policy(next, expected, now)
        }
        fn key_count(&self) -> usize {
            self.bucket.key_count()
        }
    }

    /// The reference, whose `evict_full` waits for a reply nobody sends.
    #[derive(Debug)]
    struct ReplyNeverComes(TokenBucket);

    impl Limiter for ReplyNeverComes {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
            TokenBucket::new(policy, max_keys).map(ReplyNeverComes)
        }
        fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
            self.0.allow(key, cost, now)
        }
        fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
            let (_reply_to, replies) = mpsc::channel::<usize>();
            replies.recv().or_else(|_| self.0.evict_full(now))
        }
        fn replace_policy(&self, next: Policy, expected: u64, now: u64) -> Result<(), LimitError> {
            self.0.replace_policy(next, expected, now)
        }
        fn key_count(&self) -> usize {
            self.0.key_count()
        }
    }

    /// `r3_evict_full_drops_only_full_buckets` (the check that calls `evict_full`) on `L`,
    /// within 3 s, and the threads it reports waiting. The hang is certain, so the limit
    /// always strikes; the threads block within microseconds of the check's start.
    fn hang<L: Limiter>() -> (CheckResult, Vec<String>) {
        let r = run_check_within::<L>(
            "r3_evict_full_drops_only_full_buckets",
            Duration::from_secs(3),
            suspects(),
        );
        let waiting = match &r.status {
            Status::TimedOut { waiting, .. } => waiting.clone(),
            other => panic!("expected a timeout, got {other:?}"),
        };
        (r, waiting)
    }

    #[test]
    fn a_lock_taken_twice_is_reported_as_a_thread_waiting_on_itself() {
        let (r, waiting) = hang::<LocksTwice>();
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        assert!(
            waiting[0].starts_with(
                "thread 'check r3_evict_full_drops_only_full_buckets' waits in Mutex::lock on Mutex #1, which it holds itself (for "
            ),
            "{waiting:?}"
        );
        let text = r.explain("x");
        assert!(
            text.contains("the design hangs. The check's threads blocked then:"),
            "{text}"
        );
        assert!(text.contains("took it twice"), "{text}");
        assert!(!text.contains("taken in different orders"), "{text}");
    }

    #[test]
    fn locks_taken_in_opposite_orders_are_reported_as_two_threads_waiting_on_each_other() {
        let (r, waiting) = hang::<OppositeOrders>();
        assert_eq!(waiting.len(), 2, "{waiting:?}");
        // The lock numbers follow who began to wait first, which the threads decide.
        let helper = waiting
            .iter()
            .find(|w| w.starts_with("an unnamed thread"))
            .unwrap_or_else(|| panic!("the helper thread waits: {waiting:?}"));
        let check = waiting
            .iter()
            .find(|w| w.starts_with("thread 'check r3_evict_full_drops_only_full_buckets'"))
            .unwrap_or_else(|| panic!("the check's thread waits: {waiting:?}"));
        assert!(
            helper.contains(", held by thread 'check r3_evict_full_drops_only_full_buckets'"),
            "{helper}"
        );
        assert!(check.contains(", held by an unnamed thread"), "{check}");
        let text = r.explain("x");
        assert!(text.contains("taken in different orders"), "{text}");
        assert!(!text.contains("took it twice"), "{text}");
        assert_ne!(
            helper.split(", held").next().map(|s| &s[s.len() - 2..]),
            check.split(", held").next().map(|s| &s[s.len() - 2..]),
            "they wait on different locks: {waiting:?}"
        );
    }

    #[test]
    fn a_reply_that_never_comes_is_reported_as_a_thread_waiting_in_recv() {
        let (r, waiting) = hang::<ReplyNeverComes>();
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        assert!(
            waiting[0].starts_with(
                "thread 'check r3_evict_full_drops_only_full_buckets' waits in Receiver::recv on Receiver #1 (for "
            ),
            "{waiting:?}"
        );
        let text = r.explain("x");
        assert!(
            text.contains("waits for a message that no thread sends"),
            "{text}"
        );
    }
}

#[path = "explore/isolation.rs"]
mod in_every_mode;

#[test]
fn a_call_that_never_returns_is_named_within_the_limit() {
    in_every_mode::a_call_that_never_returns_is_named_within_the_limit();
}

#[test]
fn a_panicking_drop_fails_its_checks_and_every_check_reports() {
    in_every_mode::a_panicking_drop_fails_its_checks_and_every_check_reports();
}
