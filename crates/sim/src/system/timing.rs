//! The timing model: platform latencies ([`TimingConfig`]), per-app core
//! parameters ([`AppTiming`]) and the per-access stall table the
//! simulation loop charges ([`StallTable`]).
//!
//! A core's clock advances, per record, by
//! `instructions x base-cpi + stall`, where the stall of an access is the
//! latency of the level that served it ([`Served`]):
//!
//! | served by | stall (cycles) |
//! |---|---|
//! | L1 | 0 (hidden by the pipeline, part of `base-cpi`) |
//! | L2 | `l2-cycles` |
//! | LLC | `llc-cycles / mlp` |
//! | L3 victim cache | `[l3-victim] cycles / mlp` (the whole latency, as Tam et al.'s Table I gives it) |
//! | memory | `(llc-cycles + dram) / mlp`, `dram` from [`Dram`](super::Dram) |
//!
//! Stores never stall (the write buffer hides them, as on out-of-order
//! cores); loads, modifies and instruction fetches do. `mlp` (memory-level
//! parallelism) is how many long misses the app overlaps on average.
//! A page walk (an STLB miss) adds `page-walk-cycles`, not overlapped;
//! with walks through the caches (`[tlb] walk = "hierarchy"`) each of its
//! page-table loads adds the latency of the level that served it, not
//! divided by `mlp` (each load needs the entry the previous one read):
//! L1D 0 (part of `page-walk-cycles`), L2 `l2-cycles`, LLC `llc-cycles`,
//! L3 `[l3-victim] cycles`, memory `llc-cycles + dram`. An L1 TLB miss that hits the STLB adds
//! `[tlb] stlb-hit-cycles`. Memory-stall cycles are the stalls of
//! accesses (walk loads included) served by memory.
//!
//! Clocks count in ticks of 1/[`TICKS_PER_CYCLE`] cycle, so fractional
//! latencies (divided by `mlp`) add up exactly and deterministically.

use serde::{Deserialize, Serialize};

use super::error::SystemError;
use super::window::WindowConfig;
use crate::hierarchy::Served;
use crate::memory::TlbConfig;

mod limits;

pub(crate) use limits::check_tlb as check_tlb_limits;
pub use limits::{MAX_BASE_CPI, MAX_FREQ_GHZ, MAX_LATENCY_CYCLES, MAX_SPAN_CYCLES, MIN_BASE_CPI};

/// Ticks per core cycle (clock resolution).
pub const TICKS_PER_CYCLE: u64 = 1024;

/// Latencies, memory bandwidth and scheduling of a platform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TimingConfig {
    /// Core clock in GHz (cycles per nanosecond).
    #[serde(default = "d_freq")]
    pub freq_ghz: f64,
    /// Latency of an L2 hit, cycles.
    #[serde(default = "d_l2")]
    pub l2_cycles: u32,
    /// Latency of an LLC hit, cycles.
    #[serde(default = "d_llc")]
    pub llc_cycles: u32,
    /// Unloaded DRAM latency, nanoseconds (added to the LLC's on a miss).
    #[serde(default = "d_dram")]
    pub dram_ns: f64,
    /// Cycles of one page walk (an STLB miss).
    #[serde(default = "d_walk")]
    pub page_walk_cycles: u32,
    /// Peak memory bandwidth, GB/s.
    #[serde(default = "d_bw")]
    pub dram_bandwidth_gbps: f64,
    /// `k` of the queueing model: latency = `dram-ns x (1 + k u / (1 - u))`.
    #[serde(default = "d_k")]
    pub dram_queue_factor: f64,
    /// Largest utilisation `u` the model uses (keeps latency finite).
    #[serde(default = "d_umax")]
    pub dram_max_utilisation: f64,
    /// Window of global simulated time over which utilisation is measured,
    /// cycles.
    #[serde(default = "d_window")]
    pub bandwidth_window_cycles: u64,
    /// Cycles a context switch costs the core.
    #[serde(default = "d_cs")]
    pub context_switch_cycles: u64,
    /// Time slice of apps sharing a core, cycles (4 ms at 3 GHz).
    #[serde(default = "d_quantum")]
    pub quantum_cycles: u64,
    /// Whether a context switch flushes the core's TLBs (no ASIDs).
    #[serde(default = "d_true")]
    pub tlb_flush_on_switch: bool,
    /// How far a core may run past the next core's clock before the
    /// simulator switches cores, cycles (0: switch as soon as it passes,
    /// exact simulated-time order; the default, 100, keeps cores within
    /// about two LLC latencies of each other and cuts the switching
    /// overhead of the simulator by a fifth).
    #[serde(default = "d_slack")]
    pub interleave_slack_cycles: u64,
    /// The cores' out-of-order window (`window = { rob-entries = 224,
    /// mshrs = 10, store-buffer-entries = 56 }`): memory-level
    /// parallelism derived from the trace instead of each app's `mlp`
    /// (see [`window`](super::window)). Absent: the flat model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowConfig>,
}

fn d_freq() -> f64 {
    3.0
}
fn d_l2() -> u32 {
    14
}
fn d_llc() -> u32 {
    44
}
fn d_dram() -> f64 {
    80.0
}
fn d_walk() -> u32 {
    30
}
fn d_bw() -> f64 {
    20.0
}
fn d_k() -> f64 {
    0.5
}
fn d_umax() -> f64 {
    0.95
}
fn d_window() -> u64 {
    30_000
}
fn d_cs() -> u64 {
    6_000
}
fn d_quantum() -> u64 {
    12_000_000
}
fn d_slack() -> u64 {
    100
}
fn d_true() -> bool {
    true
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            freq_ghz: d_freq(),
            l2_cycles: d_l2(),
            llc_cycles: d_llc(),
            dram_ns: d_dram(),
            page_walk_cycles: d_walk(),
            dram_bandwidth_gbps: d_bw(),
            dram_queue_factor: d_k(),
            dram_max_utilisation: d_umax(),
            bandwidth_window_cycles: d_window(),
            context_switch_cycles: d_cs(),
            quantum_cycles: d_quantum(),
            tlb_flush_on_switch: true,
            interleave_slack_cycles: d_slack(),
            window: None,
        }
    }
}

fn bad(field: &str, reason: &str) -> SystemError {
    SystemError::Config {
        field: format!("timing.{field}"),
        reason: reason.into(),
    }
}

impl TimingConfig {
    /// Checks that every value is usable.
    pub fn check(&self) -> Result<(), SystemError> {
        let pos = |v: f64, f: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(f, &format!("{v}: expected a finite number above 0")))
            }
        };
        pos(self.freq_ghz, "freq-ghz")?;
        pos(self.dram_bandwidth_gbps, "dram-bandwidth-gbps")?;
        let non_negative = |v: f64, f: &str| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(bad(
                    f,
                    &format!("{v}: expected a finite number of at least 0"),
                ))
            }
        };
        non_negative(self.dram_ns, "dram-ns")?;
        non_negative(self.dram_queue_factor, "dram-queue-factor")?;
        if !(self.dram_max_utilisation >= 0.0 && self.dram_max_utilisation < 1.0) {
            return Err(bad(
                "dram-max-utilisation",
                &format!(
                    "{}: expected a number of at least 0 and below 1",
                    self.dram_max_utilisation
                ),
            ));
        }
        if self.bandwidth_window_cycles == 0 {
            return Err(bad(
                "bandwidth-window-cycles",
                "0: expected at least 1 cycle",
            ));
        }
        if self.quantum_cycles == 0 {
            return Err(bad("quantum-cycles", "0: expected at least 1 cycle"));
        }
        limits::check_timing(self)?;
        if let Some(w) = &self.window {
            w.check()?;
        }
        Ok(())
    }

    /// Memory bandwidth in bytes per core cycle.
    pub fn bytes_per_cycle(&self) -> f64 {
        self.dram_bandwidth_gbps / self.freq_ghz
    }

    /// Unloaded DRAM latency in cycles.
    pub fn dram_cycles(&self) -> f64 {
        self.dram_ns * self.freq_ghz
    }
}

/// One app's core: cycles per instruction without memory stalls, and how
/// many long misses it overlaps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AppTiming {
    /// Cycles per instruction when every access hits the L1.
    #[serde(default = "d_cpi")]
    pub base_cpi: f64,
    /// Memory-level parallelism (>= 1): LLC and memory latencies are
    /// divided by it.
    #[serde(default = "d_mlp")]
    pub mlp: f64,
}

fn d_cpi() -> f64 {
    1.0
}
fn d_mlp() -> f64 {
    1.0
}

impl Default for AppTiming {
    fn default() -> Self {
        AppTiming {
            base_cpi: d_cpi(),
            mlp: d_mlp(),
        }
    }
}

impl AppTiming {
    /// `base_cpi` and `mlp`.
    pub fn new(base_cpi: f64, mlp: f64) -> AppTiming {
        AppTiming { base_cpi, mlp }
    }

    /// Checks the values (`app` names the app in the error): `base_cpi`
    /// from one tick ([`MIN_BASE_CPI`]: a smaller value would be rounded
    /// to it) to [`MAX_BASE_CPI`] (beyond, a long run's clock would
    /// overflow), `mlp` at least 1.
    pub fn check(&self, app: &str) -> Result<(), SystemError> {
        let field = format!("app {app}: base-cpi");
        if !self.base_cpi.is_finite() {
            return Err(SystemError::Config {
                field,
                reason: format!(
                    "{} is not a finite number: base-cpi must be a finite number > 0",
                    self.base_cpi
                ),
            });
        }
        if self.base_cpi <= 0.0 {
            return Err(SystemError::Config {
                field,
                reason: format!("{} is not a positive number", self.base_cpi),
            });
        }
        limits::check_base_cpi(&field, self.base_cpi)?;
        let field = format!("app {app}: mlp");
        if !self.mlp.is_finite() {
            return Err(SystemError::Config {
                field,
                reason: format!(
                    "{} is not a finite number: mlp must be a finite number >= 1",
                    self.mlp
                ),
            });
        }
        if self.mlp < 1.0 {
            return Err(SystemError::Config {
                field,
                reason: format!("{} is below 1", self.mlp),
            });
        }
        Ok(())
    }
}

fn ticks(cycles: f64) -> u64 {
    (cycles * TICKS_PER_CYCLE as f64).round() as u64
}

/// The stalls one app pays, in ticks, under the current DRAM latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallTable {
    /// Ticks per instruction.
    pub cpi: u64,
    /// Ticks of one page walk (its fixed part with walks through the
    /// caches).
    pub walk: u64,
    /// Ticks of an L1 TLB miss that hits the STLB.
    pub stlb_hit: u64,
    /// Ticks of a non-store access, by [`Served`] level.
    pub load: [u64; 5],
    /// Ticks of a page walk's page-table load, by [`Served`] level.
    pub walk_load: [u64; 5],
}

impl StallTable {
    /// The table of `app` on `t` and TLBs `tlb` with a DRAM latency of
    /// `dram_cycles` and, if the LLC has a victim cache below it, an L3
    /// hit latency of `l3_cycles` (without one the L3 entry is never
    /// used: it is the memory entry).
    pub fn new(
        app: &AppTiming,
        t: &TimingConfig,
        tlb: &TlbConfig,
        dram_cycles: f64,
        l3_cycles: Option<u32>,
    ) -> StallTable {
        let llc = f64::from(t.llc_cycles);
        let l2 = ticks(f64::from(t.l2_cycles));
        let l3 = l3_cycles.map_or(llc + dram_cycles, f64::from);
        StallTable {
            cpi: ticks(app.base_cpi).max(1),
            walk: ticks(f64::from(t.page_walk_cycles)),
            stlb_hit: ticks(f64::from(tlb.stlb_hit_cycles)),
            load: [
                0,
                l2,
                ticks(llc / app.mlp),
                ticks(l3 / app.mlp),
                ticks((llc + dram_cycles) / app.mlp),
            ],
            walk_load: [0, l2, ticks(llc), ticks(l3), ticks(llc + dram_cycles)],
        }
    }

    /// The whole latency of an access served by `served`, ticks (no
    /// `mlp`: the out-of-order window overlaps misses itself).
    #[inline(always)]
    pub fn latency(&self, served: Served) -> u64 {
        self.walk_load[served as usize]
    }

    /// The stall of an access served by `served` (stores: none).
    #[inline(always)]
    pub fn stall(&self, store: bool, served: Served) -> u64 {
        if store {
            0
        } else {
            self.load[served as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bad timing value is refused naming its key, the value and
    /// what was expected (1 cycle is allowed where 0 is refused).
    #[test]
    fn timing_checks_say_what_is_expected() {
        let d = TimingConfig::default();
        assert!(d.check().is_ok());
        let cases: [(TimingConfig, &str); 9] = [
            (
                TimingConfig {
                    freq_ghz: f64::NAN,
                    ..d.clone()
                },
                "timing.freq-ghz: NaN: expected a finite number above 0",
            ),
            (
                TimingConfig {
                    dram_bandwidth_gbps: 0.0,
                    ..d.clone()
                },
                "timing.dram-bandwidth-gbps: 0: expected a finite number above 0",
            ),
            (
                TimingConfig {
                    dram_ns: -1.0,
                    ..d.clone()
                },
                "timing.dram-ns: -1: expected a finite number of at least 0",
            ),
            (
                TimingConfig {
                    dram_ns: f64::INFINITY,
                    ..d.clone()
                },
                "timing.dram-ns: inf: expected a finite number of at least 0",
            ),
            (
                TimingConfig {
                    dram_queue_factor: f64::NAN,
                    ..d.clone()
                },
                "timing.dram-queue-factor: NaN: expected a finite number of at least 0",
            ),
            (
                TimingConfig {
                    dram_max_utilisation: 1.0,
                    ..d.clone()
                },
                "timing.dram-max-utilisation: 1: expected a number of at least 0 and below 1",
            ),
            (
                TimingConfig {
                    dram_max_utilisation: f64::NAN,
                    ..d.clone()
                },
                "timing.dram-max-utilisation: NaN: expected",
            ),
            (
                TimingConfig {
                    bandwidth_window_cycles: 0,
                    ..d.clone()
                },
                "timing.bandwidth-window-cycles: 0: expected at least 1 cycle",
            ),
            (
                TimingConfig {
                    quantum_cycles: 0,
                    ..d.clone()
                },
                "timing.quantum-cycles: 0: expected at least 1 cycle",
            ),
        ];
        for (t, want) in cases {
            let e = t.check().unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        let one = TimingConfig {
            quantum_cycles: 1,
            bandwidth_window_cycles: 1,
            ..d
        };
        assert!(one.check().is_ok());
    }

    #[test]
    fn non_finite_app_timings_are_called_so_not_below_a_bound() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = AppTiming::new(1.0, v).check("a").unwrap_err().to_string();
            assert!(
                e.contains("mlp") && e.contains("must be a finite number >= 1"),
                "{v}: {e}"
            );
            assert!(!e.contains("below"), "{v}: {e}");
            let e = AppTiming::new(v, 1.0).check("a").unwrap_err().to_string();
            assert!(
                e.contains("base-cpi") && e.contains("must be a finite number > 0"),
                "{v}: {e}"
            );
        }
        let e = AppTiming::new(1.0, 0.5).check("a").unwrap_err().to_string();
        assert!(e.contains("mlp") && e.contains("0.5 is below 1"), "{e}");
        let e = AppTiming::new(-1.0, 1.0)
            .check("a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("-1 is not a positive number"), "{e}");
    }

    #[test]
    fn stalls_follow_the_table() {
        let t = TimingConfig::default();
        let tlb = TlbConfig {
            stlb_hit_cycles: 7,
            ..TlbConfig::default()
        };
        let s = StallTable::new(&AppTiming::new(0.5, 2.0), &t, &tlb, t.dram_cycles(), None);
        assert_eq!(s.cpi, 512);
        assert_eq!(s.stlb_hit, 7 * 1024);
        // Walk loads wait whole latencies (no mlp).
        assert_eq!(
            s.walk_load,
            [
                0,
                14 * 1024,
                44 * 1024,
                (44 + 240) * 1024,
                (44 + 240) * 1024
            ]
        );
        assert_eq!(s.stall(false, Served::L1), 0);
        assert_eq!(s.stall(false, Served::L2), 14 * 1024);
        assert_eq!(s.stall(false, Served::Llc), 22 * 1024);
        assert_eq!(s.stall(false, Served::Memory), (44 + 240) * 512);
        assert_eq!(s.stall(true, Served::Memory), 0);
        // With an L3 victim cache: its whole latency, divided by mlp.
        let l3 = StallTable::new(
            &AppTiming::new(0.5, 2.0),
            &t,
            &tlb,
            t.dram_cycles(),
            Some(90),
        );
        assert_eq!(l3.stall(false, Served::L3), 45 * 1024);
        assert_eq!(l3.walk_load[Served::L3 as usize], 90 * 1024);
        assert_eq!((l3.load[4], l3.walk_load[4]), (s.load[4], s.walk_load[4]));
        assert!(AppTiming::new(1.0, 0.5).check("a").is_err());
        assert!(AppTiming::new(0.0, 1.0).check("a").is_err());
        let cfg: TimingConfig =
            serde_json::from_str(r#"{"freq-ghz": 2.0, "dram-ns": 100}"#).unwrap();
        assert_eq!(cfg.dram_cycles(), 200.0);
        assert!(cfg.check().is_ok());
        let bad: TimingConfig = serde_json::from_str(r#"{"dram-max-utilisation": 1.0}"#).unwrap();
        assert!(bad.check().is_err());
        assert!(serde_json::from_str::<TimingConfig>(r#"{"freq": 2.0}"#).is_err());
    }
}
