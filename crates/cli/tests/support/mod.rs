//! Shared by the bad-input suites (`bad_input.rs`, `bad_input_tables.rs`),
//! the interruption tests (`interrupt.rs`) and the capture tests
//! (`capture_*.rs`): running the binary in a directory (with or without a
//! build cache there), whether a tool the test needs is installed, making small traces, a small experiment file, and the check
//! every bad input must pass ([`refused_cleanly`]); and, for the Linux
//! tests, an emulated resctrl mount ([`emulated`]).
#![allow(dead_code)] // each test crate uses its own subset

pub mod emulated;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary with `args` in `dir` (no colours).
pub fn cachepart(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the cachepart binary runs")
}

/// Runs the binary with `args` in `dir`, with its build caches (the qemu
/// plugin, the cpgrind tool) in `dir/cache`.
pub fn cachepart_cached(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .current_dir(dir)
        .env("CACHEPART_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("run cachepart")
}

/// Whether `program --version` runs and exits 0 (a tool a test needs).
pub fn program_runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Writes a streaming trace of `accesses` accesses into `dir/NAME.cpt`.
pub fn gen_trace(dir: &Path, name: &str, accesses: u64) -> PathBuf {
    let cfg = dir.join(format!("{name}.gen.toml"));
    std::fs::write(
        &cfg,
        format!("seed = 2\naccesses = {accesses}\n[pattern]\nclass = \"streaming\"\narray-bytes = 4194304\n"),
    )
    .unwrap();
    let cpt = dir.join(format!("{name}.cpt"));
    let o = cachepart(
        dir,
        &[
            "trace",
            "generate",
            cfg.to_str().unwrap(),
            cpt.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(cfg).unwrap();
    cpt
}

/// The names in `dir`, sorted.
pub fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `args` in `dir`; the command must not panic, must exit non-zero,
/// must say every text of `expect` on stderr and must write nothing.
/// Each broken rule goes to `failures`, under `what`.
pub fn refused_cleanly(
    dir: &Path,
    args: &[&str],
    expect: &[&str],
    what: &str,
    failures: &mut Vec<String>,
) {
    let before = list(dir);
    let o = cachepart(dir, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let mut why = Vec::new();
    if o.status.code() == Some(101) || err.contains("panicked") {
        why.push("panicked".to_string());
    }
    if o.status.code().is_none() {
        why.push(format!("killed: {}", o.status));
    }
    if o.status.success() {
        why.push("exit code 0".to_string());
    }
    for e in expect {
        if !err.contains(e) {
            why.push(format!("message lacks {e:?}"));
        }
    }
    let after = list(dir);
    if after != before {
        why.push(format!("files written: {after:?} (before: {before:?})"));
    }
    if !why.is_empty() {
        failures.push(format!("{what}: {} -- stderr: {err}", why.join(", ")));
    }
}

/// A small experiment file: one synthetic program over 1 and 2 colors of
/// `power5`, 100 k instructions a run.
pub const EXPERIMENT: &str = r#"title = "t"
paper = "p"
[scenario]
platform = "power5"
allocator = "tam"
seed = 1
instructions = 100_000
[program.a]
synth = { seed = 1, accesses = 10_000, pattern = { class = "streaming", array-bytes = 65_536 } }
base-cpi = 0.8
[design]
kind = "color-sweep"
programs = ["a"]
colors = [1, 2]
"#;

/// [`three_program_table`] written to `path`.
pub fn three_program_metrics(path: &Path) {
    std::fs::write(path, three_program_table()).unwrap();
}

/// Runs `f` with `rdt emulate` serving `preset` at `mount` (an empty
/// directory), then stops the emulator with SIGTERM and checks that it
/// exited cleanly. Needs root and /dev/fuse; without them it fails and
/// says so.
pub fn with_emulated_resctrl<T>(mount: &Path, preset: &str, f: impl FnOnce() -> T) -> T {
    let emu = emulated::Emulated::at(mount, preset);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    emu.stop();
    match result {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    }
}

/// The L3 masks in the `schemata` of the owned (`cachepart-`) control
/// groups under `mount` now, as written (`7ff`).
pub fn owned_masks(mount: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(mount).into_iter().flatten().flatten() {
        if !e.file_name().to_string_lossy().starts_with("cachepart-") {
            continue;
        }
        let text = std::fs::read_to_string(e.path().join("schemata")).unwrap_or_default();
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("L3:") {
                for d in rest.split(';') {
                    if let Some((_, m)) = d.split_once('=') {
                        out.push(m.trim().to_string());
                    }
                }
            }
        }
    }
    out
}

/// A PBBCache-format table of three programs over 11 ways: `xz`
/// cache-sensitive (its IPC grows and its misses fall with every way),
/// `sort` light, `copy` streaming.
pub fn three_program_table() -> String {
    let mut s =
        String::from("BENCH,NR_WAYS,ipc,llcrpki,llcmpki,llcmpkc,bandwidth_mbps,stalls_l2_miss\n");
    for w in 1..=11u32 {
        let x = f64::from(w);
        let rows = [
            (
                "xz",
                0.5 + 0.1 * x,
                12.0,
                8.0 / x,
                4.0 / x,
                900.0 / x,
                0.3 / x,
            ),
            ("sort", 1.5, 1.0, 0.2, 0.3, 20.0, 0.02),
            ("copy", 0.4, 31.0, 30.0, 12.0, 6000.0, 0.6),
        ];
        for (name, ipc, rpki, mpki, mpkc, bw, st) in rows {
            s.push_str(&format!(
                "{name},{w},{ipc},{rpki},{mpki},{mpkc},{bw},{st}\n"
            ));
        }
    }
    s
}

/// A plain-directory resctrl tree (the Skylake preset) at `ROOT/resctrl`
/// and a `/sys` of 2 CPUs with an 11 MiB 11-way LLC at `ROOT/sys`, for
/// `cachepart run --resctrl-plain ... --sys-root ROOT/sys`; returns the
/// resctrl path.
pub fn fake_skylake_two_cpus(root: &Path) -> PathBuf {
    use cachepart::linux::fake::{self, Preset};
    let mount = root.join("resctrl");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    fake::sys_tree(&root.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    mount
}
