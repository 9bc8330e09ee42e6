//! `ucp` and `ucp-slowdown`: strict partitioning by UCP's lookahead on the
//! MPKI curves (UCP) or on the slowdown curves.

use crate::lookahead::lookahead;
use crate::{require_ways, Policy, PolicyError};
use cachepart_machine::{Machine, Plan};

/// Which curve lookahead minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UcpCurve {
    /// LLC misses per kilo-instruction (the original UCP).
    Mpki,
    /// Slowdown against the best IPC.
    Slowdown,
}

/// UCP lookahead partitioning.
#[derive(Clone, Debug)]
pub struct Ucp {
    /// The curve minimised.
    pub curve: UcpCurve,
}

impl Policy for Ucp {
    fn name(&self) -> &str {
        match self.curve {
            UcpCurve::Mpki => "ucp",
            UcpCurve::Slowdown => "ucp-slowdown",
        }
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let name = self.name().to_string();
        let curves = machine.alone_curves()?;
        require_ways(curves.len(), ways, &name)?;
        let m: Vec<&[f64]> = curves
            .iter()
            .map(|c| match self.curve {
                UcpCurve::Mpki => &c.llcmpki[..],
                UcpCurve::Slowdown => &c.slowdown[..],
            })
            .collect();
        let alloc = lookahead(&m, ways as usize);
        let counts: Vec<u32> = alloc.iter().map(|&w| w as u32).collect();
        Ok(Plan::from_way_counts(&counts))
    }
}
