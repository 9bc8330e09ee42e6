//! Running: algorithms on the table-driven machine ([`profile`]),
//! scenarios on the simulator ([`sim`]), alone sweeps of one trace over
//! way or color counts ([`alone`]) and the metrics tables and stall-rate
//! curves made from them ([`from_trace`], [`stall_curve`]), miss-rate
//! curves ([`curve`]), online controllers' scenario sections ([`online`],
//! [`online_throttle`]), page-color policies ([`coloring`]), the throttling
//! search ([`throttle`]), the cachegrind-compatible simulation
//! ([`cachegrind`]), LFOC's classes ([`classify`]) and two tables side by
//! side ([`compare`]).

pub mod alone;
pub mod cachegrind;
pub mod classify;
pub mod coloring;
pub mod compare;
pub mod curve;
pub mod from_trace;
pub mod online;
pub mod online_throttle;
pub mod profile;
pub mod sim;
pub mod stall_curve;
pub mod throttle;
