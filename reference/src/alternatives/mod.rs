//! Correct designs built differently from [`TokenBucket`](crate::TokenBucket): the
//! conformance suite must accept each of them.
