//! What `tests/loom.rs` and `tests/shuttle.rs` share: the seed's named races as
//! [`Scenario`]s, each run through `ratelimit_lab::explore` (one execution, judged by the
//! suite's linearizability checker against the specification, stored state included) plus a
//! check of what the scenario is about, and the `Clocked` races.
//!
//! Everything here is the work of one execution: it runs inside a backend's runner
//! (`loom::model`, a shuttle `Runner`) and takes its threads and locks from
//! `ratelimit_lab::sync`, which that backend provides. The runners, and the tests that choose
//! one, stay in the two test files.
//!
//! The known-bad designs are the catalogued interleaving-only mistakes: `SplitReadWrite`
//! (admission read and written under two locks), `RacyEvictFull` (cleanup listed and removed
//! under two locks), `RacyKeyBound` (key bound checked and key inserted under two locks),
//! `CheckThenDeduct` (checked under one lock, deducted under another) and `RacyCutover`
//! (policy change built and published under two locks).
//! Each is sequentially identical to the specification on every scenario (checked here), so a
//! failure on them comes from the race alone.
#![allow(dead_code)] // each test binary uses its own part

pub mod isolation;

use ratelimit_lab::explore::{execute, judge, run_sequentially, Event, Execution, Scenario};
use ratelimit_lab::sync::atomic::{AtomicU64, Ordering::SeqCst};
use ratelimit_lab::sync::{thread, Arc, Mutex};
use ratelimit_lab::{Decision, LimitError, Limiter, Mistake, Policy, Snapshot, UNITS_PER_TOKEN};
use ratelimit_lab_catalog::mistakes::{
    CheckThenDeduct, RacyCutover, RacyEvictFull, RacyKeyBound, RacyObservedTime, SplitReadWrite,
    TornSnapshot,
};
use ratelimit_lab_model::{Op, Outcome};
use ratelimit_lab_reference::{
    Clock, Clocked, ClockedShardedBucket, ManualClock, ShardedBucket, TokenBucket,
};

const SECOND: u64 = 1_000_000_000;

fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_owned(),
        cost,
        now,
    }
}

fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
    Policy::new(version, capacity, rate).expect("a valid policy")
}

/// Two racing calls `a` and `b` between an init and a post part.
fn race(policy: Policy, init: Vec<Op>, a: Op, b: Op, post: Vec<Op>) -> Scenario {
    Scenario {
        policy,
        max_keys: 4,
        init,
        threads: vec![vec![a], vec![b]],
        post,
    }
}

/// One execution's results, by role: the two racing outcomes, the post part's, the state.
#[derive(Debug)]
pub struct Observed {
    a: Outcome,
    b: Outcome,
    post: Vec<Outcome>,
    state: Snapshot,
}

impl Observed {
    fn of(scenario: &Scenario, e: &Execution) -> Observed {
        let of_thread = |t: usize| {
            e.history
                .iter()
                .find(|ev| ev.thread == t)
                .map(|ev| ev.outcome.clone())
                .expect("every thread made its call")
        };
        let post = e.history[e.history.len() - scenario.post.len()..]
            .iter()
            .map(|ev| ev.outcome.clone())
            .collect();
        Observed {
            a: of_thread(1),
            b: of_thread(2),
            post,
            state: e.snapshot.clone().expect("the design implements snapshot"),
        }
    }
}

/// The work of one execution for a runner: runs `scenario` on `L`, panics with the checker's
/// explanation ("not linearizable at execution N: …", N being the number the runner passes)
/// when no sequential order explains it, and passes the result to `also`.
pub fn linearizable<L: Limiter>(
    scenario: Scenario,
    also: fn(&Observed),
) -> impl Fn(usize) + Send + Sync + 'static {
    move |execution| {
        let got = execute::<L>(&scenario);
        if let Err(why) = judge(&scenario, &got) {
            panic!("not linearizable at execution {execution}: {why}");
        }
        also(&Observed::of(&scenario, &got));
    }
}

fn allowed(o: &Outcome) -> bool {
    matches!(o, Outcome::Decision(Decision { allowed: true, .. }))
}

/// The last token of one key: two spends of one token at the same instant.
pub fn last_token() -> Scenario {
    race(
        policy(1, 2, 1),
        vec![allow("k", 1, 0)],
        allow("k", 1, 0),
        allow("k", 1, 0),
        vec![],
    )
}

pub fn exactly_one_spends_the_last_token(o: &Observed) {
    assert_eq!(
        usize::from(allowed(&o.a)) + usize::from(allowed(&o.b)),
        1,
        "double spend or lost token: {o:?}"
    );
    assert_eq!(o.state.buckets["k"].units, 0, "{o:?}");
}

/// A spent bucket refills to full at one second while `evict_full` races a spend; the post
/// part shows whether the spend survived (a spent bucket must not come back full).
pub fn evict_vs_allow() -> Scenario {
    race(
        policy(1, 1, 1),
        vec![allow("k", 1, 0)],
        Op::EvictFull { now: SECOND },
        allow("k", 1, SECOND),
        vec![allow("k", 1, SECOND), Op::KeyCount],
    )
}

pub fn the_spend_survives_eviction(o: &Observed) {
    assert!(allowed(&o.b), "{o:?}");
    assert!(!allowed(&o.post[0]), "a spent bucket came back full: {o:?}");
}

/// A cutover (capacity 10 → 20, rate 2 → 4) at half a second races a spend of the one token
/// earned by then; the post part spends the token earned at the new rate.
pub fn replace_vs_allow() -> Scenario {
    race(
        policy(1, 10, 2),
        vec![allow("k", 10, 0), allow("j", 1, 0)],
        Op::ReplacePolicy {
            next: policy(2, 20, 4),
            expected_version: 1,
            now: SECOND / 2,
        },
        allow("k", 1, SECOND / 2),
        vec![allow("k", 1, 3 * SECOND / 4), allow("k", 1, 3 * SECOND / 4)],
    )
}

pub fn the_cutover_keeps_the_spend(o: &Observed) {
    assert_eq!(o.a, Outcome::Replaced);
    assert!(allowed(&o.b), "{o:?}");
    assert!(allowed(&o.post[0]) && !allowed(&o.post[1]), "{o:?}");
    assert_eq!(
        o.state.buckets["j"].units,
        10 * u128::from(UNITS_PER_TOKEN),
        "{o:?}"
    );
}

/// Two cutovers from the same expected version, at different times: exactly one wins.
pub fn replace_vs_replace() -> Scenario {
    race(
        policy(1, 10, 2),
        vec![allow("k", 10, 0)],
        Op::ReplacePolicy {
            next: policy(2, 5, 1),
            expected_version: 1,
            now: SECOND,
        },
        Op::ReplacePolicy {
            next: policy(3, 20, 4),
            expected_version: 1,
            now: 2 * SECOND,
        },
        vec![allow("k", 1, 2 * SECOND)],
    )
}

pub fn one_cutover_wins(o: &Observed) {
    let wins = [&o.a, &o.b]
        .iter()
        .filter(|x| ***x == Outcome::Replaced)
        .count();
    assert_eq!(wins, 1, "{o:?}");
}

pub fn nothing_more(_: &Observed) {}

/// Every scenario above.
pub fn scenarios() -> [Scenario; 4] {
    [
        last_token(),
        evict_vs_allow(),
        replace_vs_allow(),
        replace_vs_replace(),
    ]
}

// ---------------------------------------------------------------------------------------------
// The known-bad designs, sequentially
// ---------------------------------------------------------------------------------------------

/// Asserts that each known-bad design, run on one thread in either order of the racing calls,
/// agrees with the specification at every step of `scenario` (the suite's probe compares
/// outcomes and stored state): so that their failures come from the race and nothing else.
pub fn known_bad_designs_match_the_specification_sequentially(scenario: &Scenario) {
    fn check<L: Limiter>(name: &str, scenario: &Scenario) {
        for pick in [[0, 1], [1, 0]] {
            if let Err(why) = run_sequentially::<L>(scenario, &pick) {
                panic!("{name}, threads in order {pick:?}: {why}");
            }
        }
    }
    check::<SplitReadWrite>("SplitReadWrite", scenario);
    check::<RacyEvictFull>("RacyEvictFull", scenario);
    check::<RacyCutover>("RacyCutover", scenario);
}

// ---------------------------------------------------------------------------------------------
// Clocked: its samples never arrive out of order; caller-sampled ones can
// ---------------------------------------------------------------------------------------------

/// A manual clock shared across the backend's threads.
struct Shared(Arc<ManualClock>);

impl Clock for Shared {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }
}

fn bucket() -> TokenBucket {
    TokenBucket::new(policy(1, 10, 2), 4).unwrap()
}

/// One thread spends through `Clocked` at 100 while another advances the clock to 101, then
/// spends and evicts through it: every call must succeed.
pub fn clocked_race() {
    let clock = Arc::new(ManualClock::new(100));
    let clocked = Arc::new(Clocked::new(bucket(), Shared(Arc::clone(&clock))));
    let c = Arc::clone(&clocked);
    let a = thread::spawn(move || c.allow("k", 1));
    let c = Arc::clone(&clocked);
    let b = thread::spawn(move || {
        clock.advance(1);
        (c.allow("k", 1), c.evict_full())
    });
    let a = a.join().unwrap();
    let (b, evicted) = b.join().unwrap();
    assert!(
        a.is_ok() && b.is_ok() && evicted.is_ok(),
        "{a:?} {b:?} {evicted:?}"
    );
}

/// The same race with each caller sampling the clock itself and passing the time to the
/// bucket: returns how many of the two calls were refused for delivering 100 after 101
/// (panicking on any other error).
pub fn caller_sampled_race() -> usize {
    let clock = Arc::new(ManualClock::new(100));
    let limiter = Arc::new(bucket());
    let (c, l) = (Arc::clone(&clock), Arc::clone(&limiter));
    let a = thread::spawn(move || {
        let now = c.now_nanos();
        l.allow("k", 1, now)
    });
    let b = thread::spawn(move || {
        clock.advance(1);
        let now = clock.now_nanos();
        limiter.allow("k", 1, now)
    });
    let mut backwards = 0;
    for r in [a.join().unwrap(), b.join().unwrap()] {
        match r {
            Ok(_) => {}
            Err(LimitError::TimeWentBackwards {
                now: 100,
                observed: 101,
            }) => backwards += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    backwards
}

/// Two of a few short keys that `shard_index` puts in different shards (the hash has a fixed
/// key under loom and shuttle, so the same two every execution).
fn two_shards(shard_index: impl Fn(&str) -> usize) -> (&'static str, &'static str) {
    const KEYS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
    for x in KEYS {
        for y in KEYS {
            if shard_index(x) != shard_index(y) {
                return (x, y);
            }
        }
    }
    panic!("eight keys in one shard")
}

/// A sharded limiter already tracking two keys it keeps in different shards (new keys would
/// take its key-count lock, which orders them anyway), seen at time 100.
fn sharded() -> (Arc<ShardedBucket>, &'static str, &'static str) {
    let limiter = ShardedBucket::new(policy(1, 10, 2), 4).unwrap();
    let (x, y) = two_shards(|k| limiter.shard_index(k));
    for key in [x, y] {
        assert!(limiter.allow(key, 1, 100).unwrap().allowed);
    }
    (Arc::new(limiter), x, y)
}

/// A clock that moves a quarter second at every reading, so that each reading is later than
/// every one before it, and that remembers which thread took each: the test gives every
/// call the time it read.
#[derive(Debug)]
struct Ticking {
    now: AtomicU64,
    taken: Mutex<Vec<(String, u64)>>,
}

#[derive(Debug)]
struct TickingClock(Arc<Ticking>);

fn this_thread() -> String {
    format!("{:?}", thread::current().id())
}

impl Clock for TickingClock {
    fn now_nanos(&self) -> u64 {
        let t = self.0.now.fetch_add(SECOND / 4, SeqCst) + SECOND / 4;
        self.0.taken.lock().unwrap().push((this_thread(), t));
        t
    }
}

impl Ticking {
    /// The reading the calling thread took since it last asked, if it took one (a call takes
    /// at most one).
    fn taken_by_this_thread(&self) -> Option<u64> {
        let me = this_thread();
        let mut taken = self.taken.lock().unwrap();
        let mine: Vec<u64> = taken
            .iter()
            .filter(|(t, _)| *t == me)
            .map(|r| r.1)
            .collect();
        taken.retain(|(t, _)| *t != me);
        assert!(
            mine.len() <= 1,
            "one call read the clock {} times",
            mine.len()
        );
        mine.first().copied()
    }
}

/// A call on [`ClockedShardedBucket`], which reads its own time.
#[derive(Clone, Debug)]
enum ClockedCall {
    Allow(&'static str, u64),
    EvictFull,
    ReplacePolicy(Policy, u64),
}

/// Runs `call` on `limiter` and writes it down as the [`Op`] it was: at the time the call
/// read from `clock`, or, for a call that read none (an error before its time is taken), at
/// the end of time, where the specification fails it the same way.
fn clocked_call(
    limiter: &ClockedShardedBucket<TickingClock>,
    clock: &Ticking,
    events: &AtomicU64,
    thread: usize,
    call: &ClockedCall,
) -> Event {
    let invoked = events.fetch_add(1, SeqCst);
    let outcome: Outcome = match call {
        ClockedCall::Allow(key, cost) => limiter.allow(key, *cost).into(),
        ClockedCall::EvictFull => limiter.evict_full().into(),
        ClockedCall::ReplacePolicy(next, expected) => {
            limiter.replace_policy(*next, *expected).into()
        }
    };
    let returned = events.fetch_add(1, SeqCst);
    let now = clock.taken_by_this_thread().unwrap_or(u64::MAX);
    let op = match call {
        ClockedCall::Allow(key, cost) => allow(key, *cost, now),
        ClockedCall::EvictFull => Op::EvictFull { now },
        ClockedCall::ReplacePolicy(next, expected) => Op::ReplacePolicy {
            next: *next,
            expected_version: *expected,
            now,
        },
    };
    Event {
        thread,
        op,
        outcome,
        invoked,
        returned,
    }
}

/// `ClockedShardedBucket` reads its clock inside each call's boundary with no lock shared by
/// every call. Two keys in different shards (capacity 2, one token a second, three keys at
/// most), each call a quarter second after the one before: one thread spends on both keys
/// and adds a third; the other evicts, cuts over to a policy of capacity 1 and spends; then
/// an eviction. Every call is given, as its time, the reading it took, and the whole history
/// must be explained by some order of the calls on the specification, stored state included
/// (so readings reached the shards in an order consistent with the clock, and none was
/// refused as going backwards).
pub fn clocked_sharded_race() {
    let clock = Arc::new(Ticking {
        now: AtomicU64::new(0),
        taken: Mutex::new(Vec::new()),
    });
    let start = policy(1, 2, 1);
    let limiter =
        Arc::new(ClockedShardedBucket::new(start, 3, TickingClock(Arc::clone(&clock))).unwrap());
    let (x, y) = two_shards(|k| limiter.shard_index(k));
    let events = Arc::new(AtomicU64::new(0));
    let mut history = Vec::new();
    for key in [x, y] {
        history.push(clocked_call(
            &limiter,
            &clock,
            &events,
            0,
            &ClockedCall::Allow(key, 1),
        ));
    }
    let threads = [
        vec![
            ClockedCall::Allow(x, 2),
            ClockedCall::Allow(y, 1),
            ClockedCall::Allow("z", 1),
        ],
        vec![
            ClockedCall::EvictFull,
            ClockedCall::ReplacePolicy(policy(2, 1, 1), 1),
            ClockedCall::Allow(y, 1),
        ],
    ];
    let handles: Vec<_> = threads
        .iter()
        .enumerate()
        .map(|(i, calls)| {
            let (limiter, clock, events) = (
                Arc::clone(&limiter),
                Arc::clone(&clock),
                Arc::clone(&events),
            );
            let calls = calls.clone();
            thread::spawn(move || {
                calls
                    .iter()
                    .map(|c| clocked_call(&limiter, &clock, &events, i + 1, c))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for h in handles {
        history.extend(h.join().unwrap());
    }
    history.push(clocked_call(
        &limiter,
        &clock,
        &events,
        0,
        &ClockedCall::EvictFull,
    ));
    let scenario = Scenario {
        policy: start,
        max_keys: 3,
        init: vec![],
        threads: vec![],
        post: vec![],
    };
    let execution = Execution {
        history,
        snapshot: limiter.snapshot(),
    };
    if let Err(why) = judge(&scenario, &execution) {
        panic!("not linearizable: {why}");
    }
    assert!(
        execution.history.iter().all(|e| !matches!(
            e.outcome,
            Outcome::Error(LimitError::TimeWentBackwards { .. })
        )),
        "a reading was refused as going backwards"
    );
}

/// The same race on `ShardedBucket` with each caller reading the clock itself: returns how
/// many calls were refused for delivering 100 after 101 (panicking on any other error).
pub fn sharded_caller_sampled_race() -> usize {
    let clock = Arc::new(ManualClock::new(100));
    let (limiter, x, y) = sharded();
    let (l, c) = (Arc::clone(&limiter), Arc::clone(&clock));
    let a = thread::spawn(move || {
        let now = c.now_nanos();
        l.allow(x, 1, now)
    });
    let b = thread::spawn(move || {
        clock.advance(1);
        let now = clock.now_nanos();
        limiter.allow(y, 1, now)
    });
    let mut backwards = 0;
    for r in [a.join().unwrap(), b.join().unwrap()] {
        match r {
            Ok(_) => {}
            Err(LimitError::TimeWentBackwards {
                now: 100,
                observed: 101,
            }) => backwards += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    backwards
}

/// Each known-bad design fails the suite's check for its race with a counterexample shrunk to
/// at most two threads (and one observing thread of snapshot and key count calls, when that is
/// what saw the race) of at most three calls, printed within 120 columns (commands aside),
/// saved to a file that replays to the same failure.
pub fn counterexamples_are_shrunk_narrow_and_replayed() {
    use ratelimit_lab::suite::counterexample::Counterexample;
    use ratelimit_lab::suite::{run_check, Status};

    fn case<L: Limiter>(design: &str, check: &str, mistake: Mistake) {
        let result = run_check::<L>(check, &[]);
        let Status::Failed(failure) = &result.status else {
            panic!("{design} passed {check}: {:?}", result.status);
        };
        assert!(
            failure.summary.starts_with("no sequential order explains")
                || failure
                    .summary
                    .contains("have a legal order, but the state it leaves does not"),
            "{design}: {}",
            failure.summary
        );
        assert_eq!(
            failure.mistake,
            Some(mistake),
            "{design}: the race it shows"
        );
        let detail = failure.detail.clone().unwrap_or_default();
        for line in detail.lines() {
            let command = line.contains("cargo ") || line.contains("RATELIMIT_LAB_REPLAY=");
            assert!(
                command || line.chars().count() <= 120,
                "{design}: a line of {} columns: {line}",
                line.chars().count()
            );
        }
        let file = detail
            .lines()
            .find_map(|l| l.trim().strip_prefix("RATELIMIT_LAB_REPLAY="))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("{design}: no replay file in\n{detail}"));
        let cx = Counterexample::load(std::path::Path::new(file))
            .unwrap_or_else(|f| panic!("{design}: {}", f.summary));
        assert_eq!(cx.check, check);
        // A thread that only observes (snapshot, key_count) may be what sees the race: a torn
        // snapshot, or a split eviction whose damage only a snapshot caught. It comes on top.
        let observers = cx
            .scenario
            .threads
            .iter()
            .filter(|t| t.iter().all(|op| matches!(op, Op::Snapshot | Op::KeyCount)))
            .count();
        let most = 2 + observers.min(1);
        assert!(
            cx.scenario.threads.len() <= most,
            "{design}: {:?}",
            cx.scenario
        );
        assert!(
            cx.scenario.threads.iter().all(|t| t.len() <= 3),
            "{design}: {:?}",
            cx.scenario
        );
        let again =
            ratelimit_lab::suite::replay::<L>(&cx, file).expect_err("the replay fails again");
        assert!(again.summary.contains("fails again"), "{}", again.summary);
        assert!(
            again.summary.contains(&format!(
                "execution {} of {}",
                cx.execution,
                ratelimit_lab::suite::counterexample::search_in_words(&cx.search)
            )),
            "{design}: the same execution: {} vs {cx:?}",
            again.summary
        );
    }
    case::<SplitReadWrite>(
        "SplitReadWrite",
        "r2_twenty_contenders_ten_pass",
        Mistake::DoubleSpend,
    );
    // Over-admission without a lost spend: at the check's capacity it takes three callers,
    // so the shrinker must lower the capacity to reach two threads.
    case::<CheckThenDeduct>(
        "CheckThenDeduct",
        "r2_twenty_contenders_ten_pass",
        Mistake::DoubleSpend,
    );
    case::<RacyEvictFull>(
        "RacyEvictFull",
        "r3_eviction_never_undoes_a_spend",
        Mistake::SplitEviction,
    );
    case::<RacyKeyBound>(
        "RacyKeyBound",
        "i3_concurrent_new_keys_respect_max_keys",
        Mistake::SplitKeyBound,
    );
    case::<RacyCutover>(
        "RacyCutover",
        "r4_cutover_never_undoes_a_spend",
        Mistake::SplitCutover,
    );
    // The time check split from the observed time's publication: two admissions on new keys
    // at different times, the smaller time stored last.
    case::<RacyObservedTime>(
        "RacyObservedTime",
        "r2_concurrent_histories_linearize",
        Mistake::SplitTimeCheck,
    );
    // A snapshot copied shard by shard while calls run: the copy, not a call, has no place in
    // any legal order.
    case::<TornSnapshot>(
        "TornSnapshot",
        "r2_concurrent_histories_linearize",
        Mistake::TornSnapshot,
    );
    // The check that generates its scenarios names the race its shrunk counterexample shows,
    // not the check's own. (Loom's six generated scenarios include no eviction race; the
    // eviction check above catches it there.)
    if !cfg!(loom) {
        case::<RacyEvictFull>(
            "RacyEvictFull",
            "r2_concurrent_histories_linearize",
            Mistake::SplitEviction,
        );
    }
}
