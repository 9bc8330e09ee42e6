//! Benchmark (d): capture speed of the `trace capture` routes on the same
//! real program, beside the program's bare run time.
//!
//! ```text
//! cargo run --release -p cachepart-capture --example bench_capture [-- OPTIONS]
//!   --kib N        size of the generated text input (default 256)
//!   --level N      xz preset (default 1)
//!   --no-lackey    skip the lackey route (about 2 M accesses/s)
//!   --no-qemu      skip the qemu route
//!   --no-cpgrind   skip the cpgrind route
//!   --zstd N       zstd level of the written traces (default 3)
//!   --threads N    compression threads of the rows without "1 thread"
//!                  (default 0: the writer's default, one per CPU, at most 4)
//!   --qemu-kib N   also run the qemu route alone on an input this big
//!                  (default 4096, 0 to skip), with the bare run beside it
//! ```
//!
//! The program is `xz -LEVEL -k -f -T1 INPUT` (writes INPUT.xz) on deterministic text
//! (12 words a line from a 2000-word vocabulary, drawn by a fixed-seed
//! generator). Each route writes its trace into a temporary directory;
//! figures are printed, never asserted (the machine is shared).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use cachepart_capture::{
    capture_cpgrind, capture_lackey, capture_qemu, cpgrind_lib, qemu_plugin, CaptureOptions,
    CaptureSummary,
};

/// The routes a bench runs.
#[derive(Clone, Copy)]
struct Routes {
    lackey: bool,
    qemu: bool,
    cpgrind: bool,
}

#[derive(Clone, Copy)]
enum Route {
    Lackey,
    Qemu,
    Cpgrind,
}

/// splitmix64: the word and line draws of the input text.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Writes `bytes` of text to `path`.
fn make_text(path: &Path, bytes: usize) -> std::io::Result<()> {
    let mut rng = Mix(1);
    let letters = b"etaoinshrdlucmfwypvbgkjqxz";
    let vocab: Vec<Vec<u8>> = (0..2000)
        .map(|_| {
            let len = 2 + (rng.next() % 9) as usize;
            (0..len)
                .map(|_| letters[(rng.next() % 13 + rng.next() % 14) as usize])
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(bytes + 200);
    while out.len() < bytes {
        for i in 0..12 {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(&vocab[(rng.next() % 2000) as usize]);
        }
        out.push(b'\n');
    }
    out.truncate(bytes);
    std::fs::File::create(path)?.write_all(&out)
}

/// Seconds of the bare program, best of `runs`.
fn bare(cmd: &[OsString], runs: usize) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let st = Command::new(&cmd[0])
                .args(&cmd[1..])
                .status()
                .expect("the program runs");
            assert!(st.success());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The qemu plugin alone, writing its records to /dev/null: seconds.
fn plugin_alone(cmd: &[OsString], opts: &CaptureOptions) -> Option<f64> {
    let plugin = qemu_plugin(opts).ok()?;
    let mut spec = plugin.path.into_os_string();
    spec.push(",out=/dev/null");
    if opts.ifetch {
        spec.push(",ifetch=on");
    }
    let path = which(&cmd[0])?;
    let t = Instant::now();
    let st = Command::new(&opts.qemu)
        .arg("-plugin")
        .arg(spec)
        .arg(path)
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .status()
        .ok()?;
    st.success().then(|| t.elapsed().as_secs_f64())
}

fn which(p: &OsString) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(p))
        .find(|f| f.is_file())
}

/// CPU seconds used so far by this process and its waited-for children
/// (user + system, from /proc/self/stat): less sensitive than wall time
/// to other jobs on a shared machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the command name in parentheses; utime is field 14
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

fn row(what: &str, s: &CaptureSummary, cpu: f64, bare: f64) {
    println!(
        "{what:<30} {:>11} {:>11} {:>7.2} {:>8.2} {:>7.2} {:>9.2} {:>7.0}x {:>6.3}",
        s.accesses(),
        s.instructions(),
        s.seconds,
        s.accesses_per_second() / 1e6,
        cpu,
        s.accesses() as f64 / cpu.max(1e-3) / 1e6,
        s.seconds / bare,
        s.written.bytes as f64 / s.accesses().max(1) as f64
    );
}

fn alone_row(accesses: u64, wall: f64, cpu: f64, bare: f64) {
    println!(
        "{:<30} {:>11} {:>11} {:>7.2} {:>8.2} {:>7.2} {:>9.2} {:>7.0}x",
        "  plugin alone, out=/dev/null",
        accesses,
        "",
        wall,
        accesses as f64 / wall / 1e6,
        cpu,
        accesses as f64 / cpu.max(1e-3) / 1e6,
        wall / bare
    );
}

fn header() {
    println!(
        "{:<30} {:>11} {:>11} {:>7} {:>8} {:>7} {:>9} {:>8} {:>6}",
        "route",
        "accesses",
        "instrs",
        "wall s",
        "M acc/s",
        "CPU s",
        "M acc/CPUs",
        "vs bare",
        "B/acc"
    );
}

/// Runs the routes on `xz -level -c input` and prints a table.
fn bench(dir: &Path, kib: usize, level: u32, routes: Routes, zstd: i32, threads: usize) {
    let input = dir.join(format!("text{kib}k.txt"));
    make_text(&input, kib << 10).expect("writing the input");
    // -k -f: write INPUT.xz beside the input (nothing on stdout)
    let cmd: Vec<OsString> = vec![
        "xz".into(),
        format!("-{level}").into(),
        "-k".into(),
        "-f".into(),
        "-T1".into(),
        input.clone().into(),
    ];
    let b = bare(&cmd, 3);
    println!("\n== xz -{level} -k -f -T1 text{kib}k.txt: bare run {b:.3} s (best of 3)");
    header();
    let out = dir.join("t.cpt");
    let to_null = |opts: &CaptureOptions, route: Route| {
        let c0 = cpu_seconds();
        let r = match route {
            Route::Qemu => capture_qemu(&cmd, &out, opts),
            Route::Lackey => capture_lackey(&cmd, &out, opts),
            Route::Cpgrind => capture_cpgrind(&cmd, &out, opts),
        };
        let s = r.expect("capture");
        assert!(s.success(), "{:?}", s.status);
        (s, cpu_seconds() - c0)
    };
    let base = CaptureOptions {
        level: zstd,
        compress_threads: threads,
        ..CaptureOptions::default()
    };
    let q = CaptureOptions {
        ifetch: false,
        ..base.clone()
    };
    let qi = CaptureOptions {
        ifetch: true,
        ..base.clone()
    };
    // build the plugin outside the timed runs
    if !routes.qemu {
    } else if let Err(e) = qemu_plugin(&q) {
        println!("qemu route unavailable: {e}");
    } else {
        let q1 = CaptureOptions {
            compress_threads: 1,
            ..q.clone()
        };
        let qi1 = CaptureOptions {
            compress_threads: 1,
            ..qi.clone()
        };
        for (name, o) in [
            ("qemu (loads, stores), 1 thread", &q1),
            ("qemu (loads, stores)", &q),
            ("qemu --ifetch, 1 thread", &qi1),
            ("qemu --ifetch", &qi),
        ] {
            let (s, cpu) = to_null(o, Route::Qemu);
            row(name, &s, cpu, b);
            let c0 = cpu_seconds();
            if let Some(t) = plugin_alone(&cmd, o) {
                alone_row(s.accesses(), t, cpu_seconds() - c0, b);
            }
        }
    }
    // and the valgrind tool
    if !routes.cpgrind {
    } else if let Err(e) = cpgrind_lib(&base) {
        println!("cpgrind route unavailable: {e}");
    } else {
        let opts = |ifetch: bool, dep_window: u64| CaptureOptions {
            ifetch,
            dep_window,
            ..base.clone()
        };
        for (name, o) in [
            ("cpgrind (loads, stores), hints", opts(false, 256)),
            ("cpgrind, --dep-window 0", opts(false, 0)),
            ("cpgrind --ifetch, hints", opts(true, 256)),
            ("cpgrind --ifetch --dep-window 0", opts(true, 0)),
        ] {
            let (s, cpu) = to_null(&o, Route::Cpgrind);
            row(name, &s, cpu, b);
        }
    }
    if routes.lackey {
        let (s, cpu) = to_null(&base, Route::Lackey);
        row("lackey", &s, cpu, b);
    }
    let _ = std::fs::remove_file(&out);
}

fn main() {
    let mut kib = 256usize;
    let mut level = 1u32;
    let mut routes = Routes {
        lackey: true,
        qemu: true,
        cpgrind: true,
    };
    let mut qemu_kib = 4096usize;
    let mut zstd = cachepart_trace::DEFAULT_LEVEL;
    let mut threads = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match a.as_str() {
            "--kib" => kib = num("--kib"),
            "--level" => level = num("--level") as u32,
            "--qemu-kib" => qemu_kib = num("--qemu-kib"),
            "--zstd" => zstd = num("--zstd") as i32,
            "--threads" => threads = num("--threads"),
            "--no-lackey" => routes.lackey = false,
            "--no-qemu" => routes.qemu = false,
            "--no-cpgrind" => routes.cpgrind = false,
            _ => panic!("unknown argument {a} (see the example's documentation)"),
        }
    }
    let dir = std::env::temp_dir().join(format!("cachepart-bench-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!(
        "capture speed (benchmark d); zstd level {zstd}; compression threads {}; machine load: {}",
        match threads {
            0 => "default".to_string(),
            n => n.to_string(),
        },
        load()
    );
    bench(&dir, kib, level, routes, zstd, threads);
    if qemu_kib > 0 && routes.qemu {
        let qemu_only = Routes {
            lackey: false,
            qemu: true,
            cpgrind: false,
        };
        bench(&dir, qemu_kib, level, qemu_only, zstd, threads);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
