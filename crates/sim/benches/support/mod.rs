//! The trace of benchmark (a), shared by `benches/hierarchy.rs` and
//! `examples/bench_sim.rs`: `xz -9` on generated text, captured with
//! valgrind lackey into a `.cpt` file under the temporary directory on
//! first use and reused afterwards; a synthetic trace without valgrind.

use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use cachepart_sim::CachegrindConfig;
use cachepart_trace::synth::{Distribution, InstructionMix, Pattern, Phase, SynthConfig};
use cachepart_trace::{Header, LackeyReader, Record, TraceFile, Writer};

/// Bytes of text `xz -9` compresses: enough for over 100 M accesses.
const INPUT_BYTES: usize = 72 << 10;

/// The geometry of benchmark (a): a typical desktop I1/D1 and an 8 MiB LL.
pub fn geometry() -> CachegrindConfig {
    CachegrindConfig::lru((32 << 10, 8, 64), (32 << 10, 8, 64), (8 << 20, 16, 64))
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(name)
}

/// Deterministic text: words from a small vocabulary drawn by an LCG.
fn input_text() -> Vec<u8> {
    let mut x: u64 = 1;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    let words: Vec<String> = (0..4000)
        .map(|_| {
            let n = 2 + next() % 8;
            (0..n)
                .map(|_| (b'a' + (next() % 26) as u8) as char)
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(INPUT_BYTES + 64);
    while out.len() < INPUT_BYTES {
        out.extend_from_slice(words[next() % words.len()].as_bytes());
        out.push(if next() % 12 == 0 { b'\n' } else { b' ' });
    }
    out
}

/// Captures `xz -9 -T1 -c INPUT` with lackey into `path`.
fn capture(path: &PathBuf) -> Option<()> {
    let input = tmp("cachepart-sim-bench-input.txt");
    std::fs::write(&input, input_text()).ok()?;
    let mut child = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes", "xz", "-9", "-T1", "-c"])
        .arg(&input)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    eprintln!(
        "capturing `xz -9` with lackey into {} (a few minutes, once)",
        path.display()
    );
    let partial = path.with_extension("partial");
    let header = Header::default()
        .with_meta("command", "xz -9 -T1 -c (72 KiB of generated text)")
        .with_meta("source-format", "lackey");
    let file = std::io::BufWriter::new(std::fs::File::create(&partial).ok()?);
    let mut w = Writer::new(file, &header).ok()?;
    let err = BufReader::with_capacity(1 << 20, child.stderr.take()?);
    for r in LackeyReader::new(err) {
        w.push(r.ok()?).ok()?;
    }
    w.finish().ok()?;
    if !child.wait().ok()?.success() {
        return None;
    }
    std::fs::rename(&partial, path).ok()
}

/// The benchmark trace decoded into memory, and what it is.
pub fn trace() -> (Vec<Record>, String) {
    let path = tmp("cachepart-sim-bench-xz9.cpt");
    if !path.exists() && capture(&path).is_none() {
        eprintln!("valgrind or xz unavailable: using a synthetic trace");
        return synthetic();
    }
    let file = TraceFile::open(&path).expect("benchmark trace opens");
    let records = file.read_all_parallel().expect("benchmark trace decodes");
    let what = format!("xz -9 under lackey ({})", path.display());
    (records, what)
}

/// 120 M accesses: phases of streaming, zipf and light work.
fn synthetic() -> (Vec<Record>, String) {
    let phase = |accesses, pattern| Phase {
        accesses,
        pattern,
        offset_bytes: 0,
    };
    let cfg = SynthConfig {
        seed: 1,
        accesses: 120_000_000,
        pattern: Pattern::Phases {
            phases: vec![
                phase(
                    20_000_000,
                    Pattern::Streaming {
                        array_bytes: 64 << 20,
                        element_bytes: 8,
                    },
                ),
                phase(
                    20_000_000,
                    Pattern::CacheSensitive {
                        working_set_bytes: 16 << 20,
                        distribution: Distribution::Zipf,
                        zipf_exponent: 0.99,
                    },
                ),
                phase(
                    20_000_000,
                    Pattern::Light {
                        working_set_bytes: 128 << 10,
                    },
                ),
            ],
        },
        mix: InstructionMix::default(),
        base: 0x1000_0000,
        line_bytes: 64,
    };
    let records = cfg.generator().expect("synthetic config").collect();
    (records, "synthetic phases (no valgrind)".into())
}

/// Access records (escapes excluded).
pub fn accesses(records: &[Record]) -> u64 {
    records.iter().filter(|r| r.is_access()).count() as u64
}
