//! The concurrency checks under a controlled scheduler (shuttle, loom): the seed's named
//! races as small [`Scenario`]s, plus generated Lincheck-style ones, each explored by
//! [`explorer::explore`](crate::suite::search::explorer) and judged for linearizability against the
//! specification with every call's own `now`.
//!
//! Sizes fit the backend: loom explores at most four threads besides the main one, so the
//! seed's twenty contenders become three at capacity two there; shuttle runs the twenty.
use crate::model::Op;
use crate::suite::host::subject::Subject;
use crate::{Decision, Policy};

use crate::suite::core::backend::Backend;
use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::core::random::Rng;
use crate::suite::search::explorer::explore;
use crate::suite::search::scenario::{Execution, Scenario};

const SECOND: u64 = 1_000_000_000;

/// An `allow` call, for the scenarios of this module and of `concurrency`.
pub(crate) fn allow(key: &str, cost: u64, now: u64) -> Op {
    Op::Allow {
        key: key.to_string(),
        cost,
        now,
    }
}

/// A policy the check itself chose; an invalid one is reported as the check's fault.
pub(crate) fn policy(version: u64, capacity: u64, rate: u64) -> Result<Policy, Failure> {
    Policy::new(version, capacity, rate)
        .map_err(|e| Failure::new(format!("the check itself is misconfigured: {e}")))
}

fn allowed(e: &crate::suite::search::scenario::Execution, thread: usize) -> usize {
    e.history
        .iter()
        .filter(|ev| {
            ev.thread == thread
                && matches!(
                    ev.outcome,
                    crate::model::Outcome::Decision(Decision { allowed: true, .. })
                )
        })
        .count()
}

fn nothing_more(_: &Scenario, _: &Execution) -> Result<(), String> {
    Ok(())
}

/// `r2_twenty_contenders_ten_pass`: unit requests at t=0 from a full bucket of half as many
/// tokens; exactly half pass.
pub(crate) fn r2_twenty_contenders_ten_pass(subject: Subject) -> Result<(), Failure> {
    let (threads, capacity) = match Backend::current() {
        Backend::Loom => (3, 2),
        _ => (20, 10),
    };
    let scenario = Scenario {
        policy: policy(1, capacity, 2)?,
        max_keys: 4,
        init: vec![],
        threads: (0..threads).map(|_| vec![allow("k", 1, 0)]).collect(),
        post: vec![allow("k", 1, 0)],
    };
    fn half_pass(s: &Scenario, e: &Execution) -> Result<(), String> {
        let passed: usize = (1..=s.threads.len()).map(|t| allowed(e, t)).sum();
        let capacity = s.policy.capacity() as usize;
        if passed == capacity {
            Ok(())
        } else {
            Err(format!(
                "{passed} of {} concurrent unit requests passed at t=0 with capacity {capacity}; exactly {capacity} must",
                s.threads.len()
            ))
        }
    }
    explore(subject, &scenario, half_pass)
}

/// `i2_each_cost_is_deducted_once`: two threads spend mixed costs at one instant; a later
/// spend reads what is left.
pub(crate) fn i2_each_cost_is_deducted_once(subject: Subject) -> Result<(), Failure> {
    let scenarios = [
        Scenario {
            policy: policy(1, 3, 1)?,
            max_keys: 4,
            init: vec![allow("k", 1, 0)],
            threads: vec![vec![allow("k", 1, 0)], vec![allow("k", 2, 0)]],
            post: vec![allow("k", 1, 0)],
        },
        Scenario {
            policy: policy(1, 4, 1)?,
            max_keys: 4,
            init: vec![],
            threads: vec![
                vec![allow("k", 2, 0), allow("k", 1, 0)],
                vec![allow("k", 1, 0), allow("k", 2, 0)],
            ],
            post: vec![allow("k", 1, 0)],
        },
    ];
    scenarios
        .iter()
        .try_for_each(|s| explore(subject, s, nothing_more))
}

/// `i3_concurrent_new_keys_respect_max_keys`: two new keys race for the last slot; the key
/// count is read while they race and after.
pub(crate) fn i3_concurrent_new_keys_respect_max_keys(subject: Subject) -> Result<(), Failure> {
    let scenarios = [
        Scenario {
            policy: policy(1, 10, 2)?,
            max_keys: 2,
            init: vec![allow("a", 1, 0)],
            threads: vec![vec![allow("b", 1, 0)], vec![allow("c", 1, 0)]],
            post: vec![Op::KeyCount, allow("b", 1, 0), allow("c", 1, 0)],
        },
        Scenario {
            policy: policy(1, 10, 2)?,
            max_keys: 1,
            init: vec![],
            threads: vec![
                vec![allow("a", 1, 0), Op::KeyCount],
                vec![allow("b", 1, 0), Op::KeyCount],
            ],
            post: vec![Op::KeyCount],
        },
    ];
    scenarios
        .iter()
        .try_for_each(|s| explore(subject, s, nothing_more))
}

/// `r3_eviction_never_undoes_a_spend`: `evict_full` races a spend of a bucket that is full
/// at that instant; a later spend shows whether the spend survived.
pub(crate) fn r3_eviction_never_undoes_a_spend(subject: Subject) -> Result<(), Failure> {
    let scenarios = [
        Scenario {
            policy: policy(1, 1, 1)?,
            max_keys: 4,
            init: vec![allow("k", 1, 0)],
            threads: vec![
                vec![Op::EvictFull { now: SECOND }],
                vec![allow("k", 1, SECOND)],
            ],
            post: vec![allow("k", 1, SECOND), Op::KeyCount],
        },
        Scenario {
            policy: policy(1, 2, 2)?,
            max_keys: 4,
            init: vec![allow("j", 2, 0), allow("k", 2, 0)],
            threads: vec![
                vec![Op::EvictFull { now: SECOND }],
                vec![allow("j", 2, SECOND), allow("k", 1, SECOND)],
            ],
            post: vec![allow("j", 1, SECOND), allow("k", 2, SECOND)],
        },
    ];
    scenarios
        .iter()
        .try_for_each(|s| explore(subject, s, nothing_more))
}

/// `r4_cutover_never_undoes_a_spend`: `replace_policy` races a spend (the seed's worked
/// example 2 at its cutover instant), and two cutovers from one version race each other.
pub(crate) fn r4_cutover_never_undoes_a_spend(subject: Subject) -> Result<(), Failure> {
    let scenarios = [
        Scenario {
            policy: policy(1, 10, 2)?,
            max_keys: 4,
            init: vec![allow("k", 10, 0), allow("j", 1, 0)],
            threads: vec![
                vec![Op::ReplacePolicy {
                    next: policy(2, 20, 4)?,
                    expected_version: 1,
                    now: SECOND / 2,
                }],
                vec![allow("k", 1, SECOND / 2)],
            ],
            post: vec![allow("k", 1, 3 * SECOND / 4), allow("k", 1, 3 * SECOND / 4)],
        },
        Scenario {
            policy: policy(1, 10, 2)?,
            max_keys: 4,
            init: vec![allow("k", 10, 0)],
            threads: vec![
                vec![Op::ReplacePolicy {
                    next: policy(2, 5, 1)?,
                    expected_version: 1,
                    now: SECOND,
                }],
                vec![Op::ReplacePolicy {
                    next: policy(3, 20, 4)?,
                    expected_version: 1,
                    now: 2 * SECOND,
                }],
            ],
            post: vec![allow("k", 1, 2 * SECOND)],
        },
    ];
    scenarios
        .iter()
        .try_for_each(|s| explore(subject, s, nothing_more))
}

/// `r2_concurrent_histories_linearize`: the seed's named races that the other checks do not
/// stage (the last token with two and with three contenders; calls on different keys whose
/// times must stay globally monotonic), then generated scenarios (an init part, two threads
/// of one to three calls over two keys with their own times, a post part), each explored.
pub(crate) fn r2_concurrent_histories_linearize(subject: Subject) -> Result<(), Failure> {
    named_races()?
        .iter()
        .try_for_each(|s| explore(subject, s, nothing_more))?;
    // Loom's exhaustive search costs the most per scenario; on real threads each scenario
    // runs its executions with sleeps in them.
    let count = match Backend::current() {
        Backend::Loom => 6,
        Backend::Std => 12,
        Backend::Shuttle => 24,
    };
    let mut rng = Rng(env::seed() ^ 0x7a11);
    (0..count).try_for_each(|_| explore(subject, &generated(&mut rng)?, nothing_more))
}

/// The named races of [`r2_concurrent_histories_linearize`].
fn named_races() -> Result<Vec<Scenario>, Failure> {
    let last_token = |contenders: usize| -> Result<Scenario, Failure> {
        Ok(Scenario {
            policy: policy(1, 2, 1)?,
            max_keys: 2,
            init: vec![allow("k", 1, 0)],
            threads: (0..contenders)
                .map(|_| vec![allow("k", 1, SECOND / 2)])
                .collect(),
            post: vec![allow("k", 1, SECOND / 2), Op::KeyCount],
        })
    };
    Ok(vec![
        last_token(2)?,
        last_token(3)?,
        // Two keys, two times: the observed time is global, so once the call at 2 s has
        // returned, no call at an earlier time may pass (the post part at 1.5 s must be
        // refused whichever order the threads took).
        Scenario {
            policy: policy(1, 2, 1)?,
            max_keys: 4,
            init: vec![],
            threads: vec![vec![allow("a", 1, 2 * SECOND)], vec![allow("b", 1, SECOND)]],
            post: vec![allow("c", 1, 3 * SECOND / 2), Op::KeyCount],
        },
        // The same with existing keys (a design may take another path for them), and the
        // whole state observed on a thread of its own while the two calls run: the copy must
        // be the state at one point of a legal order, never half of each call.
        Scenario {
            policy: policy(1, 2, 1)?,
            max_keys: 4,
            init: vec![allow("a", 1, 0), allow("b", 1, 0)],
            threads: vec![
                vec![allow("a", 1, SECOND)],
                vec![allow("b", 1, 2 * SECOND)],
                vec![Op::Snapshot, Op::KeyCount],
            ],
            post: vec![allow("c", 1, 3 * SECOND / 2)],
        },
    ])
}

/// One generated scenario. Times differ across threads (each thread's own times rise), and the
/// post part opens with a call a nanosecond before the latest time a thread used, so that a
/// design publishing a smaller observed time last is seen. About half the scenarios have a
/// third thread that observes the whole state (`snapshot()`, and `key_count()` before or after it)
/// while the calls run.
fn generated(rng: &mut Rng) -> Result<Scenario, Failure> {
    let capacity = 1 + rng.below(3);
    let rate = 1 + rng.below(2);
    let keys = ["a", "b"];
    let max_keys = 1 + rng.below(2) as usize;
    let call = |rng: &mut Rng, now: u64, version: &mut u64| -> Result<Op, Failure> {
        Ok(match rng.below(10) {
            0..=5 => allow(keys[rng.below(2) as usize], 1 + rng.below(capacity), now),
            6 => Op::EvictFull { now },
            7 => Op::KeyCount,
            _ => {
                *version += 1;
                Op::ReplacePolicy {
                    next: policy(*version, 1 + rng.below(3), 1 + rng.below(2))?,
                    expected_version: 1,
                    now,
                }
            }
        })
    };
    let mut version = 1;
    let init_len = rng.below(3);
    let init = (0..init_len)
        .map(|_| Ok(allow(keys[rng.below(2) as usize], 1, 0)))
        .collect::<Result<Vec<_>, Failure>>()?;
    let mut threads = Vec::new();
    for t in 0..2u64 {
        let len = 1 + rng.below(3);
        let mut now = t * (SECOND / 4);
        let mut ops = Vec::new();
        for _ in 0..len {
            now += rng.below(2) * (SECOND / 2);
            ops.push(call(rng, now, &mut version)?);
        }
        threads.push(ops);
    }
    let latest = threads
        .iter()
        .flatten()
        .filter_map(Op::now)
        .max()
        .unwrap_or(0);
    let mut post = Vec::new();
    if latest > 0 {
        post.push(allow(keys[rng.below(2) as usize], 1, latest - 1));
    }
    post.extend([
        allow("a", 1, 4 * SECOND),
        allow("b", 1, 4 * SECOND),
        Op::KeyCount,
    ]);
    if rng.below(2) == 0 {
        threads.push(if rng.below(2) == 0 {
            vec![Op::Snapshot, Op::KeyCount]
        } else {
            vec![Op::KeyCount, Op::Snapshot]
        });
    }
    Ok(Scenario {
        policy: policy(1, capacity, rate)?,
        max_keys,
        init,
        threads,
        post,
    })
}
