//! Deliberately wrong designs: each breaks one requirement or invariant the way a learner
//! might, and the conformance suite must reject it with the right diagnosis.
