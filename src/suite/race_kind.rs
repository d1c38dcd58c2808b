//! Which seed race a concurrency counterexample shows, read off its shrunk scenario.
//!
//! A shrunk counterexample keeps only calls the failure needs, so the calls racing in it say
//! which critical sections the design splits: `evict_full` racing a spend is the split
//! eviction, `replace_policy` racing a spend the split cutover, spends alone on one key the
//! double spend, new keys beyond `max_keys` the key bound checked apart from the insert, and spends on different keys at
//! different times the observed time published outside the admission's critical section.
//! A check's own mistake is named only when the scenario says nothing more precise.
use std::collections::BTreeSet;

use crate::model::Op;
use crate::Mistake;

use super::explore::Scenario;

/// The race `scenario` (a shrunk counterexample) shows, when its calls single one out.
pub(crate) fn race_mistake(scenario: &Scenario) -> Option<Mistake> {
    let racing: Vec<&Op> = scenario.threads.iter().flatten().collect();
    if racing.iter().any(|op| matches!(op, Op::EvictFull { .. })) {
        return Some(Mistake::SplitEviction);
    }
    if racing
        .iter()
        .any(|op| matches!(op, Op::ReplacePolicy { .. }))
    {
        return Some(Mistake::SplitCutover);
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
    if every_key.len() > scenario.max_keys {
        return Some(Mistake::SplitKeyBound);
    }
    let times: BTreeSet<u64> = racing
        .iter()
        .filter_map(|op| match op {
            Op::Allow { now, .. } => Some(*now),
            _ => None,
        })
        .collect();
    (times.len() > 1).then_some(Mistake::StaleTime)
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
                Some(Mistake::StaleTime),
            ),
            (
                scenario(2, vec![], vec![vec![allow("a", 1)], vec![allow("b", 1)]]),
                None,
            ),
        ];
        for (s, mistake) in cases {
            assert_eq!(race_mistake(&s), mistake, "{s:?}");
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
        assert_eq!(race_mistake(&cutover_only), Some(Mistake::SplitCutover));
    }
}
