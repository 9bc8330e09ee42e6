//! Execution throttling (Zhang et al.): the best-fairness search
//! ([`search`]), the ideal static page-coloring split it compares with
//! ([`coloring`]) and scheduling-quantum adjustment with an idle process
//! ([`quantum`]).

pub mod coloring;
pub mod quantum;
pub mod search;
