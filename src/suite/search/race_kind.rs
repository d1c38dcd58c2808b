//! Which seed race a concurrency counterexample shows, read off its shrunk scenario.
//!
//! A shrunk counterexample keeps only calls the failure needs, so the calls racing in it say
//! which critical sections the design splits: `evict_full` racing a spend is the split
//! eviction, `replace_policy` racing a spend the split cutover, spends alone on one key the
//! double spend, more keys admitted than `max_keys` allows the key bound checked apart from
//! the insert, and spends on different keys at different times the time check split from the
//! observed time's publication.
//! When the failing execution's history shows an eviction or a cutover that ran whole inside
//! a spend (and no spend inside one of them), or an eviction that returned a count no state
//! it could have seen gives, the spend is the split call: the double spend.
//! A check's own mistake is named only when the scenario says nothing more precise.
use std::collections::BTreeSet;

use crate::model::{Model, Op, Outcome};
use crate::Mistake;

use crate::suite::oracle::linearizability::{self, Event};
use crate::suite::search::scenario::{judge, Execution, Scenario};

/// The race `scenario` (a shrunk counterexample) shows, when its calls single one out; `ran` is
/// the failing execution, when it ran to the end. A snapshot torn by the calls around it is
/// named first, unless an eviction or cutover races (a snapshot taken between a split call's
/// two critical sections shows that call's damage honestly: the call keeps its name).
pub(crate) fn race_mistake(scenario: &Scenario, ran: Option<&Execution>) -> Option<Mistake> {
    let racing: Vec<&Op> = scenario.threads.iter().flatten().collect();
    let splits = racing.iter().any(|op| evicts(op) || cuts_over(op));
    if !splits && ran.is_some_and(|ran| only_a_snapshot_is_torn(scenario, ran)) {
        return Some(Mistake::TornSnapshot);
    }
    race_of_calls(scenario, ran.map(|r| r.history.as_slice()))
}

/// [`race_mistake`] from the calls alone; `history` is the failing execution's.
fn race_of_calls(scenario: &Scenario, history: Option<&[Event]>) -> Option<Mistake> {
    let racing: Vec<&Op> = scenario.threads.iter().flatten().collect();
    if racing.iter().any(|op| evicts(op)) {
        if history.is_some_and(|h| eviction_saw_a_torn_spend(scenario, h)) {
            return Some(Mistake::DoubleSpend);
        }
        return Some(split_call(history, evicts, Mistake::SplitEviction));
    }
    if racing.iter().any(|op| cuts_over(op)) {
        return Some(split_call(history, cuts_over, Mistake::SplitCutover));
    }
    let key = |op: &&Op| match op {
        Op::Allow { key, .. } => Some(key.clone()),
        _ => None,
    };
    let racing_keys: BTreeSet<String> = racing.iter().filter_map(key).collect();
    if racing_keys.len() == 1 {
        return Some(Mistake::DoubleSpend);
    }
    let every_key: BTreeSet<String> = scenario
        .init
        .iter()
        .chain(racing.iter().copied())
        .filter_map(|op| key(&op))
        .collect();
    let times: BTreeSet<u64> = racing
        .iter()
        .filter_map(|op| match op {
            Op::Allow { now, .. } => Some(*now),
            _ => None,
        })
        .collect();
    if every_key.len() > scenario.max_keys {
        // More keys than the bound allows: the key bound, unless the execution shows it
        // held (no more keys admitted than allowed, no count above the bound) and the racing
        // calls carry different times, which then is what the design got wrong.
        let bound_held = history.is_some_and(|h| bound_held(h, scenario.max_keys));
        if !(bound_held && times.len() > 1) {
            return Some(Mistake::SplitKeyBound);
        }
    }
    (times.len() > 1).then_some(Mistake::SplitTimeCheck)
}

/// Whether `execution` fails only because of its snapshots: without the `snapshot()` calls the
/// rest has a legal order that also leaves the state stored at the end, so every other call was
/// atomic and a copy of the state mixed states from around another call (the observation was
/// not one cut). A snapshot that shows another race's damage is often told apart here (without
/// it the stored state at the end still differs), but not always: see [`race_mistake`].
fn only_a_snapshot_is_torn(scenario: &Scenario, execution: &Execution) -> bool {
    let calls = Execution {
        history: execution
            .history
            .iter()
            .filter(|e| e.op != Op::Snapshot)
            .cloned()
            .collect(),
        snapshot: execution.snapshot.clone(),
    };
    calls.history.len() < execution.history.len()
        && judge(scenario, execution).is_err()
        && judge(scenario, &calls).is_ok()
}

fn is_allow(op: &Op) -> bool {
    matches!(op, Op::Allow { .. })
}

fn evicts(op: &Op) -> bool {
    matches!(op, Op::EvictFull { .. })
}

fn cuts_over(op: &Op) -> bool {
    matches!(op, Op::ReplacePolicy { .. })
}

/// Which call of a race between spends and the calls `other` selects was split: the history
/// can say, when one call ran whole inside another and saw it half done. An eviction (a
/// cutover) inside a spend, and no spend inside an eviction (a cutover), is a spend in two
/// critical sections, the double spend; otherwise `split`, the other call's own race.
fn split_call(history: Option<&[Event]>, other: fn(&Op) -> bool, split: Mistake) -> Mistake {
    let split_spend =
        history.is_some_and(|h| spans(h, is_allow, other) && !spans(h, other, is_allow));
    if split_spend {
        Mistake::DoubleSpend
    } else {
        split
    }
}

/// Whether a call `outer` selects was invoked before and returned after a call of another
/// thread that `inner` selects: the inner call ran whole while the outer one was under way.
fn spans(history: &[Event], outer: impl Fn(&Op) -> bool, inner: impl Fn(&Op) -> bool) -> bool {
    history.iter().filter(|o| outer(&o.op)).any(|o| {
        history
            .iter()
            .filter(|i| inner(&i.op))
            .any(|i| i.thread != o.thread && o.invoked < i.invoked && i.returned < o.returned)
    })
}

/// Whether an eviction in `history` returned a count that no state it could have seen
/// gives. An atomic eviction sees the state after some legal order of the calls that
/// returned before it began and of any of those that overlapped it; when the other calls have
/// such an order but after none of them does the specification evict that many buckets, the
/// eviction saw a spend half done (a fresh bucket inserted full and not yet charged): the
/// spend is the split call. Undecided (`false`) when no such order exists, the eviction
/// returned no count, or more than 10 calls overlap it.
fn eviction_saw_a_torn_spend(scenario: &Scenario, history: &[Event]) -> bool {
    let Ok(start) = Model::new(scenario.policy, scenario.max_keys) else {
        return false;
    };
    let end = history.iter().map(|e| e.returned).max().unwrap_or(0);
    history.iter().enumerate().any(|(i, evict)| {
        if !evicts(&evict.op) || !matches!(evict.outcome, Outcome::Evicted { .. }) {
            return false;
        }
        let others = || history.iter().enumerate().filter(move |(j, _)| *j != i);
        let before: Vec<&Event> = others()
            .filter(|(_, e)| e.returned < evict.invoked)
            .map(|(_, e)| e)
            .collect();
        let overlapping: Vec<&Event> = others()
            .filter(|(_, e)| e.returned >= evict.invoked && e.invoked <= evict.returned)
            .map(|(_, e)| e)
            .collect();
        if overlapping.len() > 10 {
            return false;
        }
        let mut explained = false;
        for mask in 0..1u32 << overlapping.len() {
            let mut seen: Vec<Event> = before.iter().map(|e| (*e).clone()).collect();
            seen.extend(
                overlapping
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| mask >> b & 1 == 1)
                    .map(|(_, e)| (*e).clone()),
            );
            if linearizability::check(&start, &seen).is_err() {
                continue;
            }
            explained = true;
            let mut last = evict.clone();
            (last.invoked, last.returned) = (end + 1, end + 2);
            seen.push(last);
            if linearizability::check(&start, &seen).is_ok() {
                return false;
            }
        }
        explained
    })
}

/// Whether an execution kept the key bound: no more distinct keys admitted than `max_keys`,
/// and no key count above it.
fn bound_held(history: &[Event], max_keys: usize) -> bool {
    let admitted: BTreeSet<&str> = history
        .iter()
        .filter_map(|e| match (&e.op, &e.outcome) {
            (Op::Allow { key, .. }, Outcome::Decision(_)) => Some(key.as_str()),
            _ => None,
        })
        .collect();
    let counted_over = history
        .iter()
        .any(|e| matches!(e.outcome, Outcome::KeyCount { keys } if keys > max_keys));
    admitted.len() <= max_keys && !counted_over
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    fn allow(key: &str, now: u64) -> Op {
        Op::Allow {
            key: key.to_string(),
            cost: 1,
            now,
        }
    }

    fn scenario(max_keys: usize, init: Vec<Op>, threads: Vec<Vec<Op>>) -> Scenario {
        Scenario {
            policy: Policy::new(1, 2, 1).expect("a valid policy"),
            max_keys,
            init,
            threads,
            post: vec![allow("a", 9)],
        }
    }

    #[test]
    fn the_racing_calls_name_the_race() {
        let evict = Op::EvictFull { now: 1 };
        let cutover = Op::ReplacePolicy {
            next: Policy::new(2, 1, 1).expect("a valid policy"),
            expected_version: 1,
            now: 1,
        };
        let cases = [
            (
                scenario(2, vec![], vec![vec![evict.clone()], vec![allow("a", 1)]]),
                Some(Mistake::SplitEviction),
            ),
            (
                scenario(
                    2,
                    vec![],
                    vec![vec![cutover], vec![allow("a", 1)], vec![evict]],
                ),
                Some(Mistake::SplitEviction),
            ),
            (
                scenario(2, vec![], vec![vec![allow("a", 0)], vec![allow("a", 0)]]),
                Some(Mistake::DoubleSpend),
            ),
            (
                scenario(
                    2,
                    vec![allow("a", 0)],
                    vec![vec![allow("b", 0)], vec![allow("c", 0)]],
                ),
                Some(Mistake::SplitKeyBound),
            ),
            (
                scenario(2, vec![], vec![vec![allow("a", 2)], vec![allow("b", 1)]]),
                Some(Mistake::SplitTimeCheck),
            ),
            (
                scenario(2, vec![], vec![vec![allow("a", 1)], vec![allow("b", 1)]]),
                None,
            ),
        ];
        for (s, mistake) in cases {
            assert_eq!(race_of_calls(&s, None), mistake, "{s:?}");
        }
        let cutover_only = scenario(
            2,
            vec![],
            vec![
                vec![Op::ReplacePolicy {
                    next: Policy::new(2, 1, 1).expect("a valid policy"),
                    expected_version: 1,
                    now: 1,
                }],
                vec![allow("a", 1)],
            ],
        );
        assert_eq!(
            race_of_calls(&cutover_only, None),
            Some(Mistake::SplitCutover)
        );
    }

    #[test]
    fn an_eviction_or_cutover_inside_a_spend_is_a_split_spend() {
        let decision = crate::Decision {
            allowed: true,
            whole_tokens: 0,
            retry_after_nanos: 0,
        };
        let cutover = Op::ReplacePolicy {
            next: Policy::new(2, 1, 1).expect("a valid policy"),
            expected_version: 1,
            now: 1,
        };
        for (other, split) in [
            (Op::EvictFull { now: 1 }, Mistake::SplitEviction),
            (cutover, Mistake::SplitCutover),
        ] {
            let s = scenario(1, vec![], vec![vec![other.clone()], vec![allow("k", 1)]]);
            let at = |thread, op: &Op, invoked, returned| Event {
                thread,
                op: op.clone(),
                outcome: Outcome::Decision(decision),
                invoked,
                returned,
            };
            // The spend began first and returned last: the other call ran inside it.
            let inside_spend = [at(2, &allow("k", 1), 0, 3), at(1, &other, 1, 2)];
            assert_eq!(
                race_of_calls(&s, Some(&inside_spend)),
                Some(Mistake::DoubleSpend)
            );
            // The spend ran inside the other call: that call is the split one.
            let inside_other = [at(1, &other, 0, 3), at(2, &allow("k", 1), 1, 2)];
            assert_eq!(race_of_calls(&s, Some(&inside_other)), Some(split));
            // Overlapping, neither inside the other: the scenario's own race.
            let overlapping = [at(2, &allow("k", 1), 0, 2), at(1, &other, 1, 3)];
            assert_eq!(race_of_calls(&s, Some(&overlapping)), Some(split));
        }
    }

    #[test]
    fn an_eviction_that_saw_a_half_done_spend_is_a_split_spend() {
        const SECOND: u64 = 1_000_000_000;
        // Capacity 1, rate 1.
        let s = |init, threads| Scenario {
            policy: Policy::new(1, 1, 1).expect("a valid policy"),
            max_keys: 1,
            init,
            threads,
            post: vec![],
        };
        let evict = Op::EvictFull { now: SECOND };
        let spent = Outcome::Decision(crate::Decision {
            allowed: true,
            whole_tokens: 0,
            retry_after_nanos: 0,
        });
        let evicted = Outcome::Evicted { removed: 1 };
        let at = |thread, op: &Op, outcome: &Outcome, invoked, returned| Event {
            thread,
            op: op.clone(),
            outcome: outcome.clone(),
            invoked,
            returned,
        };
        // A new key's spend overlaps an eviction (neither runs inside the other) that
        // removed one bucket. Before the spend there is no bucket, after it an empty one: no
        // atomic eviction removes one, so it saw the spend half done.
        let fresh = s(vec![], vec![vec![evict.clone()], vec![allow("k", SECOND)]]);
        let torn = [
            at(2, &allow("k", SECOND), &spent, 0, 2),
            at(1, &evict, &evicted, 1, 3),
        ];
        assert_eq!(
            race_of_calls(&fresh, Some(&torn)),
            Some(Mistake::DoubleSpend)
        );
        // The same history with a count of 0 is legal for the eviction: the scenario's race.
        let whole = [
            torn[0].clone(),
            at(1, &evict, &Outcome::Evicted { removed: 0 }, 1, 3),
        ];
        assert_eq!(
            race_of_calls(&fresh, Some(&whole)),
            Some(Mistake::SplitEviction)
        );
        // The key spent at 0 is full again at 1 s: an eviction that removes it while a spend
        // at 1 s overlaps it returned a legal count (it removed the bucket too late): the
        // split eviction.
        let refilled = s(
            vec![allow("k", 0)],
            vec![vec![evict.clone()], vec![allow("k", SECOND)]],
        );
        let late = [
            at(0, &allow("k", 0), &spent, 0, 1),
            at(2, &allow("k", SECOND), &spent, 2, 4),
            at(1, &evict, &evicted, 3, 5),
        ];
        assert_eq!(
            race_of_calls(&refilled, Some(&late)),
            Some(Mistake::SplitEviction)
        );
    }

    fn event(key: &str, now: u64, outcome: Outcome) -> Event {
        Event {
            thread: 1,
            op: allow(key, now),
            outcome,
            invoked: 0,
            returned: 1,
        }
    }

    #[test]
    fn keys_beyond_the_bound_are_a_time_race_when_the_bound_held_and_times_differ() {
        // max_keys 1: "a" at 2 s admitted, "b" at 1 s refused for the key bound where every
        // legal order refuses it for its time (or admits it first): the time check raced.
        let s = scenario(1, vec![], vec![vec![allow("a", 2)], vec![allow("b", 1)]]);
        let decision = crate::Decision {
            allowed: true,
            whole_tokens: 1,
            retry_after_nanos: 0,
        };
        let held = [
            event("a", 2, Outcome::Decision(decision)),
            event(
                "b",
                1,
                Outcome::Error(crate::LimitError::KeyCapacityReached { max_keys: 1 }),
            ),
        ];
        assert_eq!(
            race_of_calls(&s, Some(&held)),
            Some(Mistake::SplitTimeCheck)
        );
        let broken = [
            event("a", 2, Outcome::Decision(decision)),
            event("b", 1, Outcome::Decision(decision)),
        ];
        assert_eq!(
            race_of_calls(&s, Some(&broken)),
            Some(Mistake::SplitKeyBound)
        );
        assert_eq!(race_of_calls(&s, None), Some(Mistake::SplitKeyBound));
    }
}
