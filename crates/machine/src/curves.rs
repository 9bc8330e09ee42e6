//! Per-app curves over way counts: what an app does alone with 1..=W ways.

use serde::{Deserialize, Serialize};

/// One app's behaviour alone at every count of an alone sweep. Over ways
/// (the usual case), index `w - 1` of every vector holds the value at `w`
/// ways; over colors, index `i` holds the value at the sweep's `i`-th
/// color count ([`crate::Axis::Colors`]). All vectors have the same length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppCurves {
    /// Program name.
    pub name: String,
    /// Instructions per cycle.
    pub ipc: Vec<f64>,
    /// LLC misses per kilo-instruction.
    pub llcmpki: Vec<f64>,
    /// LLC misses per kilo-cycle.
    pub llcmpkc: Vec<f64>,
    /// Memory bandwidth in MB/s.
    pub bandwidth_mbps: Vec<f64>,
    /// Slowdown against the best IPC over all way counts: `max ipc / ipc(w)`.
    pub slowdown: Vec<f64>,
    /// Fraction of cycles stalled on L2 misses (`stalls_l2_miss`), if known.
    pub stalls_l2_miss: Option<Vec<f64>>,
    /// Fraction of cycles stalled on memory (LLC misses), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls_memory: Option<Vec<f64>>,
}

impl AppCurves {
    /// Builds curves from IPC, MPKI, MPKC and bandwidth; the slowdown curve is
    /// derived (`max ipc / ipc(w)`).
    pub fn new(
        name: &str,
        ipc: Vec<f64>,
        llcmpki: Vec<f64>,
        llcmpkc: Vec<f64>,
        bandwidth_mbps: Vec<f64>,
    ) -> Self {
        let best = ipc.iter().copied().fold(f64::MIN, f64::max);
        let slowdown = ipc.iter().map(|&v| best / v).collect();
        AppCurves {
            name: name.to_string(),
            ipc,
            llcmpki,
            llcmpkc,
            bandwidth_mbps,
            slowdown,
            stalls_l2_miss: None,
            stalls_memory: None,
        }
    }

    /// Number of way counts `W`.
    pub fn ways(&self) -> usize {
        self.ipc.len()
    }
}
