//! Who waits for what, under the `std` backend: the threads blocked in a lock, a condition
//! variable, a barrier, a `Once` or `OnceLock`'s `wait` or a channel's `recv` of this facade, each with the object it waits on and the thread that last took
//! that object (named when it waits too, as in a deadlock), so that a check that runs out of time can say which threads wait instead of
//! only that it hung.
//!
//! A lock is tried first; only a thread that finds it taken records itself (one global lock
//! taken when it starts to wait and once when it stops), so an uncontended acquisition costs
//! one thread-local read and one relaxed store (the acquirer's number, kept in the lock), and
//! only once the suite watches (some thread joined a group): before that, one relaxed load. The
//! acquirer is not cleared at release: for a lock some thread waits on, the thread that last
//! took it is the one that holds it (for a read lock, one of the readers; a mutex retaken by
//! `Condvar::wait` keeps the taker before the wait).
//!
//! A thread belongs to the group its spawner belonged to when it was spawned through
//! [`thread::spawn`](super::thread::spawn); the suite puts each check's thread in a group
//! named after the check and asks, when the check runs out of time, who waits in that group.
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The threads blocked now, by the number of their record.
static WAITING: std::sync::Mutex<BTreeMap<u64, Entry>> = std::sync::Mutex::new(BTreeMap::new());
/// The number the next record, or the next thread asking for its own number, gets.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// One blocked thread.
struct Entry {
    thread: u64,
    /// The thread's handle (a reference count): named only when a report asks.
    handle: std::thread::Thread,
    group: Option<Arc<str>>,
    what: &'static str,
    object: usize,
    holder: u64,
    since: Instant,
}

std::thread_local! {
    /// The calling thread's number, `0` until it first needs one.
    static ME: Cell<u64> = const { Cell::new(0) };
    /// The group the calling thread belongs to, if any.
    static GROUP: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

/// Whether any thread of this process has joined a group ([`join_group`]): the suite is
/// running checks here, and a report may ask who holds a lock. Until then locks do not record
/// their takers, so a process that only uses the designs pays one relaxed load per
/// acquisition and no thread-local access.
static WATCHED: AtomicBool = AtomicBool::new(false);

/// Records the calling thread as the last taker of a lock (see the module docs), once the
/// suite is watching.
#[inline(always)]
pub(super) fn record_taker(taker: &AtomicU64) {
    if WATCHED.load(Ordering::Relaxed) {
        record_watched(taker);
    }
}

#[cold]
#[inline(never)]
fn record_watched(taker: &AtomicU64) {
    taker.store(me(), Ordering::Relaxed);
}

/// The calling thread's number, never `0`.
pub(super) fn me() -> u64 {
    ME.with(|me| match me.get() {
        0 => {
            let number = NEXT.fetch_add(1, Ordering::Relaxed);
            me.set(number);
            number
        }
        number => number,
    })
}

/// The group of the calling thread, for a thread it spawns.
pub(super) fn group() -> Option<Arc<str>> {
    GROUP.with(|g| g.borrow().clone())
}

/// Puts the calling thread in group `name` until the guard is dropped.
#[must_use = "the thread leaves the group when the guard is dropped"]
pub fn join_group(name: &str) -> Member {
    WATCHED.store(true, Ordering::Relaxed);
    let before = GROUP.with(|g| g.replace(Some(Arc::from(name))));
    Member { before }
}

/// Puts the calling thread back in group `group` (a spawned thread, in its spawner's).
pub(super) fn rejoin(group: Option<Arc<str>>) -> Member {
    let before = GROUP.with(|g| g.replace(group));
    Member { before }
}

/// The calling thread stays in its group while this is alive (see [`join_group`]).
#[derive(Debug)]
pub struct Member {
    before: Option<Arc<str>>,
}

impl Drop for Member {
    fn drop(&mut self) {
        let before = self.before.take();
        GROUP.with(|g| *g.borrow_mut() = before);
    }
}

/// Records the calling thread as blocked in `what` on `object` (taken last by `holder`, `0`
/// for none) until the returned record is dropped.
pub(super) fn blocked(what: &'static str, object: usize, holder: u64) -> Blocked {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let entry = Entry {
        thread: me(),
        handle: std::thread::current(),
        group: group(),
        what,
        object,
        holder,
        since: Instant::now(),
    };
    WAITING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, entry);
    Blocked { id }
}

/// A thread's record of being blocked (see [`blocked`]).
pub(super) struct Blocked {
    id: u64,
}

impl Drop for Blocked {
    fn drop(&mut self) {
        WAITING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// A thread blocked in the facade.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The blocked thread: `thread 'name'`, or an unnamed one with its id.
    pub thread: String,
    /// Where it blocks: `Mutex::lock`, `RwLock::read`, `RwLock::write`, `Condvar::wait`,
    /// `Receiver::recv`, `Barrier::wait`, `Once::wait` or `OnceLock::wait`.
    pub what: &'static str,
    /// Objects numbered from 1 in the order they first appear in the list, so that two
    /// threads waiting on the same lock show the same number.
    pub object: usize,
    /// The thread that took the lock last and so holds it (for a read lock, one of the
    /// readers); `None` for a condition variable or a channel.
    pub holder: Option<String>,
    /// How long it has waited.
    pub waited: Duration,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.what.split("::").next().unwrap_or(self.what);
        write!(
            f,
            "{} waits in {} on {kind} #{}",
            self.thread, self.what, self.object
        )?;
        match &self.holder {
            Some(holder) if *holder == self.thread => write!(f, ", which it holds itself")?,
            Some(holder) => write!(f, ", held by {holder}")?,
            None => {}
        }
        write!(f, " (for {:.1} s)", self.waited.as_secs_f64())
    }
}

/// The threads of group `name` blocked now, longest waiting first.
pub fn waiting_in(name: &str) -> Vec<Waiting> {
    let waiting = WAITING.lock().unwrap_or_else(|p| p.into_inner());
    // A holder's name is known when it waits too (a deadlock); otherwise it runs on, or it
    // ended with the lock still taken (a guard forgotten).
    let name_of = |n: u64| {
        waiting.values().find(|e| e.thread == n).map_or_else(
            || "a thread that is not waiting here".to_string(),
            |e| thread_name(&e.handle),
        )
    };
    let mut entries: Vec<&Entry> = waiting
        .values()
        .filter(|e| e.group.as_deref() == Some(name))
        .collect();
    entries.sort_by_key(|e| e.since);
    let mut objects: Vec<usize> = Vec::new();
    entries
        .into_iter()
        .map(|e| {
            let object = match objects.iter().position(|&o| o == e.object) {
                Some(i) => i + 1,
                None => {
                    objects.push(e.object);
                    objects.len()
                }
            };
            Waiting {
                thread: thread_name(&e.handle),
                what: e.what,
                object,
                holder: (e.holder != 0).then(|| name_of(e.holder)),
                waited: e.since.elapsed(),
            }
        })
        .collect()
}

/// How a report names a thread: `thread 'name'`, or an unnamed one with its id.
fn thread_name(thread: &std::thread::Thread) -> String {
    match thread.name() {
        Some(name) => format!("thread '{name}'"),
        None => format!("an unnamed thread ({:?})", thread.id()),
    }
}

/// The address of `value`, as the identity of a lock or condition variable.
pub(super) fn address<T: ?Sized>(value: &T) -> usize {
    (value as *const T).cast::<u8>() as usize
}

#[cfg(test)]
mod tests {
    use super::super::{thread, Condvar, Mutex};
    use super::*;

    /// Polls `waiting_in(group)` until it lists `n` threads (they block within microseconds;
    /// the bound only turns a broken record into a failure instead of a hang).
    fn until_waiting(group: &str, n: usize) -> Vec<Waiting> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let waiting = waiting_in(group);
            if waiting.len() == n || Instant::now() > deadline {
                return waiting;
            }
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_blocked_thread_is_listed_in_its_spawners_group_until_it_gets_the_lock() {
        let _member = join_group("waits test: lock");
        let lock = Arc::new(Mutex::new(0u32));
        let held = lock.lock().unwrap_or_else(|p| p.into_inner());
        let child = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1)
        };
        let waiting = until_waiting("waits test: lock", 1);
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        let w = &waiting[0];
        assert!(w.thread.starts_with("an unnamed thread"), "{w}");
        assert_eq!((w.what, w.object), ("Mutex::lock", 1));
        assert_eq!(
            w.holder.as_deref(),
            Some("a thread that is not waiting here")
        );
        assert!(
            w.to_string().contains(
                "waits in Mutex::lock on Mutex #1, held by a thread that is not waiting here (for "
            ),
            "{w}"
        );
        assert!(waiting_in("another group").is_empty());
        drop(held);
        assert!(child.join().is_ok());
        assert!(
            waiting_in("waits test: lock").is_empty(),
            "the record ends with the wait"
        );
    }

    #[test]
    fn a_thread_waiting_on_a_condition_variable_is_listed_without_a_holder() {
        let _member = join_group("waits test: condvar");
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let child = {
            let pair = Arc::clone(&pair);
            thread::spawn(move || {
                let (ready, condvar) = &*pair;
                let guard = ready.lock().unwrap_or_else(|p| p.into_inner());
                let _guard = condvar
                    .wait_while(guard, |ready| !*ready)
                    .unwrap_or_else(|p| p.into_inner());
            })
        };
        let waiting = until_waiting("waits test: condvar", 1);
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        assert_eq!(
            (waiting[0].what, waiting[0].holder.as_ref()),
            ("Condvar::wait", None)
        );
        let (ready, condvar) = &*pair;
        *ready.lock().unwrap_or_else(|p| p.into_inner()) = true;
        condvar.notify_all();
        assert!(child.join().is_ok());
        assert!(waiting_in("waits test: condvar").is_empty());
    }

    #[test]
    fn a_thread_waiting_for_a_message_is_listed_until_it_arrives() {
        let _member = join_group("waits test: channel");
        let (tx, rx) = super::super::mpsc::channel::<u32>();
        let child = thread::spawn(move || rx.recv().ok());
        let waiting = until_waiting("waits test: channel", 1);
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        assert_eq!(
            (waiting[0].what, waiting[0].holder.as_ref()),
            ("Receiver::recv", None)
        );
        assert!(
            waiting[0]
                .to_string()
                .contains("waits in Receiver::recv on Receiver #1 (for "),
            "{}",
            waiting[0]
        );
        assert!(tx.send(7).is_ok());
        assert_eq!(child.join().ok(), Some(Some(7)));
        assert!(waiting_in("waits test: channel").is_empty());
    }
}
