//! The design's calls in flight: a check fails for time only when one of them has not
//! returned within the limit (a hang), and the failure names that call.
//!
//! Every instance the suite builds is a [`Watched`] design: each of its calls (`new`,
//! `allow`, `evict_full`, `replace_policy`, `key_count`, `snapshot`, and its `Drop`) is
//! recorded, with the instant it began, in a slot of the calling OS thread, under the group of
//! the check that made it. The runner polls [`overdue`] for its group while the check runs.
//! Recording takes no lock that two of the design's threads share (each OS thread has its
//! own slot), so it does not serialize the calls it watches.
//!
//! `Watched` also keeps a panic in the design's `Drop` from ending the process: a design
//! dropped while another panic unwinds (a loom or shuttle execution that failed) and
//! panicking again would abort. The panic is caught, recorded for the check, and reported as
//! that check's failure ([`drop_panics`]).
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::{Decision, LimitError, Limiter, Policy, Snapshot};

/// One of the design's calls, in words when it is reported.
#[derive(Clone, Debug)]
enum Call {
    New(Policy, usize),
    Allow(KeyText, u64, u64),
    EvictFull(u64),
    ReplacePolicy(Policy, u64, u64),
    KeyCount,
    Snapshot,
    Drop,
}

/// The first bytes of a key, copied without allocating.
#[derive(Clone, Copy, Debug)]
struct KeyText {
    bytes: [u8; 24],
    len: usize,
    whole: bool,
}

impl KeyText {
    fn of(key: &str) -> KeyText {
        let mut end = key.len().min(24);
        while !key.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; 24];
        bytes[..end].copy_from_slice(&key.as_bytes()[..end]);
        KeyText {
            bytes,
            len: end,
            whole: end == key.len(),
        }
    }

    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes[..self.len]);
        if self.whole {
            format!("{text:?}")
        } else {
            format!("{text:?}…")
        }
    }
}

impl Call {
    fn describe(&self) -> String {
        match self {
            Call::New(p, max_keys) => format!(
                "new(v{}, capacity {}, {} tokens/s; max_keys {max_keys})",
                p.version(),
                p.capacity(),
                p.tokens_per_second()
            ),
            Call::Allow(key, cost, now) => {
                format!("allow({}, cost {cost}, at {now} ns)", key.text())
            }
            Call::EvictFull(now) => format!("evict_full(at {now} ns)"),
            Call::ReplacePolicy(p, expected, now) => format!(
                "replace_policy(v{}: capacity {}, {} tokens/s; expecting v{expected}, at {now} ns)",
                p.version(),
                p.capacity(),
                p.tokens_per_second()
            ),
            Call::KeyCount => "key_count()".to_string(),
            Call::Snapshot => "snapshot()".to_string(),
            Call::Drop => "drop (the design's Drop)".to_string(),
        }
    }
}

/// A call in flight.
struct InFlight {
    id: u64,
    group: u64,
    call: Call,
    since: Instant,
}

/// The calls in flight on one OS thread (under shuttle and loom, every controlled thread of
/// an execution runs on the check's OS thread, so several may be in flight at once).
#[derive(Default)]
struct Slot {
    calls: Mutex<Vec<InFlight>>,
}

/// Every thread's slot, for the runner's poll.
static SLOTS: Mutex<Vec<Weak<Slot>>> = Mutex::new(Vec::new());

/// Call ids and group ids.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The panics of designs' `Drop`, by group.
static DROP_PANICS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());

std::thread_local! {
    /// The group of the check this thread works for (`0`: none, calls are not recorded).
    static GROUP: Cell<u64> = const { Cell::new(0) };
    /// This thread's slot, registered on first use.
    static SLOT: RefCell<Option<Arc<Slot>>> = const { RefCell::new(None) };
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A new group, for one run of one check.
pub(crate) fn new_group() -> u64 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The calling thread's group (`0`: none).
pub(crate) fn group() -> u64 {
    GROUP.with(Cell::get)
}

/// Puts the calling thread in `group` until the returned guard is dropped; a thread the
/// suite starts for a check adopts its spawner's group.
pub(crate) fn adopt(group: u64) -> Member {
    Member(GROUP.with(|g| g.replace(group)))
}

/// Membership of a group; dropping it restores the thread's previous group.
pub(crate) struct Member(u64);

impl Drop for Member {
    fn drop(&mut self) {
        GROUP.with(|g| g.set(self.0));
    }
}

fn slot() -> Arc<Slot> {
    SLOT.with(|s| {
        s.borrow_mut()
            .get_or_insert_with(|| {
                let slot = Arc::new(Slot::default());
                let mut all = lock(&SLOTS);
                all.retain(|w| w.strong_count() > 0);
                all.push(Arc::downgrade(&slot));
                slot
            })
            .clone()
    })
}

/// A recorded call; dropping it (when the call returns or unwinds) removes the record.
struct Entered(Option<(Arc<Slot>, u64)>);

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some((slot, id)) = self.0.take() {
            lock(&slot.calls).retain(|c| c.id != id);
        }
    }
}

fn enter(call: impl FnOnce() -> Call) -> Entered {
    let group = group();
    if group == 0 {
        return Entered(None);
    }
    let slot = slot();
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    lock(&slot.calls).push(InFlight {
        id,
        group,
        call: call(),
        since: Instant::now(),
    });
    Entered(Some((slot, id)))
}

/// Forgets the calls of the calling thread's group recorded on this OS thread: a new
/// controlled execution begins, and an execution the backend abandoned (a deadlock it
/// reported) may have left calls that never returned and never will.
pub(crate) fn fresh_execution() {
    let group = group();
    if group == 0 {
        return;
    }
    SLOT.with(|s| {
        if let Some(slot) = s.borrow().as_ref() {
            lock(&slot.calls).retain(|c| c.group != group);
        }
    });
}

/// The oldest call of `group` in flight for longer than `limit`, in words, with how long.
pub(crate) fn overdue(group: u64, limit: Duration) -> Option<(String, Duration)> {
    let slots: Vec<Arc<Slot>> = lock(&SLOTS).iter().filter_map(Weak::upgrade).collect();
    let now = Instant::now();
    slots
        .iter()
        .flat_map(|slot| {
            lock(&slot.calls)
                .iter()
                .filter(|c| c.group == group)
                .map(|c| (c.call.clone(), now.saturating_duration_since(c.since)))
                .collect::<Vec<_>>()
        })
        .filter(|(_, age)| *age >= limit)
        .max_by_key(|(_, age)| *age)
        .map(|(call, age)| (call.describe(), age))
}

/// The panics of the design's `Drop` recorded for `group`, taken.
pub(crate) fn drop_panics(group: u64) -> Vec<String> {
    let mut all = lock(&DROP_PANICS);
    let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(g, _)| *g == group);
    *all = rest;
    mine.into_iter().map(|(_, why)| why).collect()
}

/// A design whose calls are recorded while they run (see the module docs).
pub(crate) struct Watched<L: Limiter> {
    inner: Option<L>,
}

impl<L: Limiter> Watched<L> {
    fn inner(&self) -> &L {
        match &self.inner {
            Some(inner) => inner,
            // Only `drop` takes it, and nothing calls a design being dropped.
            None => unreachable!("a design is called after its drop"),
        }
    }
}

impl<L: Limiter> Limiter for Watched<L> {
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
        let _call = enter(|| Call::New(policy, max_keys));
        L::new(policy, max_keys).map(|l| Watched { inner: Some(l) })
    }

    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
        let _call = enter(|| Call::Allow(KeyText::of(key), cost, now));
        self.inner().allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, LimitError> {
        let _call = enter(|| Call::EvictFull(now));
        self.inner().evict_full(now)
    }

    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError> {
        let _call = enter(|| Call::ReplacePolicy(next, expected_version, now));
        self.inner().replace_policy(next, expected_version, now)
    }

    fn key_count(&self) -> usize {
        let _call = enter(|| Call::KeyCount);
        self.inner().key_count()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        let _call = enter(|| Call::Snapshot);
        self.inner().snapshot()
    }
}

impl<L: Limiter> Drop for Watched<L> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let _call = enter(|| Call::Drop);
        if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(inner))) {
            let why = crate::suite::core::panics::panic_message(payload.as_ref());
            // Outside a check (a diagnosis replaying the design) nobody would take it.
            if group() != 0 {
                lock(&DROP_PANICS).push((group(), why));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::TokenBucket;

    #[test]
    fn a_call_in_flight_is_overdue_after_the_limit_and_named() {
        let group = new_group();
        let _member = adopt(group);
        let call = enter(|| Call::Allow(KeyText::of("k"), 1, 500));
        assert!(overdue(group, Duration::from_secs(3600)).is_none());
        let (what, _) = overdue(group, Duration::ZERO).expect("in flight");
        assert_eq!(what, "allow(\"k\", cost 1, at 500 ns)");
        assert!(
            overdue(new_group(), Duration::ZERO).is_none(),
            "another group's"
        );
        drop(call);
        assert!(overdue(group, Duration::ZERO).is_none(), "returned");
    }

    #[test]
    fn a_fresh_execution_forgets_calls_that_never_returned() {
        let group = new_group();
        let _member = adopt(group);
        let abandoned = enter(|| Call::KeyCount);
        fresh_execution();
        assert!(overdue(group, Duration::ZERO).is_none());
        drop(abandoned);
    }

    #[test]
    fn a_long_key_is_cut_on_a_character_boundary() {
        let key = "é".repeat(20);
        assert_eq!(KeyText::of(&key).text(), format!("{:?}…", "é".repeat(12)));
    }

    struct PanicsInDrop(TokenBucket);

    impl Limiter for PanicsInDrop {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
            TokenBucket::new(policy, max_keys).map(PanicsInDrop)
        }
        fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
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

    impl Drop for PanicsInDrop {
        fn drop(&mut self) {
            panic!("freed twice");
        }
    }

    #[test]
    fn a_panic_in_drop_while_unwinding_is_recorded_not_an_abort() {
        let group = new_group();
        let _member = adopt(group);
        let unwound = catch_unwind(|| {
            let _design = Watched::<PanicsInDrop>::new(Policy::new(1, 1, 1).expect("valid"), 1)
                .expect("built");
            panic!("the check failed first");
        });
        assert!(unwound.is_err());
        assert_eq!(drop_panics(group), ["freed twice"]);
        assert!(drop_panics(group).is_empty(), "taken");
    }
}
