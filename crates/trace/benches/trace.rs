//! Write and read throughput (records/s) and bytes per access of the
//! binary format, on a real lackey trace captured at bench time when
//! valgrind is installed (`ls -la /usr/lib`) and on synthetic traces.
//!
//! The `decode` group times the frame decoder alone, in ns per record
//! (criterion's throughput is records/s): `zstd` decompresses each frame
//! (the zstd share), `frame` decodes each frame into records with
//! [`TraceFile::decode_frame`] (zstd and the frame decode), on a
//! synthetic trace and, when `CACHEPART_BENCH_TRACE` names a binary trace
//! (a captured one, say), on that trace's first 16 frames.
//!
//! Run: `cargo bench -p cachepart-trace --bench trace` (only the decoder:
//! `-- decode/`).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use cachepart_trace::synth::{Distribution, InstructionMix, Pattern, SynthConfig};
use cachepart_trace::{FrameScratch, Header, LackeyReader, Reader, Record, TraceFile, Writer};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cachepart-bench-{}-{name}", std::process::id()))
}

/// Captures `ls -la /usr/lib` with lackey, streaming valgrind's stderr
/// through the lackey reader; `None` without valgrind.
fn lackey_trace() -> Option<Vec<Record>> {
    let child = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes", "ls", "-la", "/usr/lib"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        println!("valgrind not found: benchmarking synthetic traces only");
        return None;
    };
    let err = BufReader::new(child.stderr.take()?);
    let recs: Result<Vec<Record>, _> = LackeyReader::new(err).collect();
    child.wait().ok()?;
    recs.ok()
}

fn synthetic(name: &str, pattern: Pattern) -> (String, Vec<Record>) {
    let cfg = SynthConfig {
        seed: 1,
        accesses: 4_000_000,
        pattern,
        mix: InstructionMix::default(),
        base: 0x1000_0000,
        line_bytes: 64,
    };
    (name.to_string(), cfg.generator().unwrap().collect())
}

fn encode(records: &[Record]) -> Vec<u8> {
    let mut w = Writer::new(Vec::with_capacity(records.len()), &Header::default()).unwrap();
    w.extend(records.iter().copied()).unwrap();
    w.finish().unwrap().0
}

/// Frames of the decode group's real trace.
const REAL_FRAMES: usize = 16;

fn bench_decode(c: &mut Criterion) {
    let mut files = Vec::new();
    let (name, recs) = synthetic(
        "zipf-8MiB",
        Pattern::CacheSensitive {
            working_set_bytes: 8 << 20,
            distribution: Distribution::Zipf,
            zipf_exponent: 0.99,
        },
    );
    let path = tmp("decode-synthetic");
    std::fs::write(&path, encode(&recs)).unwrap();
    files.push((name, path, true));
    if let Some(real) = std::env::var_os("CACHEPART_BENCH_TRACE") {
        files.push(("real".to_string(), PathBuf::from(real), false));
    }
    let mut g = c.benchmark_group("decode");
    g.sample_size(20);
    g.measurement_time(std::time::Duration::from_secs(4));
    g.warm_up_time(std::time::Duration::from_millis(500));
    for (name, path, scratch_file) in &files {
        let file = TraceFile::open(path).unwrap();
        let bytes = std::fs::read(path).unwrap();
        let frames: Vec<usize> = (0..file.frames().len().min(REAL_FRAMES)).collect();
        let records: u64 = frames
            .iter()
            .map(|&i| u64::from(file.frames()[i].records))
            .sum();
        // each frame's zstd body and raw length, from its header
        let bodies: Vec<(&[u8], usize)> = frames
            .iter()
            .map(|&i| {
                let at = file.frames()[i].offset as usize;
                let word = |k: usize| {
                    u32::from_le_bytes(bytes[at + k..at + k + 4].try_into().unwrap()) as usize
                };
                (&bytes[at + 16..at + 16 + word(4)], word(12))
            })
            .collect();
        println!("decode {name}: {} frames, {records} records", frames.len());
        g.throughput(Throughput::Elements(records));
        g.bench_function(BenchmarkId::new("zstd", name), |b| {
            let mut dec = zstd::bulk::Decompressor::new().unwrap();
            let mut raw = Vec::new();
            b.iter(|| {
                let mut n = 0;
                for &(body, raw_len) in &bodies {
                    raw.clear();
                    raw.reserve(raw_len);
                    n += dec.decompress_to_buffer(body, &mut raw).unwrap();
                }
                n
            })
        });
        g.bench_function(BenchmarkId::new("frame", name), |b| {
            let mut scratch = FrameScratch::new().unwrap();
            let mut out: Vec<Record> = Vec::new();
            b.iter(|| {
                let mut sum = 0u64;
                for &i in &frames {
                    out.clear();
                    file.decode_frame(i, &mut scratch, &mut out).unwrap();
                    sum = sum.wrapping_add(out.last().map_or(0, |r| r.raw()));
                }
                sum
            })
        });
        drop(file);
        if *scratch_file {
            std::fs::remove_file(path).unwrap();
        }
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let mut traces = Vec::new();
    if let Some(t) = lackey_trace() {
        traces.push(("lackey-ls".to_string(), t));
    }
    traces.push(synthetic(
        "streaming",
        Pattern::Streaming {
            array_bytes: 64 << 20,
            element_bytes: 8,
        },
    ));
    traces.push(synthetic(
        "zipf-8MiB",
        Pattern::CacheSensitive {
            working_set_bytes: 8 << 20,
            distribution: Distribution::Zipf,
            zipf_exponent: 0.99,
        },
    ));
    traces.push(synthetic(
        "pointer-chase-8MiB",
        Pattern::CacheSensitive {
            working_set_bytes: 8 << 20,
            distribution: Distribution::PointerChase,
            zipf_exponent: 0.99,
        },
    ));

    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(3));
    g.warm_up_time(std::time::Duration::from_millis(500));
    for (name, recs) in &traces {
        let bytes = encode(recs);
        let accesses = recs.iter().filter(|r| r.is_access()).count();
        println!(
            "{name}: {} records, {} accesses, {} bytes, {:.3} bytes/access",
            recs.len(),
            accesses,
            bytes.len(),
            bytes.len() as f64 / accesses as f64
        );
        let path = tmp(name);
        std::fs::write(&path, &bytes).unwrap();
        let file = TraceFile::open(&path).unwrap();
        g.throughput(Throughput::Elements(recs.len() as u64));
        g.bench_with_input(BenchmarkId::new("write", name), recs, |b, recs| {
            b.iter(|| encode(recs).len())
        });
        g.bench_with_input(BenchmarkId::new("read", name), &bytes, |b, bytes| {
            b.iter(|| {
                Reader::new(&bytes[..])
                    .unwrap()
                    .map(|r| r.unwrap().raw())
                    .fold(0, u64::wrapping_add)
            })
        });
        g.bench_with_input(BenchmarkId::new("read-parallel", name), &file, |b, file| {
            b.iter(|| file.par_map_frames(|_, r| r.len()).unwrap().len())
        });
        drop(file);
        std::fs::remove_file(&path).unwrap();
    }
    g.finish();
}

criterion_group!(benches, bench_decode, bench);
criterion_main!(benches);
