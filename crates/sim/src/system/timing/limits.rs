//! The ranges timing values must lie in: a run's clocks count 64-bit ticks
//! of 1/[`TICKS_PER_CYCLE`] cycle, so a latency, span or CPI past these
//! would wrap or saturate them into other numbers (or make a run last
//! hours), and none is any machine's. Each is refused naming its key.

use super::{bad, TimingConfig, TICKS_PER_CYCLE};
use crate::memory::TlbConfig;
use crate::system::dram::queued_latency;
use crate::system::error::SystemError;

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

/// Checks `t`'s frequency, latencies and spans against the limits above.
pub(super) fn check_timing(t: &TimingConfig) -> Result<(), SystemError> {
    if t.freq_ghz > MAX_FREQ_GHZ {
        return Err(bad(
            "freq-ghz",
            &format!("{:?} is above {MAX_FREQ_GHZ}", t.freq_ghz),
        ));
    }
    // Latencies paid per access: a run's clock (64 bits of ticks)
    // must last it, and a latency beyond this one is no machine's.
    for (field, cycles) in [
        ("timing.l2-cycles", t.l2_cycles),
        ("timing.llc-cycles", t.llc_cycles),
        ("timing.page-walk-cycles", t.page_walk_cycles),
    ] {
        check_latency(field, cycles)?;
    }
    let dram = t.dram_cycles();
    if dram > MAX_LATENCY_CYCLES {
        return Err(bad(
            "dram-ns",
            &format!(
                "{:?} ns at {:?} GHz is {dram:.0} cycles, above {MAX_LATENCY_CYCLES}",
                t.dram_ns, t.freq_ghz
            ),
        ));
    }
    let loaded = queued_latency(
        dram,
        t.dram_queue_factor,
        t.dram_max_utilisation,
        t.dram_max_utilisation,
    );
    if loaded > MAX_LATENCY_CYCLES {
        return Err(bad(
            "dram-queue-factor",
            &format!(
                "{:?} with dram-max-utilisation {:?} lets the loaded DRAM latency reach \
                 {loaded:.0} cycles, above {MAX_LATENCY_CYCLES}",
                t.dram_queue_factor, t.dram_max_utilisation
            ),
        ));
    }
    // Spans of time, turned into ticks and added to clocks.
    for (field, cycles) in [
        ("bandwidth-window-cycles", t.bandwidth_window_cycles),
        ("context-switch-cycles", t.context_switch_cycles),
        ("quantum-cycles", t.quantum_cycles),
        ("interleave-slack-cycles", t.interleave_slack_cycles),
    ] {
        if cycles > MAX_SPAN_CYCLES {
            return Err(bad(
                field,
                &format!("{cycles} is above {MAX_SPAN_CYCLES} cycles"),
            ));
        }
    }
    Ok(())
}

/// Checks the TLB's latencies (`tlb.walk-cycles`, `tlb.stlb-hit-cycles`)
/// against [`MAX_LATENCY_CYCLES`], as [`check_timing`] checks the caches'.
pub(crate) fn check_tlb(tlb: &TlbConfig) -> Result<(), SystemError> {
    check_latency("tlb.walk-cycles", tlb.walk_cycles)?;
    check_latency("tlb.stlb-hit-cycles", tlb.stlb_hit_cycles)
}

/// A per-access latency of `cycles` at key `field` (named whole) against
/// [`MAX_LATENCY_CYCLES`].
fn check_latency(field: &str, cycles: u32) -> Result<(), SystemError> {
    if f64::from(cycles) > MAX_LATENCY_CYCLES {
        return Err(SystemError::Config {
            field: field.into(),
            reason: format!("{cycles} is above {MAX_LATENCY_CYCLES} cycles"),
        });
    }
    Ok(())
}

/// Checks an app's `base-cpi` (`field` names it) against
/// [`MIN_BASE_CPI`]..=[`MAX_BASE_CPI`].
pub(super) fn check_base_cpi(field: &str, base_cpi: f64) -> Result<(), SystemError> {
    if !(MIN_BASE_CPI..=MAX_BASE_CPI).contains(&base_cpi) {
        return Err(SystemError::Config {
            field: field.to_string(),
            reason: format!(
                "{:?} is outside {MIN_BASE_CPI}..={MAX_BASE_CPI} cycles an instruction \
                 (the simulator counts time in 1/{TICKS_PER_CYCLE} cycles, and a clock of \
                 64 bits must last the run)",
                base_cpi
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::timing::AppTiming;

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

    /// `base-cpi` from one tick to 1,000 cycles: no value silently
    /// rounded up to a tick, no clock that overflows.
    #[test]
    fn base_cpi_lies_between_a_tick_and_a_thousand_cycles() {
        assert!(AppTiming::new(MIN_BASE_CPI, 1.0).check("a").is_ok());
        assert!(AppTiming::new(MAX_BASE_CPI, 1.0).check("a").is_ok());
        for bad in [MIN_BASE_CPI / 2.0, 1e-9, MAX_BASE_CPI * 1.01, 1e300] {
            let e = AppTiming::new(bad, 1.0).check("a").unwrap_err().to_string();
            assert!(
                e.contains("base-cpi") && e.contains("outside"),
                "{bad}: {e}"
            );
        }
    }
}
