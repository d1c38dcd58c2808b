//! A correct submission: the design in `design.rs`, under the name the course's suite grades.
mod design;

pub use design::Design as MyLimiter;
