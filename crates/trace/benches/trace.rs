//! Write and read throughput (records/s) and bytes per access of the
//! binary format, on a real lackey trace captured at bench time when
//! valgrind is installed (`ls -la /usr/lib`) and on synthetic traces.
//!
//! Run: `cargo bench -p cachepart-trace --bench trace`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use cachepart_trace::synth::{Distribution, InstructionMix, Pattern, SynthConfig};
use cachepart_trace::{Header, LackeyReader, Reader, Record, TraceFile, Writer};
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

criterion_group!(benches, bench);
criterion_main!(benches);
