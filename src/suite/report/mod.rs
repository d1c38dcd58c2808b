//! What a person and a platform read: the report of a design (Exercism, Gradescope, JUnit XML,
//! GitHub Classroom), the grade card, the code of a failed test, and the completion of a run cut
//! short.
//!
//! Imports every layer before it.

pub(crate) mod card;
pub mod classroom;
pub mod junit;
pub(crate) mod results;
pub(crate) mod test_code;
pub mod unfinished;
