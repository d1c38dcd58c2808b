//! The checks: the table of every check with what it guards ([`table`](table::CHECKS)), and the
//! checks themselves by kind (the seed's scenarios, arithmetic, properties, lesson fixtures,
//! concurrency: its races under every backend and its stress rounds on real threads).
//!
//! Imports `core`, `host`, `oracle` and `search`.

pub(crate) mod arithmetic;
pub(crate) mod concurrency;
pub(crate) mod examples;
pub(crate) mod lesson_fixtures;
pub(crate) mod properties;
pub(crate) mod races;
pub(crate) mod stress;
pub(crate) mod table;
