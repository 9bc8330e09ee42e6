//! `cachepart sim cachegrind --decoders D`: the trace file's frames
//! decoded on D threads give the one-decoder totals on one and on several
//! simulating threads, a damaged frame the one-decoder error, and the
//! counts it refuses are named.

use std::path::Path;
use std::process::{Command, Output};

use cachepart::trace::{Header, Kind, Record, TraceFile, Writer};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

/// Fetches along a wandering program counter and data accesses over 32 KiB
/// and 4 MiB, in frames of 7,000 records: 43 frames.
fn write_trace(path: &Path) {
    let header = Header {
        frame_records: 7_000,
        ..Header::default()
    };
    let mut w = Writer::new(std::fs::File::create(path).unwrap(), &header).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut pc = 0x40_0000u64;
    for _ in 0..150_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pc = if x.is_multiple_of(16) {
            0x40_0000 + (x >> 8) % 0x20000
        } else {
            pc + 1 + x % 7
        };
        w.push(Record::access(Kind::Ifetch, pc, 1 + (x >> 4) as u32 % 15, 0).unwrap())
            .unwrap();
        let kind = [Kind::Load, Kind::Store, Kind::Modify][(x >> 12) as usize % 3];
        let span = if (x >> 24).is_multiple_of(3) {
            4 << 20
        } else {
            32 << 10
        };
        let addr = 0x7f00_0000 + (x >> 32) % span;
        w.push(Record::access(kind, addr, [1, 4, 8, 16][(x >> 40) as usize % 4], 0).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
}

const GEOMETRY: [&str; 6] = [
    "--I1",
    "32768,8,64",
    "--D1",
    "32768,8,64",
    "--LL",
    "2097152,16,64",
];

fn run(trace: &str, threads: &str, decoders: Option<&str>) -> Output {
    let mut a = vec![
        "sim",
        "cachegrind",
        trace,
        "--format",
        "json",
        "--threads",
        threads,
    ];
    if let Some(d) = decoders {
        a.extend_from_slice(&["--decoders", d]);
    }
    a.extend_from_slice(&GEOMETRY);
    cachepart(&a)
}

#[test]
fn every_decoder_count_prints_the_one_decoder_totals() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mix.cpt");
    write_trace(&trace);
    assert!(TraceFile::open(&trace).unwrap().frames().len() > 40);
    let t = trace.to_str().unwrap();
    let base = run(t, "1", None);
    assert!(
        base.status.success(),
        "{}",
        String::from_utf8_lossy(&base.stderr)
    );
    let json = String::from_utf8(base.stdout).unwrap();
    assert!(json.contains("\"Ir\": 150000"), "{json}");
    for threads in ["1", "2", "4"] {
        for decoders in ["1", "2", "3", "8"] {
            let o = run(t, threads, Some(decoders));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                o.status.success(),
                "--threads {threads} --decoders {decoders}: {err}"
            );
            assert_eq!(
                String::from_utf8(o.stdout).unwrap(),
                json,
                "--threads {threads} --decoders {decoders}"
            );
            // the banner says how the work is split when it differs
            if decoders != threads {
                assert!(err.contains(&format!("decoding on {decoders}")), "{err}");
            }
        }
    }
}

#[test]
fn a_damaged_frame_gives_the_one_decoder_error() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mix.cpt");
    write_trace(&trace);
    let at = TraceFile::open(&trace).unwrap().frames()[17].offset as usize;
    let mut bytes = std::fs::read(&trace).unwrap();
    for b in &mut bytes[at + 30..at + 60] {
        *b ^= 0xa5;
    }
    std::fs::write(&trace, &bytes).unwrap();
    let t = trace.to_str().unwrap();
    let one = run(t, "1", None);
    assert!(!one.status.success());
    let want = String::from_utf8_lossy(&one.stderr).to_string();
    assert!(want.contains(&format!("offset {at}")), "{want}");
    for decoders in ["2", "5"] {
        let o = run(t, "1", Some(decoders));
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        // the same error line, after a banner that names the decoders
        let last = |s: &str| s.lines().last().unwrap_or_default().to_string();
        assert_eq!(last(&err), last(&want), "--decoders {decoders}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn refused_decoder_counts_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mix.cpt");
    write_trace(&trace);
    let t = trace.to_str().unwrap();
    for bad in ["0", "257"] {
        let o = run(t, "1", Some(bad));
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "--decoders {bad}: the trace is decoded on 1 to 256 threads, not {bad}"
            )),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}
