//! Checks on real threads. Every round starts its threads together behind a barrier,
//! records each call with logical invocation and return times, and then either counts
//! (the seed's twenty contenders) or checks the whole history for linearizability against
//! the specification, including a sequential post part that exposes races whose damage shows
//! only later (a spent bucket that comes back full, a spend lost at cutover).
//!
//! Every check first explores the small scenarios of [`races`](crate::suite::checks::races): under shuttle
//! and loom with the controlled scheduler, and that is all; under std on real threads with
//! the facade's perturbation on. Under std the rounds here follow, for designs whose calls
//! passed no perturbation point in those scenarios (locks and atomics of raw `std::sync`,
//! which nothing perturbs): `RATELIMIT_LAB_ROUNDS` rounds, in which a race shows in some
//! rounds, so such a design is caught with a probability, not always, and the failure says
//! in how many of the rounds the race showed.
use crate::suite::host::subject::Subject;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

use crate::model::{Op, Outcome};
use crate::{LimitError, Policy};

use crate::suite::checks::races::{self, allow, policy};
use crate::suite::checks::stress::{allowed, spawn, stress, Round};
use crate::suite::core::backend::Backend;
use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::core::panics::guarded;
use crate::suite::host::perturbation;
use crate::suite::oracle::linearizability::Event;

/// Runs a check's scenarios (explored under shuttle and loom, perturbed on real threads)
/// and says whether stress rounds must follow: only under std, and only for a design whose
/// calls passed no perturbation point, one on raw `std::sync` that the perturbed scenarios
/// could not shake.
///
/// # Errors
///
/// The scenarios' failure.
fn stress_rounds_needed(scenarios: impl FnOnce() -> Result<(), Failure>) -> Result<bool, Failure> {
    let before = perturbation::reached();
    scenarios()?;
    Ok(!Backend::current().is_controlled() && perturbation::reached() == before)
}

/// Twenty threads each spend one token at t = 0 from capacity ten: exactly ten pass, and the
/// history linearizes.
pub(crate) fn r2_twenty_contenders_ten_pass(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::r2_twenty_contenders_ten_pass(subject))? {
        return Ok(());
    }
    stress((env::rounds() / 4).max(1), |round, explain| {
        let r = Round::new(subject, policy(1, 10, 2)?, 4)?;
        let events = r.parallel((0..20).map(|_| vec![allow("k", 1, 0)]).collect())?;
        let passed = events.iter().filter(|e| allowed(e)).count();
        if passed != 10 {
            let mut history = events.clone();
            history.extend(r.sequential(vec![allow("k", 1, 0)])?);
            let why = r
                .judge(&history, explain)
                .err()
                .and_then(|f| f.detail)
                .unwrap_or_default();
            return Err(Failure::new(format!(
                "round {}: {passed} of 20 concurrent unit requests passed at t=0 with capacity 10; exactly 10 must",
                round + 1
            ))
            .with_detail(why));
        }
        r.judge(&events, explain)
    })
}

/// Threads spend mixed costs at one instant; the admitted costs must add up to exactly what
/// the bucket lost, which a sequential probe then reads back.
pub(crate) fn i2_each_cost_is_deducted_once(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::i2_each_cost_is_deducted_once(subject))? {
        return Ok(());
    }
    let mut rng = env::seed() ^ 0x12;
    stress(env::rounds(), |round, explain| {
        let r = Round::new(subject, policy(1, 10, 1)?, 4)?;
        let per_thread: Vec<Vec<Op>> = (0..4)
            .map(|_| {
                (0..2)
                    .map(|_| {
                        rng = crate::suite::core::random::splitmix(rng);
                        allow("k", 1 + rng % 4, 5)
                    })
                    .collect()
            })
            .collect();
        let mut history = r.sequential(vec![allow("k", 1, 0)])?;
        history.extend(r.parallel(per_thread)?);
        let spent: u64 = history
            .iter()
            .filter(|e| allowed(e))
            .map(|e| match e.op {
                Op::Allow { cost, .. } => cost,
                _ => 0,
            })
            .sum();
        history.extend(r.sequential(vec![allow("k", 10, 5)])?);
        let left = match history.last().map(|e| &e.outcome) {
            Some(Outcome::Decision(d)) if !d.allowed => Some(d.whole_tokens),
            _ => None,
        };
        if spent > 10 || left != Some(10 - spent.min(10)) {
            let why = r
                .judge(&history, explain)
                .err()
                .and_then(|f| f.detail)
                .unwrap_or_default();
            return Err(Failure::new(format!(
                "round {}: admitted costs add up to {spent} tokens from capacity 10 (one spent before), but the bucket then reports {} whole tokens left; every admitted cost must be deducted exactly once",
                round + 1,
                left.map_or("no rejection".to_string(), |l| l.to_string())
            ))
            .with_detail(why));
        }
        r.judge(&history, explain)
    })
}

/// Threads race to create distinct keys under a small bound: exactly `max_keys` succeed and
/// the rest get `KeyCapacityReached`.
pub(crate) fn i3_concurrent_new_keys_respect_max_keys(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::i3_concurrent_new_keys_respect_max_keys(subject))? {
        return Ok(());
    }
    let keys = ["a", "b", "c", "d", "e", "f"];
    stress((env::rounds() / 2).max(1), |round, _| {
        let r = Round::new(subject, policy(1, 3, 1)?, 3)?;
        let events = r.parallel(keys.iter().map(|k| vec![allow(k, 1, 0)]).collect())?;
        let created = events.iter().filter(|e| allowed(e)).count();
        let refused = events
            .iter()
            .filter(|e| e.outcome == Outcome::Error(LimitError::KeyCapacityReached { max_keys: 3 }))
            .count();
        let count = guarded(|| r.design.key_count())
            .map_err(|msg| Failure::new(format!("key_count() panicked: {msg}")).as_panic())?;
        if created != 3 || refused != 3 || count != 3 {
            let mut text = String::new();
            for e in &events {
                let _ = writeln!(text, "  thread {}: {} -> {}", e.thread, e.op, e.outcome);
            }
            return Err(Failure::new(format!(
                "round {}: six threads created six keys under max_keys 3: {created} were admitted, {refused} refused with KeyCapacityReached, key_count() is {count}; it must be 3, 3 and 3",
                round + 1
            ))
            .with_detail(text));
        }
        Ok(())
    })
}

/// Random rounds of mixed calls on real threads, each history (init, parallel and post parts)
/// checked for linearizability.
pub(crate) fn r2_concurrent_histories_linearize(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::r2_concurrent_histories_linearize(subject))? {
        return Ok(());
    }
    let mut rng = env::seed() ^ 0x2;
    let mut next = move |n: u64| {
        rng = crate::suite::core::random::splitmix(rng);
        rng % n
    };
    stress(env::rounds(), |_, explain| {
        let capacity = 1 + next(3);
        let rate = [1, 2, 1_000_000_000][next(3) as usize];
        let max_keys = 1 + next(2) as usize;
        let start = policy(1, capacity, rate)?;
        let r = Round::new(subject, start, max_keys)?;
        let t = 1 + next(2);
        let mut init = vec![allow("a", 1 + next(capacity), 0)];
        if next(2) == 0 {
            init.push(allow("b", 1, 0));
        }
        let threads = 2 + next(2) as usize;
        let mut version = 1;
        let per_thread: Vec<Vec<Op>> = (0..threads)
            .map(|_| {
                (0..1 + next(2))
                    .map(|_| match next(6) {
                        0 => Op::EvictFull { now: t },
                        1 => {
                            version += 1;
                            let next_policy =
                                Policy::new(version, 1 + next(4), [1, 2, 4][next(3) as usize])
                                    .unwrap_or(start);
                            Op::ReplacePolicy {
                                next: next_policy,
                                expected_version: 1 + next(version),
                                now: t,
                            }
                        }
                        _ => allow(["a", "b"][next(2) as usize], 1 + next(capacity), t),
                    })
                    .collect()
            })
            .collect();
        let mut history = r.sequential(init)?;
        history.extend(r.parallel(per_thread)?);
        history.extend(r.sequential(vec![
            Op::KeyCount,
            allow("a", 1, t),
            allow("b", 1, t),
            allow("a", 1, t),
        ])?);
        r.judge(&history, explain)
    })
}

/// Keys whose spend raced a maintenance call and then gave back a full budget: each entry is
/// the key and what the post-race probe returned.
fn undone_spends(events: &[Event], probes: &[Event]) -> Vec<String> {
    probes
        .iter()
        .filter(|p| allowed(p))
        .filter_map(|p| match &p.op {
            Op::Allow { key, .. } => events
                .iter()
                .any(|e| allowed(e) && matches!(&e.op, Op::Allow { key: k, .. } if k == key))
                .then(|| {
                    format!(
                        "  {key}: spent 1 during the race, then {} -> {}",
                        p.op, p.outcome
                    )
                }),
            _ => None,
        })
        .collect()
}

/// A maintenance call (`evict_full` or `replace_policy`, built by `maintain`) races threads
/// that keep spending one token from many full keys, cycling over them, from before the
/// call begins until it returns; afterwards every key that was spent must refuse a
/// full-capacity request at the same instant.
///
/// There are more spenders than cores (twice as many, plus one): on an otherwise idle
/// machine a maintenance thread that releases its lock between two critical sections (even
/// with `yield_now` in the gap) finds no other runnable thread on its core and takes the lock
/// back before a spender blocked on it wakes up, so with a single spender the race showed
/// mainly when something else loaded the machine.
fn maintenance_never_undoes_a_spend(
    subject: Subject,
    what: &str,
    maintain: impl Fn(u64) -> Op + Send + Sync + 'static,
) -> Result<(), Failure> {
    use std::sync::atomic::AtomicBool;
    const T: u64 = 10_000_000_000;
    let maintain = Arc::new(maintain);
    let spender_count = 2 * thread::available_parallelism().map_or(2, |n| n.get()) + 1;
    stress(env::rounds(), |round, _| {
        // Few keys keep the maintenance call's critical sections short, so a spinning spender
        // can slip into the gap between them; many keys make the gap's neighbours long.
        let n = [1usize, 2, 4, 8, 24][(round % 5) as usize];
        let keys: Vec<String> = (0..n).map(|i| format!("k{i:02}")).collect();
        let r = Round::new(subject, policy(1, 3, 1)?, n)?;
        r.sequential(keys.iter().map(|k| allow(k, 3, 0)).collect())?;
        let started = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let spenders: Vec<_> = (0..spender_count)
            .map(|s| {
                let (design, clock) = (r.design.clone(), r.clock.clone());
                let (started, done) = (started.clone(), done.clone());
                // Each spender starts at its own key, so together they reach every key early.
                let mut order = keys.clone();
                order.rotate_left(s * n / spender_count);
                spawn(move || {
                    let mut events = Vec::new();
                    for key in order.iter().cycle() {
                        started.store(true, Ordering::SeqCst);
                        events.push(Round::call(
                            design.as_ref(),
                            &clock,
                            s + 2,
                            allow(key, 1, T),
                        )?);
                        if done.load(Ordering::SeqCst) {
                            break;
                        }
                    }
                    Ok::<Vec<Event>, Failure>(events)
                })
            })
            .collect();
        while !started.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        let maintenance = Round::call(r.design.as_ref(), &r.clock, 1, maintain(T));
        done.store(true, Ordering::SeqCst);
        let mut events = Vec::new();
        for spender in spenders {
            match spender.join() {
                Ok(result) => events.extend(result?),
                Err(_) => return Err(Failure::new("a spending thread died")),
            }
        }
        events.push(maintenance?);
        let probes = r.sequential(keys.iter().map(|k| allow(k, 3, T)).collect())?;
        let undone = undone_spends(&events, &probes);
        if !undone.is_empty() {
            let race: Vec<String> = events
                .iter()
                .filter(|e| e.thread == 1)
                .map(|e| format!("  thread 1: {} -> {}", e.op, e.outcome))
                .collect();
            return Err(Failure::new(format!(
                "round {}: {} of {n} keys spent tokens while {what} ran, yet afterwards granted a full budget of 3 at the same instant: a spend was undone",
                round + 1,
                undone.len()
            ))
            .with_detail(format!(
                "{}\n{}\nIn every sequential order a spent key holds at most 2 tokens at {T} ns afterwards (spend then {what}: the bucket is not full, nothing changes; {what} then spend: the spend comes after), so a full budget means {what} acted on a bucket it read before a spend and wrote after it.",
                race.join("\n"),
                undone.join("\n")
            )));
        }
        Ok(())
    })
}

/// `evict_full` racing spends never drops a bucket that a spend emptied in between.
pub(crate) fn r3_eviction_never_undoes_a_spend(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::r3_eviction_never_undoes_a_spend(subject))? {
        return Ok(());
    }
    maintenance_never_undoes_a_spend(subject, "evict_full", |now| Op::EvictFull { now })
}

/// `replace_policy` racing spends never publishes balances read before a spend.
pub(crate) fn r4_cutover_never_undoes_a_spend(subject: Subject) -> Result<(), Failure> {
    if !stress_rounds_needed(|| races::r4_cutover_never_undoes_a_spend(subject))? {
        return Ok(());
    }
    let next = policy(2, 3, 1)?;
    maintenance_never_undoes_a_spend(subject, "replace_policy", move |now| Op::ReplacePolicy {
        next,
        expected_version: 1,
        now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stress_counts_the_rounds_that_show_a_race_and_reports_the_first() {
        let mut ran = 0;
        let mut explained = Vec::new();
        let result = stress(10, |round, explain| {
            ran += 1;
            explained.push(explain);
            if round == 2 || round == 6 {
                Err(Failure::new(format!("round {}: two admitted", round + 1)))
            } else {
                Ok(())
            }
        });
        assert_eq!(ran, 10, "a round that shows a race does not end the check");
        assert_eq!(
            explained,
            [true, true, true, false, false, false, false, false, false, false],
            "only rounds up to the first that shows the race explain it"
        );
        let failure = result.expect_err("two rounds showed the race");
        assert!(
            failure
                .summary
                .starts_with("round 3: two admitted (found in 2 of 10 rounds on real threads"),
            "{}",
            failure.summary
        );
        assert_eq!(stress(5, |_, _| Ok(())), Ok(()));
    }

    #[test]
    fn stress_stops_at_a_panic() {
        let mut ran = 0;
        let result = stress(10, |round, _| {
            ran += 1;
            if round == 1 {
                Err(Failure::new("allow panicked").as_panic())
            } else {
                Ok(())
            }
        });
        assert_eq!(ran, 2);
        assert_eq!(
            result.map_err(|f| f.summary),
            Err("allow panicked".to_string())
        );
    }
}
