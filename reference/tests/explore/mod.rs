//! What `tests/loom.rs` and `tests/shuttle.rs` share: two racing calls on a design, judged
//! against the specification (the two outcomes, what a later call observes, and the final
//! state must be those of one of the two sequential orders), the checks each scenario adds,
//! and the `Clocked` races.
//!
//! Everything here is the work of one execution: it runs inside a backend's runner
//! (`loom::model`, `shuttle::check_*`) and takes its threads and locks from
//! `ratelimit_lab_api::sync`, which that backend provides. The runners, and the tests that
//! choose one, stay in the two test files.
//!
//! The known-bad designs are the catalogued interleaving-only mistakes: [`SplitReadWrite`]
//! (admission read and written under two locks), [`RacyEvictFull`] (cleanup listed and
//! removed under two locks) and [`RacyCutover`] (policy change built and published under two
//! locks). Each is sequentially identical to `TokenBucket` (checked here on every scenario),
//! so a failure on them comes from the race alone.

use ratelimit_lab_api::sync::{thread, Arc};
use ratelimit_lab_api::{Decision, LimitError, Limiter, Policy, Snapshot, UNITS_PER_TOKEN};
use ratelimit_lab_model::{Model, Op, Outcome};
use ratelimit_lab_reference::mistakes::{RacyCutover, RacyEvictFull, SplitReadWrite};
use ratelimit_lab_reference::{Clock, Clocked, ManualClock, TokenBucket};

const SECOND: u64 = 1_000_000_000;

// ---------------------------------------------------------------------------------------------
// Scenarios: a sequential init part, one call on each of two threads, a sequential post part
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Scenario {
    policy: Policy,
    max_keys: usize,
    init: Vec<Op>,
    a: Op,
    b: Op,
    post: Vec<Op>,
}

/// What one execution showed: both racing outcomes, the post part's outcomes, the final state.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    a: Outcome,
    b: Outcome,
    post: Vec<Outcome>,
    state: Snapshot,
}

fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_owned(),
        cost,
        now,
    }
}

fn policy(version: u64, capacity: u64, rate: u64) -> Policy {
    Policy::new(version, capacity, rate).unwrap()
}

impl Scenario {
    /// Applies the scenario on one thread through `apply`, `a` first (`true`) or `b` first;
    /// returns the outcomes of `a`, `b` and the post part.
    fn in_order(
        &self,
        a_first: bool,
        mut apply: impl FnMut(&Op) -> Outcome,
    ) -> (Outcome, Outcome, Vec<Outcome>) {
        for op in &self.init {
            apply(op);
        }
        let (a, b) = if a_first {
            let a = apply(&self.a);
            (a, apply(&self.b))
        } else {
            let b = apply(&self.b);
            (apply(&self.a), b)
        };
        let post = self.post.iter().map(apply).collect();
        (a, b, post)
    }

    /// The specification's result with `a` first (`true`) or `b` first.
    fn sequential(&self, a_first: bool) -> Observed {
        let mut m = Model::new(self.policy, self.max_keys).unwrap();
        let (a, b, post) = self.in_order(a_first, |op| m.apply(op));
        Observed {
            a,
            b,
            post,
            state: m.snapshot(),
        }
    }

    /// Both sequential orders' results: the only legal observations.
    fn legal(&self) -> Vec<Observed> {
        vec![self.sequential(true), self.sequential(false)]
    }

    /// Runs the scenario once on `L`, on one thread, `a` first (`true`) or `b` first.
    fn run_sequentially<L: Limiter>(&self, a_first: bool) -> Observed {
        let limiter = L::new(self.policy, self.max_keys).unwrap();
        let (a, b, post) = self.in_order(a_first, |op| op.run_on(&limiter));
        Observed {
            a,
            b,
            post,
            state: limiter.snapshot().expect("the design implements snapshot"),
        }
    }

    /// Runs the scenario once on `L`, the two racing calls on two threads.
    fn run<L: Limiter>(&self) -> Observed {
        let limiter = Arc::new(L::new(self.policy, self.max_keys).unwrap());
        for op in &self.init {
            op.run_on(&*limiter);
        }
        let spawn = |op: &Op| {
            let (limiter, op) = (Arc::clone(&limiter), op.clone());
            thread::spawn(move || op.run_on(&*limiter))
        };
        let (ta, tb) = (spawn(&self.a), spawn(&self.b));
        let (a, b) = (ta.join().unwrap(), tb.join().unwrap());
        let post = self.post.iter().map(|op| op.run_on(&*limiter)).collect();
        Observed {
            a,
            b,
            post,
            state: limiter.snapshot().expect("the design implements snapshot"),
        }
    }
}

/// The work of one execution for a runner: runs `scenario` on `L` with the racing calls on
/// two threads, asserts the result is one of the sequential orders' ("not linearizable at
/// execution N" otherwise, N being the number the runner passes), and passes it to `also`.
pub fn linearizable<L: Limiter>(
    scenario: Scenario,
    also: fn(&Observed),
) -> impl Fn(usize) + Send + Sync + 'static {
    let legal = scenario.legal();
    move |execution| {
        let got = scenario.run::<L>();
        assert!(
            legal.contains(&got),
            "not linearizable at execution {execution}: {got:#?}\nlegal results of {scenario:#?}:\n{legal:#?}"
        );
        also(&got);
    }
}

fn allowed(o: &Outcome) -> bool {
    matches!(o, Outcome::Decision(Decision { allowed: true, .. }))
}

/// The last token of one key: two spends of one token at the same instant.
pub fn last_token() -> Scenario {
    Scenario {
        policy: policy(1, 2, 1),
        max_keys: 4,
        init: vec![allow("k", 1, 0)],
        a: allow("k", 1, 0),
        b: allow("k", 1, 0),
        post: vec![],
    }
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
    Scenario {
        policy: policy(1, 1, 1),
        max_keys: 4,
        init: vec![allow("k", 1, 0)],
        a: Op::EvictFull { now: SECOND },
        b: allow("k", 1, SECOND),
        post: vec![allow("k", 1, SECOND), Op::KeyCount],
    }
}

pub fn the_spend_survives_eviction(o: &Observed) {
    assert!(allowed(&o.b), "{o:?}");
    assert!(!allowed(&o.post[0]), "a spent bucket came back full: {o:?}");
}

/// A cutover (capacity 10 → 20, rate 2 → 4) at half a second races a spend of the one token
/// earned by then; the post part spends the token earned at the new rate.
pub fn replace_vs_allow() -> Scenario {
    Scenario {
        policy: policy(1, 10, 2),
        max_keys: 4,
        init: vec![allow("k", 10, 0), allow("j", 1, 0)],
        a: Op::ReplacePolicy {
            next: policy(2, 20, 4),
            expected_version: 1,
            now: SECOND / 2,
        },
        b: allow("k", 1, SECOND / 2),
        post: vec![allow("k", 1, 3 * SECOND / 4), allow("k", 1, 3 * SECOND / 4)],
    }
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
    Scenario {
        policy: policy(1, 10, 2),
        max_keys: 4,
        init: vec![allow("k", 10, 0)],
        a: Op::ReplacePolicy {
            next: policy(2, 5, 1),
            expected_version: 1,
            now: SECOND,
        },
        b: Op::ReplacePolicy {
            next: policy(3, 20, 4),
            expected_version: 1,
            now: 2 * SECOND,
        },
        post: vec![allow("k", 1, 2 * SECOND)],
    }
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
/// gives exactly the specification's result for `scenario`: so that their failures come from
/// the race and nothing else.
pub fn known_bad_designs_match_the_specification_sequentially(scenario: &Scenario) {
    fn check<L: Limiter>(name: &str, scenario: &Scenario, legal: &[Observed]) {
        for (a_first, want) in [(true, &legal[0]), (false, &legal[1])] {
            let got = scenario.run_sequentially::<L>(a_first);
            assert_eq!(&got, want, "{name}, a first: {a_first}, {scenario:#?}");
        }
    }
    let legal = scenario.legal();
    check::<SplitReadWrite>("SplitReadWrite", scenario, &legal);
    check::<RacyEvictFull>("RacyEvictFull", scenario, &legal);
    check::<RacyCutover>("RacyCutover", scenario, &legal);
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
