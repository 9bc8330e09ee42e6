//! Code shared by the bench, the example and the accuracy tests.
pub mod reference;
pub mod traces;
