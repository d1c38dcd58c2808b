//! Racing calls on `TokenBucket` under shuttle's controlled scheduler, with three search
//! strategies (random, PCT and exhaustive DFS), each execution judged by the suite's
//! linearizability checker against the specification (outcomes, what a later call observes,
//! and the final state). The scenarios, the checks and the known-bad designs are shared with
//! `tests/loom.rs` in `tests/explore`. The random and PCT schedulers start from fixed seeds,
//! so every run explores the same schedules.
//!
//! Run with
//! `CARGO_TARGET_DIR=target-shuttle cargo test --features shuttle --test shuttle --release`.
#![cfg(feature = "shuttle")]
#![cfg(not(loom))]

mod explore;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use ratelimit_lab::explore::Scenario;
use ratelimit_lab::Limiter;
use ratelimit_lab_catalog::mistakes::{RacyCutover, RacyEvictFull, SplitReadWrite};
use ratelimit_lab_reference::TokenBucket;
use shuttle::scheduler::{DfsScheduler, PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

use explore::{
    caller_sampled_race, clocked_race, clocked_sharded_race, evict_vs_allow,
    exactly_one_spends_the_last_token, known_bad_designs_match_the_specification_sequentially,
    last_token, linearizable, nothing_more, one_cutover_wins, replace_vs_allow, replace_vs_replace,
    scenarios, sharded_caller_sampled_race, the_cutover_keeps_the_spend,
    the_spend_survives_eviction, Observed,
};

/// How shuttle searches the schedules.
#[derive(Clone, Copy, Debug)]
enum Search {
    /// `RandomScheduler` from a fixed seed, for `iterations`.
    Random(usize),
    /// `PctScheduler` from a fixed seed, for `iterations` at `depth`.
    Pct(usize, usize),
    /// `DfsScheduler`: every schedule.
    Dfs,
}

/// The seed of every randomized search: the same schedules on every run.
const SEED: u64 = 0x5eed_1013;

const STRATEGIES: [Search; 4] = [
    Search::Random(1_000),
    Search::Pct(1_000, 2),
    Search::Pct(1_000, 3),
    Search::Dfs,
];

/// Runs `f` under `search`, passing it the number of the execution (from 1); returns the
/// number of executions.
fn check(search: Search, f: impl Fn(usize) + Send + Sync + 'static) -> usize {
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    let f = move || {
        f(counter.fetch_add(1, SeqCst) + 1);
    };
    match search {
        Search::Random(n) => {
            Runner::new(RandomScheduler::new_from_seed(SEED, n), Config::new()).run(f);
        }
        Search::Pct(n, depth) => {
            Runner::new(PctScheduler::new_from_seed(SEED, depth, n), Config::new()).run(f);
        }
        Search::Dfs => {
            Runner::new(DfsScheduler::new(None, false), Config::new()).run(f);
        }
    }
    let n = executions.load(SeqCst);
    println!("{search:?}: {n} executions");
    assert!(n > 1, "shuttle ran only {n} execution(s)");
    n
}

/// Checks `scenario` on `L` under `search`, asserting each execution is one of the sequential
/// orders and passing it to `also`; returns the number of executions.
fn explore<L: Limiter>(search: Search, scenario: Scenario, also: fn(&Observed)) -> usize {
    check(search, linearizable::<L>(scenario, also))
}

/// [`explore`] with every strategy in turn.
fn explore_all<L: Limiter>(scenario: Scenario, also: fn(&Observed)) {
    for search in STRATEGIES {
        explore::<L>(search, scenario.clone(), also);
    }
}

#[test]
fn two_threads_spend_the_last_token_once() {
    explore_all::<TokenBucket>(last_token(), exactly_one_spends_the_last_token);
}

#[test]
fn evict_full_racing_allow_is_linearizable() {
    explore_all::<TokenBucket>(evict_vs_allow(), the_spend_survives_eviction);
}

#[test]
fn replace_policy_racing_allow_is_linearizable() {
    explore_all::<TokenBucket>(replace_vs_allow(), the_cutover_keeps_the_spend);
}

#[test]
fn replace_policy_racing_replace_policy_is_linearizable() {
    explore_all::<TokenBucket>(replace_vs_replace(), one_cutover_wins);
}

// ---------------------------------------------------------------------------------------------
// The known-bad designs: each splits one operation into two critical sections
// ---------------------------------------------------------------------------------------------

#[test]
fn the_known_bad_designs_are_sequentially_correct() {
    for scenario in scenarios() {
        check(Search::Random(2), move |_| {
            known_bad_designs_match_the_specification_sequentially(&scenario);
        });
    }
}

#[test]
#[should_panic(expected = "not linearizable")]
fn random_catches_the_double_spend_of_split_read_write() {
    explore::<SplitReadWrite>(Search::Random(1_000), last_token(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn random_catches_the_eviction_of_a_spent_bucket_by_racy_evict_full() {
    explore::<RacyEvictFull>(Search::Random(1_000), evict_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn random_catches_the_spend_undone_by_racy_cutover() {
    explore::<RacyCutover>(Search::Random(1_000), replace_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn random_catches_two_cutovers_from_one_version_by_racy_cutover() {
    explore::<RacyCutover>(Search::Random(1_000), replace_vs_replace(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn pct_catches_the_double_spend_of_split_read_write() {
    explore::<SplitReadWrite>(Search::Pct(1_000, 2), last_token(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn pct_catches_the_eviction_of_a_spent_bucket_by_racy_evict_full() {
    explore::<RacyEvictFull>(Search::Pct(1_000, 2), evict_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn pct_catches_the_spend_undone_by_racy_cutover() {
    explore::<RacyCutover>(Search::Pct(1_000, 2), replace_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn pct_catches_two_cutovers_from_one_version_by_racy_cutover() {
    explore::<RacyCutover>(Search::Pct(1_000, 2), replace_vs_replace(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn dfs_catches_the_double_spend_of_split_read_write() {
    explore::<SplitReadWrite>(Search::Dfs, last_token(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn dfs_catches_the_eviction_of_a_spent_bucket_by_racy_evict_full() {
    explore::<RacyEvictFull>(Search::Dfs, evict_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn dfs_catches_the_spend_undone_by_racy_cutover() {
    explore::<RacyCutover>(Search::Dfs, replace_vs_allow(), nothing_more);
}

#[test]
#[should_panic(expected = "not linearizable")]
fn dfs_catches_two_cutovers_from_one_version_by_racy_cutover() {
    explore::<RacyCutover>(Search::Dfs, replace_vs_replace(), nothing_more);
}

// ---------------------------------------------------------------------------------------------
// Clocked under shuttle: its samples never arrive out of order; caller-sampled ones can
// ---------------------------------------------------------------------------------------------

#[test]
fn clocked_samples_never_arrive_out_of_order() {
    for search in STRATEGIES {
        check(search, |_| clocked_race());
    }
}

#[test]
fn clocked_sharded_readings_reach_the_shards_in_clock_order() {
    // Not exhaustive: eight calls on two threads have too many schedules for DFS.
    for search in [
        Search::Random(1_000),
        Search::Pct(1_000, 2),
        Search::Pct(1_000, 3),
    ] {
        check(search, |_| clocked_sharded_race());
    }
}

#[test]
fn sharded_caller_sampled_time_arrives_out_of_order_in_some_schedule() {
    for search in [Search::Random(1_000), Search::Pct(1_000, 2), Search::Dfs] {
        let backwards = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&backwards);
        check(search, move |_| {
            seen.fetch_add(sharded_caller_sampled_race(), SeqCst);
        });
        assert!(
            backwards.load(SeqCst) > 0,
            "{search:?}: no schedule delivered the older reading last"
        );
    }
}

#[test]
fn caller_sampled_time_arrives_out_of_order_in_some_schedule() {
    for search in [Search::Random(1_000), Search::Pct(1_000, 2), Search::Dfs] {
        let backwards = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&backwards);
        check(search, move |_| {
            seen.fetch_add(caller_sampled_race(), SeqCst);
        });
        assert!(
            backwards.load(SeqCst) > 0,
            "{search:?}: no schedule delivered the older sample last"
        );
    }
}

#[test]
fn counterexamples_are_shrunk_narrow_and_replayed() {
    explore::counterexamples_are_shrunk_narrow_and_replayed();
}

/// The counterexamples the fixtures are built from (`testdata/lesson/counterexamples/`)
/// replay: the search that found each finds its failing execution again, and the recorded
/// history carries the verdict the fixture shows.
#[test]
fn committed_counterexamples_replay_and_fail_again() {
    use ratelimit_lab::suite::counterexample::Counterexample;
    use ratelimit_lab_catalog::mistakes::{CheckThenDeduct, RacyKeyBound};
    fn again<L: Limiter>(design: &str) {
        let file = format!(
            "{}/testdata/lesson/counterexamples/{design}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let cx = Counterexample::load(std::path::Path::new(&file))
            .unwrap_or_else(|e| panic!("{}", e.summary));
        assert_eq!(cx.backend, "shuttle", "{file}");
        let failure =
            ratelimit_lab::suite::replay::<L>(&cx, &file).expect_err("the replay fails again");
        assert!(
            failure.summary.contains("fails again"),
            "{design}: {}",
            failure.summary
        );
        assert!(!cx.history.is_empty() && !cx.verdict.is_empty(), "{file}");
        // The same search finds nothing wrong with the reference.
        assert!(
            ratelimit_lab::suite::replay::<TokenBucket>(&cx, &file).is_ok(),
            "{file}"
        );
    }
    again::<SplitReadWrite>("SplitReadWrite");
    again::<CheckThenDeduct>("CheckThenDeduct");
    again::<RacyKeyBound>("RacyKeyBound");
    again::<RacyEvictFull>("RacyEvictFull");
    again::<RacyCutover>("RacyCutover");
}

/// Shuttle replays an execution by making the same choices again, so every lock a design
/// takes must be the same in every execution: the sharded designs hash keys with a fixed key
/// in this mode (the shuttle feature reaches the reference crate), and a key lives in the
/// same shard of every instance. Without it, DFS fails inside shuttle.
#[test]
fn sharded_designs_put_a_key_in_the_same_shard_in_every_instance() {
    use ratelimit_lab_reference::ShardedBucket;
    let policy = ratelimit_lab::Policy::new(1, 10, 2).expect("a valid policy");
    let (a, b) = (
        ShardedBucket::new(policy, 100).expect("a limiter"),
        ShardedBucket::new(policy, 100).expect("a limiter"),
    );
    let shards: Vec<usize> = (0..64)
        .map(|k| a.shard_index(&format!("key-{k}")))
        .collect();
    for (k, shard) in shards.iter().enumerate() {
        assert_eq!(b.shard_index(&format!("key-{k}")), *shard, "key-{k}");
    }
    // 64 keys over the shards of this mode: the check above compared more than one shard.
    assert!(shards.iter().any(|&s| s != shards[0]), "{shards:?}");
}

/// A correct design whose path depends on something shuttle does not control: every other
/// instance (counted across executions) takes a lock of its own before the reference's.
/// Shuttle's depth-first search cannot replay it; the suite must still grade it on what it
/// does, not fail it for shuttle's sake.
#[derive(Debug)]
struct Unreplayable {
    inner: TokenBucket,
    extra: Option<ratelimit_lab::sync::Mutex<()>>,
}

static UNREPLAYABLE_INSTANCES: AtomicUsize = AtomicUsize::new(0);

impl Limiter for Unreplayable {
    fn new(
        policy: ratelimit_lab::Policy,
        max_keys: usize,
    ) -> Result<Self, ratelimit_lab::LimitError> {
        let n = UNREPLAYABLE_INSTANCES.fetch_add(1, SeqCst);
        Ok(Unreplayable {
            inner: TokenBucket::new(policy, max_keys)?,
            extra: n
                .is_multiple_of(2)
                .then(|| ratelimit_lab::sync::Mutex::new(())),
        })
    }

    fn allow(
        &self,
        key: &str,
        cost: u64,
        now: u64,
    ) -> Result<ratelimit_lab::Decision, ratelimit_lab::LimitError> {
        let _first = self.extra.as_ref().map(|m| m.lock());
        self.inner.allow(key, cost, now)
    }

    fn evict_full(&self, now: u64) -> Result<usize, ratelimit_lab::LimitError> {
        let _first = self.extra.as_ref().map(|m| m.lock());
        self.inner.evict_full(now)
    }

    fn replace_policy(
        &self,
        next: ratelimit_lab::Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), ratelimit_lab::LimitError> {
        let _first = self.extra.as_ref().map(|m| m.lock());
        self.inner.replace_policy(next, expected_version, now)
    }

    fn key_count(&self) -> usize {
        self.inner.key_count()
    }

    fn snapshot(&self) -> Option<ratelimit_lab::Snapshot> {
        self.inner.snapshot()
    }
}

#[test]
fn a_correct_design_that_does_not_replay_passes_the_concurrency_checks() {
    use ratelimit_lab::suite::{run_check, Kind, CHECKS};
    let suspects = ratelimit_lab::suspects();
    for check in CHECKS.iter().filter(|c| c.kind == Kind::Concurrency) {
        let result = run_check::<Unreplayable>(check.name, suspects);
        assert!(result.passed(), "{}", result.explain("this test"));
    }
}

#[test]
fn a_call_that_never_returns_is_named_within_the_limit() {
    explore::isolation::a_call_that_never_returns_is_named_within_the_limit();
}

#[test]
fn a_panicking_drop_fails_its_checks_and_every_check_reports() {
    explore::isolation::a_panicking_drop_fails_its_checks_and_every_check_reports();
}
