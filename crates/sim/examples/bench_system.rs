//! Benchmarks (b) and (c) as a program: the full simulator (4 cores,
//! paging on an aged buddy allocator, TLBs, timing, a shared sliced LLC)
//! running 4 synthetic apps (streaming, zipf cache-sensitive, light,
//! pointer-chase), each replaying its binary trace file (`.cpt`, written
//! once under the temporary directory) until the cores have simulated
//! `--accesses N` accesses in all (default 10^8).
//!
//! Prints total accesses per second (trace decoding included: the apps
//! read their `.cpt` files as a real run does, decoded ahead on one
//! background thread per app; `--in-memory` replays decoded records
//! instead) against wall time, the simulating thread's CPU time and the
//! CPU time of all threads, and the peak resident memory (`VmHWM`),
//! which stays flat whatever N: state is bounded by the caches, TLBs,
//! page tables of the apps' footprints and, per app, one decoded frame
//! and the few chunks of records decoded ahead.
//!
//! `--walk hierarchy` walks the page tables through the caches (`[tlb]
//! walk = "hierarchy"`, with the default paging-structure caches) instead
//! of today's flat walks (`--walk flat`, the default);
//! `scripts/bench-walks.sh` prints both side by side.
//!
//! `--prefetchers` gives every core the four hardware prefetchers, all on
//! (MSR 0x1A4 word 0); `--window` replaces the flat timing model (each
//! app's hand-set `mlp`) by the out-of-order window (ROB 224, 10 miss
//! buffers, 56-entry store buffer, every app's `mlp` at 1);
//! `scripts/bench/sim-timing.sh` prints the four combinations side by
//! side.
//!
//! Run: `cargo run --release -p cachepart-sim --example bench_system -- [--accesses N] [--in-memory] [--mix a,b,c,d] [--trace FILE] [--walk flat|hierarchy] [--prefetchers] [--window]`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cachepart_sim::memory::{MemoryConfig, WalkMode};
use cachepart_sim::prefetch::PrefetchPlatform;
use cachepart_sim::system::{
    AppSpec, AppTiming, CptFile, PlatformConfig, RecordsSource, System, TraceSource, WindowConfig,
};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::synth::SynthConfig;

/// Accesses per trace file.
const TRACE_ACCESSES: u64 = 20_000_000;

fn platform() -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(32 << 10, 8, 64));
    core.l2 = Some(CacheConfig::lru(256 << 10, 4, 64));
    PlatformConfig::new(
        "bench-4c-8m",
        4,
        core,
        CacheConfig::lru(8 << 20, 16, 64).with_slices(4),
        MemoryConfig::aged(4 << 30, 1),
    )
}

fn apps() -> Vec<(&'static str, &'static str, AppTiming)> {
    vec![
        (
            "streaming",
            r#"{"class": "streaming", "array-bytes": 268435456}"#,
            AppTiming::new(0.6, 4.0),
        ),
        (
            "zipf",
            r#"{"class": "cache-sensitive", "working-set-bytes": 6291456, "distribution": "zipf"}"#,
            AppTiming::new(0.8, 2.0),
        ),
        (
            "light",
            r#"{"class": "light", "working-set-bytes": 131072}"#,
            AppTiming::new(0.5, 2.0),
        ),
        (
            "pointer-chase",
            r#"{"class": "cache-sensitive", "working-set-bytes": 33554432, "distribution": "pointer-chase"}"#,
            AppTiming::new(1.0, 1.0),
        ),
    ]
}

fn synth(i: usize, pattern: &str) -> SynthConfig {
    serde_json::from_str(&format!(
        r#"{{"seed": {}, "accesses": {TRACE_ACCESSES}, "pattern": {pattern}}}"#,
        i + 1
    ))
    .expect("valid generator configuration")
}

/// CPU time of the simulating (main) thread so far, seconds
/// (`/proc/self/schedstat`): the machine may be shared, so wall time alone
/// overstates the cost.
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// CPU time of the whole process so far (every thread: the simulation and
/// the trace decoders running ahead of it), seconds (`/proc/self/stat`,
/// user + system, in Linux's 1/100 s clock ticks).
fn process_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which may hold spaces).
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(0.0)
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mut target: u64 = 100_000_000;
    let mut in_memory = false;
    let mut mix: Option<Vec<String>> = None;
    let mut trace: Option<PathBuf> = None;
    let mut walk = WalkMode::Flat;
    let mut prefetchers = false;
    let mut window = false;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--accesses" => {
                i += 1;
                let v = args.get(i).ok_or("--accesses needs a number")?;
                target = v
                    .parse::<f64>()
                    .map_err(|e| format!("--accesses {v}: {e}"))? as u64;
            }
            "--in-memory" => in_memory = true,
            "--prefetchers" => prefetchers = true,
            "--window" => window = true,
            "--walk" => {
                i += 1;
                walk = match args.get(i).map(String::as_str) {
                    Some("flat") => WalkMode::Flat,
                    Some("hierarchy") => WalkMode::Hierarchy,
                    v => return Err(format!("--walk {v:?}: expected flat or hierarchy").into()),
                };
            }
            "--trace" => {
                i += 1;
                trace = Some(args.get(i).ok_or("--trace needs a file")?.into());
            }
            "--mix" => {
                i += 1;
                let v = args.get(i).ok_or("--mix needs 4 app names")?;
                mix = Some(v.split(',').map(str::to_string).collect());
            }
            a => return Err(format!("unknown argument {a}").into()),
        }
        i += 1;
    }
    let dir: PathBuf = std::env::temp_dir().join("cachepart-bench-system");
    std::fs::create_dir_all(&dir)?;
    let mut p = platform();
    p.tlb.walk = walk;
    if prefetchers {
        p.prefetchers = PrefetchPlatform {
            available: ["l2-streamer", "l2-adjacent", "l1-next-line", "l1-ip-stride"]
                .map(String::from)
                .to_vec(),
            run_word: Some(0),
            ..PrefetchPlatform::default()
        };
    }
    if window {
        p.timing.window = Some(WindowConfig {
            rob_entries: 224,
            mshrs: 10,
            store_buffer_entries: 56,
        });
    }
    // The window derives memory-level parallelism: every app's mlp is 1.
    let timed = |t: AppTiming| {
        if window {
            AppTiming::new(t.base_cpi, 1.0)
        } else {
            t
        }
    };
    let mut specs = Vec::new();
    let all = apps();
    let chosen: Vec<_> = match &mix {
        None => all.clone(),
        Some(names) => names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|a| a.0 == n)
                    .cloned()
                    .ok_or(format!("--mix: no app {n}"))
            })
            .collect::<Result<_, _>>()?,
    };
    for (i, (name, pattern, timing)) in chosen.into_iter().enumerate() {
        let slot = all.iter().position(|a| a.0 == name).unwrap_or(i);
        let cfg = synth(slot, pattern);
        let path = dir.join(format!("{name}-{TRACE_ACCESSES}.cpt"));
        if !path.exists() {
            eprintln!("writing {}", path.display());
            let tmp = path.with_extension("tmp");
            cfg.write(&tmp)?;
            std::fs::rename(&tmp, &path)?;
        }
        let source: Arc<dyn TraceSource> = if in_memory {
            Arc::new(RecordsSource::new(cfg.generator()?.collect()))
        } else {
            Arc::new(CptFile(path))
        };
        specs.push(
            AppSpec::new(format!("{name}-{i}"), source)
                .on_core(i as u32)
                .with_timing(timed(timing))
                .with_limit(u64::MAX / 2, true),
        );
    }
    if let Some(path) = &trace {
        specs = (0..4)
            .map(|c| {
                AppSpec::new(format!("trace-{c}"), Arc::new(CptFile(path.clone())))
                    .on_core(c)
                    .with_timing(timed(AppTiming::new(1.0, 2.0)))
                    .with_limit(u64::MAX / 2, true)
            })
            .collect();
    }
    let rss_before = vm_hwm_kib();
    let t = Instant::now();
    let mut sys = System::new(&p, specs, 1)?;
    let build = t.elapsed().as_secs_f64();
    let accesses = |sys: &System| -> u64 {
        (0..4)
            .filter_map(|c| sys.core_stats(c))
            .map(|s| s.hierarchy.l1i.total_refs() + s.hierarchy.l1d.total_refs() - s.split_accesses)
            .sum()
    };
    let t = Instant::now();
    let cpu0 = cpu_secs();
    let pcpu0 = process_cpu_secs();
    let mut done = 0;
    while done < target {
        sys.run_interval(1_000_000)?;
        done = accesses(&sys);
    }
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    let pcpu = process_cpu_secs() - pcpu0;
    println!(
        "platform: 4 cores, L1 32K/8w, L2 256K/4w, LLC 8 MiB/16w in 4 slices, 4 GiB aged buddy memory, Skylake TLBs ({walk:?} walks), timing on"
    );
    println!(
        "models: prefetchers {}, timing {}",
        if prefetchers { "on (word 0)" } else { "off" },
        if window {
            "out-of-order window (ROB 224, 10 MSHRs, 56 store-buffer entries)"
        } else {
            "flat (per-app mlp)"
        }
    );
    let (walks, loads): (u64, [u64; 4]) =
        (0..4)
            .filter_map(|c| sys.core_stats(c))
            .fold((0, [0; 4]), |(w, mut l), s| {
                for (x, y) in l.iter_mut().zip(s.tlb.walk_loads) {
                    *x += y;
                }
                (w + s.tlb.walks, l)
            });
    println!("page walks {walks}, walk loads served by L1D/L2/LLC/memory {loads:?}");
    println!(
        "sources: {}",
        match (&trace, in_memory) {
            (Some(t), _) => format!("{} on every core (zstd decode included)", t.display()),
            (None, true) => "decoded records in memory".into(),
            (None, false) => ".cpt trace files (zstd decode included)".into(),
        }
    );
    println!("setup (allocator aging, caches): {build:.2} s");
    println!(
        "simulated {done} accesses in {secs:.2} s wall, {cpu:.2} s CPU of the simulating thread, {pcpu:.2} s CPU of all threads: {:.1} M accesses/s (wall), {:.1} M accesses/s (simulating thread CPU), {:.1} M accesses/s (all threads CPU); {} cycles of global time",
        done as f64 / secs / 1e6,
        done as f64 / cpu / 1e6,
        done as f64 / pcpu / 1e6,
        sys.now()
    );
    for a in sys.totals() {
        println!(
            "  {:<14} instr {:>12} ipc {:.3} llc mpki {:>7.2} occupancy {:>5} KiB restarts {} tlb misses {}",
            a.name,
            a.instructions,
            a.ipc,
            a.llc_mpki(),
            a.llc_occupancy_bytes >> 10,
            a.restarts,
            a.tlb_misses
        );
    }
    println!(
        "dram latency now {:.0} cycles; peak RSS (VmHWM) {} MiB (before the system: {} MiB)",
        sys.dram_latency_cycles(),
        vm_hwm_kib() >> 10,
        rss_before >> 10
    );
    Ok(())
}
