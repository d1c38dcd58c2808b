//! The one random-operation generator: proptest strategies for whole operation sequences
//! (a starting policy, a key bound and the calls), used by the suite's property checks and by
//! the project's differential tests alike.
//!
//! A [`Mix`] says what a family of sequences contains; [`case`] turns it into a strategy.
//! Times are generated as deltas (mostly forward, sometimes backwards, sometimes huge) and
//! accumulated, saturating at both ends of `u64`; costs and versions are picked relative to
//! the policy the sequence would have in force ("the capacity plus one", "a stale expected
//! version"), so that boundaries stay boundaries as the policy moves. Shrinking removes
//! operations and simplifies each pick.
use proptest::prelude::*;

use crate::model::Op;
use crate::{Policy, MAX_QUANTITY};

const M: u64 = MAX_QUANTITY;

/// One generated step before times are accumulated: a time delta (possibly backwards) and
/// what to call.
#[derive(Clone, Debug)]
enum Raw {
    Allow {
        key: &'static str,
        cost: CostPick,
        dt: i64,
    },
    Evict {
        dt: i64,
    },
    Replace {
        capacity: u64,
        rate: u64,
        version: VersionPick,
        dt: i64,
    },
    KeyCount,
}

#[derive(Clone, Copy, Debug)]
enum CostPick {
    One,
    Two,
    Capacity,
    BelowCapacity,
    AboveCapacity,
    Zero,
    Max,
}

#[derive(Clone, Copy, Debug)]
enum VersionPick {
    Next,
    Skip,
    StaleExpected,
    SameVersion,
    Max,
}

/// A sequence to run: the starting policy, the key bound and the operations.
#[derive(Clone, Debug)]
pub struct Case {
    /// The policy the limiter starts with.
    pub policy: Policy,
    /// The limiter's key bound.
    pub max_keys: usize,
    /// The calls, in order.
    pub ops: Vec<Op>,
}

fn dt(extreme: bool) -> impl Strategy<Value = i64> {
    let huge = if extreme { i64::MAX } else { 1_000_000_000_000 };
    prop_oneof![
        3 => Just(0i64),
        4 => 1i64..1_000_000_000,
        2 => prop::sample::select(vec![1i64, 249_999_999, 250_000_000, 333_333_333, 333_333_334, 499_999_999, 500_000_000, 5_500_000_000]),
        1 => 1i64..=huge,
        1 => -1_000_000_000i64..0,
    ]
}

fn cost() -> impl Strategy<Value = CostPick> {
    prop_oneof![
        4 => Just(CostPick::One),
        2 => Just(CostPick::Two),
        2 => Just(CostPick::Capacity),
        2 => Just(CostPick::BelowCapacity),
        1 => Just(CostPick::AboveCapacity),
        1 => Just(CostPick::Zero),
        1 => Just(CostPick::Max),
    ]
}

fn version() -> impl Strategy<Value = VersionPick> {
    prop_oneof![
        6 => Just(VersionPick::Next),
        1 => Just(VersionPick::Skip),
        1 => Just(VersionPick::StaleExpected),
        1 => Just(VersionPick::SameVersion),
        1 => Just(VersionPick::Max),
    ]
}

fn key(wide: bool) -> impl Strategy<Value = &'static str> {
    // Now and then a key from a wider set: a design's slip can be confined to the keys of one
    // shard or hash bucket, and "a" to "d" fall in only 4 of 8 shards under FNV-1a modulo 8
    // ("e" to "h" fill the other 4).
    let usual = prop_oneof![
        6 => prop::sample::select(vec!["a", "b", "c"]),
        1 => prop::sample::select(vec!["d", "", " "]),
        1 => prop::sample::select(vec!["e", "f", "g", "h"]),
    ];
    if wide {
        // Blank in Java's sense (tab, em space, a separator control, line breaks) or not
        // (no-break spaces, NEL, spaces around a letter).
        let look_alikes = prop::sample::select(vec![
            "\t", "\u{2003}", "\u{1c}", " \t\n\r", "\u{3000}", "\u{a0}", "\u{2007}", "\u{85}",
            " x ",
        ]);
        prop_oneof![6 => usual, 2 => look_alikes].boxed()
    } else {
        usual.boxed()
    }
}

fn quantity(extreme: bool) -> impl Strategy<Value = u64> {
    if extreme {
        prop::sample::select(vec![1, 2, 3, 1_000_000_000, M - 1, M]).boxed()
    } else {
        prop::sample::select(vec![1, 2, 3, 4, 5, 7, 10, 20, 1_000_000_000]).boxed()
    }
}

/// What one family of sequences may contain: the weights of `evict_full`, `replace_policy`
/// and `key_count` against `allow` (weight 8), whether quantities and times go to the extremes
/// (`MAX_QUANTITY`, times near `u64::MAX`), the range of `max_keys`, the range of lengths and
/// whether keys include the look-alikes (no-break spaces, Java's separator controls, tabs).
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Weight of `evict_full` (against 8 for `allow`).
    pub evict: u32,
    /// Weight of `replace_policy`.
    pub replace: u32,
    /// Weight of `key_count`.
    pub count: u32,
    /// Quantities from `{1, 2, 3, 10⁹, MAX_QUANTITY − 1, MAX_QUANTITY}` and times near
    /// `u64::MAX`, instead of small ones.
    pub extreme: bool,
    /// Smallest and largest `max_keys`.
    pub max_keys: (usize, usize),
    /// Fewest and most operations (the most excluded).
    pub len: (usize, usize),
    /// Keys also from the look-alikes: blank in Java's sense or not.
    pub wide_keys: bool,
}

/// `allow` and `key_count` only.
pub const ADMISSIONS: Mix = Mix {
    evict: 0,
    replace: 0,
    count: 1,
    extreme: false,
    max_keys: (4, 6),
    len: (1, 40),
    wide_keys: false,
};
/// Many `evict_full` calls under a small key bound.
pub const EVICTIONS: Mix = Mix {
    evict: 3,
    replace: 0,
    count: 2,
    extreme: false,
    max_keys: (1, 3),
    len: (1, 40),
    wide_keys: false,
};
/// Many cutovers, with stale and equal versions among them.
pub const CUTOVERS: Mix = Mix {
    evict: 1,
    replace: 3,
    count: 1,
    extreme: false,
    max_keys: (1, 4),
    len: (1, 40),
    wide_keys: false,
};
/// Every method at `MAX_QUANTITY` and times near `u64::MAX`.
pub const EXTREMES: Mix = Mix {
    evict: 1,
    replace: 2,
    count: 1,
    extreme: true,
    max_keys: (1, 3),
    len: (1, 40),
    wide_keys: false,
};
/// Long sequences of every method over look-alike keys, for differential testing of whole
/// designs (not a check: its failures shrink slowly).
pub const WIDE: Mix = Mix {
    evict: 2,
    replace: 2,
    count: 1,
    extreme: false,
    max_keys: (1, 6),
    len: (1, 400),
    wide_keys: true,
};
/// [`WIDE`] at the extremes.
pub const WIDE_EXTREMES: Mix = Mix {
    extreme: true,
    ..WIDE
};

fn raw(mix: Mix) -> impl Strategy<Value = Raw> {
    let allow = (key(mix.wide_keys), cost(), dt(mix.extreme))
        .prop_map(|(key, cost, dt)| Raw::Allow { key, cost, dt });
    let evict = dt(mix.extreme).prop_map(|dt| Raw::Evict { dt });
    let replace = (
        quantity(mix.extreme),
        quantity(mix.extreme),
        version(),
        dt(mix.extreme),
    )
        .prop_map(|(capacity, rate, version, dt)| Raw::Replace {
            capacity,
            rate,
            version,
            dt,
        });
    prop_oneof![
        8 => allow,
        mix.evict => evict,
        mix.replace => replace,
        mix.count => Just(Raw::KeyCount),
    ]
}

/// Sequences of the family `mix`, starting from version 1 of a policy drawn from the mix's
/// quantities, at time 0, a random time or (extreme mixes) near `u64::MAX`.
pub fn case(mix: Mix) -> impl Strategy<Value = Case> {
    let start = if mix.extreme {
        prop_oneof![
            Just(0u64),
            Just(u64::MAX - 3_000_000_000),
            (u64::MAX / 2)..u64::MAX
        ]
        .boxed()
    } else {
        prop_oneof![Just(0u64), 0u64..10_000_000_000].boxed()
    };
    (
        quantity(mix.extreme),
        quantity(mix.extreme),
        mix.max_keys.0..=mix.max_keys.1,
        start,
        prop::collection::vec(raw(mix), mix.len.0..mix.len.1),
    )
        .prop_filter_map("valid policy", |(capacity, rate, max_keys, start, raws)| {
            let policy = Policy::new(1, capacity, rate).ok()?;
            Some(Case {
                policy,
                max_keys,
                ops: concretize(policy, start, &raws),
            })
        })
}

/// Accumulates time deltas (saturating at both ends) and resolves costs and versions
/// against the policy the sequence would have in force if every cutover succeeded.
fn concretize(policy: Policy, start: u64, raws: &[Raw]) -> Vec<Op> {
    let mut now = start;
    let mut current = policy;
    let mut ops = Vec::with_capacity(raws.len());
    let advance = |now: &mut u64, dt: i64| {
        *now = if dt >= 0 {
            now.saturating_add(dt.unsigned_abs())
        } else {
            now.saturating_sub(dt.unsigned_abs())
        };
        *now
    };
    for r in raws {
        ops.push(match *r {
            Raw::Allow { key, cost, dt } => {
                let cap = current.capacity();
                let cost = match cost {
                    CostPick::One => 1,
                    CostPick::Two => 2.min(cap),
                    CostPick::Capacity => cap,
                    CostPick::BelowCapacity => (cap - 1).max(1),
                    CostPick::AboveCapacity => cap.saturating_add(1),
                    CostPick::Zero => 0,
                    CostPick::Max => M,
                };
                Op::Allow {
                    key: key.to_string(),
                    cost,
                    now: advance(&mut now, dt),
                }
            }
            Raw::Evict { dt } => Op::EvictFull {
                now: advance(&mut now, dt),
            },
            Raw::Replace {
                capacity,
                rate,
                version,
                dt,
            } => {
                let v = current.version();
                let (next_version, expected) = match version {
                    VersionPick::Next => (v.saturating_add(1).min(M), v),
                    VersionPick::Skip => (v.saturating_add(3).min(M), v),
                    VersionPick::StaleExpected => (v.saturating_add(1).min(M), v.saturating_sub(1)),
                    VersionPick::SameVersion => (v, v),
                    VersionPick::Max => (M, v),
                };
                let Ok(next) = Policy::new(next_version, capacity, rate) else {
                    continue;
                };
                let when = advance(&mut now, dt);
                if dt >= 0 && expected == v && next_version > v {
                    current = next;
                }
                Op::ReplacePolicy {
                    next,
                    expected_version: expected,
                    now: when,
                }
            }
            Raw::KeyCount => Op::KeyCount,
        });
    }
    ops
}
