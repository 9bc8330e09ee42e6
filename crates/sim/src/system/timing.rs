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

use super::dram::queued_latency;
use super::error::SystemError;
use super::window::WindowConfig;
use crate::hierarchy::Served;
use crate::memory::TlbConfig;

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
                Err(bad(f, "must be a positive number"))
            }
        };
        pos(self.freq_ghz, "freq-ghz")?;
        pos(self.dram_bandwidth_gbps, "dram-bandwidth-gbps")?;
        if !(self.dram_ns.is_finite() && self.dram_ns >= 0.0) {
            return Err(bad("dram-ns", "must be a number >= 0"));
        }
        if !(self.dram_queue_factor.is_finite() && self.dram_queue_factor >= 0.0) {
            return Err(bad("dram-queue-factor", "must be a number >= 0"));
        }
        if !(self.dram_max_utilisation >= 0.0 && self.dram_max_utilisation < 1.0) {
            return Err(bad("dram-max-utilisation", "must be in [0, 1)"));
        }
        if self.bandwidth_window_cycles == 0 {
            return Err(bad("bandwidth-window-cycles", "must be positive"));
        }
        if self.quantum_cycles == 0 {
            return Err(bad("quantum-cycles", "must be positive"));
        }
        if self.freq_ghz > MAX_FREQ_GHZ {
            return Err(bad(
                "freq-ghz",
                &format!("{:?} is above {MAX_FREQ_GHZ}", self.freq_ghz),
            ));
        }
        // Latencies paid per access: a run's clock (64 bits of ticks)
        // must last it, and a latency beyond this one is no machine's.
        for (field, cycles) in [
            ("l2-cycles", f64::from(self.l2_cycles)),
            ("llc-cycles", f64::from(self.llc_cycles)),
            ("page-walk-cycles", f64::from(self.page_walk_cycles)),
        ] {
            if cycles > MAX_LATENCY_CYCLES {
                return Err(bad(
                    field,
                    &format!("{cycles} is above {MAX_LATENCY_CYCLES} cycles"),
                ));
            }
        }
        let dram = self.dram_cycles();
        if dram > MAX_LATENCY_CYCLES {
            return Err(bad(
                "dram-ns",
                &format!(
                    "{:?} ns at {:?} GHz is {dram:.0} cycles, above {MAX_LATENCY_CYCLES}",
                    self.dram_ns, self.freq_ghz
                ),
            ));
        }
        let loaded = queued_latency(
            dram,
            self.dram_queue_factor,
            self.dram_max_utilisation,
            self.dram_max_utilisation,
        );
        if loaded > MAX_LATENCY_CYCLES {
            return Err(bad(
                "dram-queue-factor",
                &format!(
                    "{:?} with dram-max-utilisation {:?} lets the loaded DRAM latency reach \
                     {loaded:.0} cycles, above {MAX_LATENCY_CYCLES}",
                    self.dram_queue_factor, self.dram_max_utilisation
                ),
            ));
        }
        // Spans of time, turned into ticks and added to clocks.
        for (field, cycles) in [
            ("bandwidth-window-cycles", self.bandwidth_window_cycles),
            ("context-switch-cycles", self.context_switch_cycles),
            ("quantum-cycles", self.quantum_cycles),
            ("interleave-slack-cycles", self.interleave_slack_cycles),
        ] {
            if cycles > MAX_SPAN_CYCLES {
                return Err(bad(
                    field,
                    &format!("{cycles} is above {MAX_SPAN_CYCLES} cycles"),
                ));
            }
        }
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
        if !(self.base_cpi.is_finite() && self.base_cpi > 0.0) {
            return Err(SystemError::Config {
                field,
                reason: format!("{} is not a positive number", self.base_cpi),
            });
        }
        if !(MIN_BASE_CPI..=MAX_BASE_CPI).contains(&self.base_cpi) {
            return Err(SystemError::Config {
                field,
                reason: format!(
                    "{:?} is outside {MIN_BASE_CPI}..={MAX_BASE_CPI} cycles an instruction \
                     (the simulator counts time in 1/{TICKS_PER_CYCLE} cycles, and a clock of \
                     64 bits must last the run)",
                    self.base_cpi
                ),
            });
        }
        if !(self.mlp.is_finite() && self.mlp >= 1.0) {
            return Err(SystemError::Config {
                field: format!("app {app}: mlp"),
                reason: format!("{} is below 1", self.mlp),
            });
        }
        Ok(())
    }
}

/// The highest `freq-ghz` a platform may have.
pub const MAX_FREQ_GHZ: f64 = 1000.0;
/// The longest latency of one access (`l2-cycles`, `llc-cycles`,
/// `page-walk-cycles`, the DRAM's, loaded or not), in cycles: a
/// millisecond at 1 GHz, beyond any machine's, and far enough below the
/// 64-bit clock in ticks that 10^10 such accesses still fit.
pub const MAX_LATENCY_CYCLES: f64 = 1e6;
/// The longest span of time a platform sets (`bandwidth-window-cycles`,
/// `context-switch-cycles`, `quantum-cycles`, `interleave-slack-cycles`):
/// 10^12 cycles, 10^15 ticks.
pub const MAX_SPAN_CYCLES: u64 = 1_000_000_000_000;

/// The smallest `base-cpi` an app may have: one tick.
pub const MIN_BASE_CPI: f64 = 1.0 / TICKS_PER_CYCLE as f64;
/// The largest `base-cpi` an app may have: at 1,000 cycles an instruction
/// the 64-bit clock in ticks lasts 1.8 x 10^10 instructions of one app.
pub const MAX_BASE_CPI: f64 = 1000.0;

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
        // base-cpi from one tick to 1,000 cycles: no value silently
        // rounded to a tick, no clock that overflows.
        assert!(AppTiming::new(MIN_BASE_CPI, 1.0).check("a").is_ok());
        assert!(AppTiming::new(MAX_BASE_CPI, 1.0).check("a").is_ok());
        for bad in [MIN_BASE_CPI / 2.0, 1e-9, MAX_BASE_CPI * 1.01, 1e300] {
            let e = AppTiming::new(bad, 1.0).check("a").unwrap_err().to_string();
            assert!(
                e.contains("base-cpi") && e.contains("outside"),
                "{bad}: {e}"
            );
        }
        let cfg: TimingConfig =
            serde_json::from_str(r#"{"freq-ghz": 2.0, "dram-ns": 100}"#).unwrap();
        assert_eq!(cfg.dram_cycles(), 200.0);
        assert!(cfg.check().is_ok());
        let bad: TimingConfig = serde_json::from_str(r#"{"dram-max-utilisation": 1.0}"#).unwrap();
        assert!(bad.check().is_err());
        assert!(serde_json::from_str::<TimingConfig>(r#"{"freq": 2.0}"#).is_err());
    }

    /// Latencies and spans a run's 64-bit clock could not hold (or no
    /// machine has) are refused naming the field, where before they
    /// wrapped or saturated into other numbers (dram-ns 1e300 ran faster
    /// than 70) or ran for hours (llc-cycles 2^32 - 1); the largest
    /// allowed values still pass.
    #[test]
    fn latencies_beyond_the_clock_are_refused_naming_the_field() {
        let ok = TimingConfig::default();
        assert!(ok.check().is_ok());
        let limits = TimingConfig {
            freq_ghz: 1.0,
            dram_ns: MAX_LATENCY_CYCLES / 10.0,
            dram_queue_factor: 0.0,
            l2_cycles: MAX_LATENCY_CYCLES as u32,
            llc_cycles: MAX_LATENCY_CYCLES as u32,
            page_walk_cycles: MAX_LATENCY_CYCLES as u32,
            context_switch_cycles: MAX_SPAN_CYCLES,
            interleave_slack_cycles: MAX_SPAN_CYCLES,
            ..TimingConfig::default()
        };
        assert!(limits.check().is_ok(), "{:?}", limits.check());
        let cases: [(TimingConfig, &str); 9] = [
            (
                TimingConfig {
                    freq_ghz: 1e300,
                    ..ok.clone()
                },
                "timing.freq-ghz",
            ),
            (
                TimingConfig {
                    dram_ns: 1e300,
                    ..ok.clone()
                },
                "timing.dram-ns",
            ),
            (
                TimingConfig {
                    freq_ghz: 1.0,
                    dram_ns: 2e6,
                    ..ok.clone()
                },
                "timing.dram-ns",
            ),
            (
                TimingConfig {
                    dram_queue_factor: 1e300,
                    ..ok.clone()
                },
                "timing.dram-queue-factor",
            ),
            (
                TimingConfig {
                    llc_cycles: u32::MAX,
                    ..ok.clone()
                },
                "timing.llc-cycles",
            ),
            (
                TimingConfig {
                    l2_cycles: 1_000_001,
                    ..ok.clone()
                },
                "timing.l2-cycles",
            ),
            (
                TimingConfig {
                    page_walk_cycles: u32::MAX,
                    ..ok.clone()
                },
                "timing.page-walk-cycles",
            ),
            (
                TimingConfig {
                    context_switch_cycles: u64::MAX,
                    ..ok.clone()
                },
                "timing.context-switch-cycles",
            ),
            (
                TimingConfig {
                    interleave_slack_cycles: MAX_SPAN_CYCLES + 1,
                    ..ok.clone()
                },
                "timing.interleave-slack-cycles",
            ),
        ];
        for (cfg, field) in cases {
            let e = cfg.check().unwrap_err().to_string();
            assert!(e.contains(field) && e.contains("above"), "{field}: {e}");
        }
    }
}
