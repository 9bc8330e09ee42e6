//! Memory latency under load: a queueing model driven by the bandwidth
//! every core used over a window of global simulated time.
//!
//! At the end of each window (`bandwidth-window-cycles` of global time,
//! the clock of the core that is furthest behind), the utilisation is
//! `u = bytes moved in the window / (bandwidth x window length)`, clamped
//! to `[0, dram-max-utilisation]`, and the DRAM latency for the next
//! window becomes
//!
//! ```text
//! latency = dram-ns x (1 + k x u / (1 - u))        k = dram-queue-factor
//! ```
//!
//! the waiting time of an M/M/1-like queue scaled by `k`: flat at low
//! load, growing steeply as `u` nears 1. Bytes are lines read from memory
//! (LLC misses) plus dirty lines written back, times the line size.

use super::timing::{TimingConfig, TICKS_PER_CYCLE};

/// The DRAM latency model's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Dram {
    base_cycles: f64,
    bytes_per_cycle: f64,
    k: f64,
    u_max: f64,
    window_ticks: u64,
    window_end: u64,
    last_time: u64,
    last_bytes: u64,
    utilisation: f64,
    latency_cycles: f64,
}

/// The loaded latency of the model for utilisation `u` (clamped to
/// `[0, u_max]`).
pub fn queued_latency(base: f64, k: f64, u: f64, u_max: f64) -> f64 {
    let u = u.clamp(0.0, u_max);
    base * (1.0 + k * u / (1.0 - u))
}

impl Dram {
    /// An idle memory as configured.
    pub fn new(t: &TimingConfig) -> Dram {
        let window_ticks = t.bandwidth_window_cycles.saturating_mul(TICKS_PER_CYCLE);
        Dram {
            base_cycles: t.dram_cycles(),
            bytes_per_cycle: t.bytes_per_cycle(),
            k: t.dram_queue_factor,
            u_max: t.dram_max_utilisation,
            window_ticks,
            window_end: window_ticks,
            last_time: 0,
            last_bytes: 0,
            utilisation: 0.0,
            latency_cycles: t.dram_cycles(),
        }
    }

    /// The global time (ticks) at which the current window ends.
    #[inline]
    pub fn window_end(&self) -> u64 {
        self.window_end
    }

    /// The current DRAM latency, cycles.
    pub fn latency_cycles(&self) -> f64 {
        self.latency_cycles
    }

    /// The utilisation measured over the last window.
    pub fn utilisation(&self) -> f64 {
        self.utilisation
    }

    /// Closes the window at global time `now` (ticks) with `total_bytes`
    /// moved since the start of the run; returns the new latency.
    pub fn update(&mut self, now: u64, total_bytes: u64) -> f64 {
        let elapsed = now.saturating_sub(self.last_time);
        if elapsed > 0 {
            let cycles = elapsed as f64 / TICKS_PER_CYCLE as f64;
            let bytes = total_bytes.saturating_sub(self.last_bytes) as f64;
            self.utilisation = (bytes / (self.bytes_per_cycle * cycles)).min(self.u_max);
            self.latency_cycles =
                queued_latency(self.base_cycles, self.k, self.utilisation, self.u_max);
        }
        self.last_time = now;
        self.last_bytes = total_bytes;
        self.window_end = now.saturating_add(self.window_ticks);
        self.latency_cycles
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_grows_with_load() {
        assert_eq!(queued_latency(100.0, 1.0, 0.0, 0.95), 100.0);
        assert_eq!(queued_latency(100.0, 1.0, 0.5, 0.95), 200.0);
        assert!((queued_latency(100.0, 1.0, 2.0, 0.95) - 2000.0).abs() < 1e-9);
        let t = TimingConfig {
            freq_ghz: 1.0,
            dram_bandwidth_gbps: 10.0,
            dram_queue_factor: 1.0,
            bandwidth_window_cycles: 1000,
            ..TimingConfig::default()
        };
        let mut d = Dram::new(&t);
        assert_eq!(d.latency_cycles(), 80.0);
        // 5000 bytes in 1000 cycles at 10 B/cycle: u = 0.5.
        let lat = d.update(1000 * TICKS_PER_CYCLE, 5000);
        assert!((d.utilisation() - 0.5).abs() < 1e-12);
        assert!((lat - 160.0).abs() < 1e-9);
        assert_eq!(d.window_end(), 2000 * TICKS_PER_CYCLE);
        // An idle window brings it back down.
        assert_eq!(d.update(2000 * TICKS_PER_CYCLE, 5000), 80.0);
    }
}
