//! `cachepart sim cachegrind --threads N --decoders D`: the same summary
//! and JSON as one thread and one decoder on a trace of several chunks
//! and frames, a damaged frame's error the same for any D, and the thread
//! and decoder counts it refuses, named in the error.

use std::path::Path;
use std::process::{Command, Output};

use cachepart::trace::{Header, Kind, Record, TraceFile, Writer};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

/// Instruction fetches of 1 to 15 bytes along a wandering program
/// counter and loads, stores and modifies of 1 to 32 bytes, many of them
/// straddling lines: more records than one chunk of the split simulation.
fn write_trace(path: &Path) {
    write_trace_in_frames(path, Header::default().frame_records);
}

/// [`write_trace`] in frames of `frame_records` records.
fn write_trace_in_frames(path: &Path, frame_records: u32) {
    let header = Header {
        frame_records,
        ..Header::default()
    };
    let mut w = Writer::new(std::fs::File::create(path).unwrap(), &header).unwrap();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut pc = 0x40_0000u64;
    for _ in 0..150_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pc = if x.is_multiple_of(32) {
            0x40_0000 + (x >> 8) % 0x10000
        } else {
            pc + 1 + x % 9
        };
        let size = 1 + (x >> 4) as u32 % 15;
        w.push(Record::access(Kind::Ifetch, pc, size, 0).unwrap())
            .unwrap();
        let kind = [Kind::Load, Kind::Store, Kind::Modify][(x >> 12) as usize % 3];
        let span = if !(x >> 24).is_multiple_of(4) {
            32 << 10
        } else {
            4 << 20
        };
        let addr = 0x7f00_0000 + (x >> 32) % span;
        let size = [1, 2, 4, 8, 16, 32][(x >> 40) as usize % 6];
        w.push(Record::access(kind, addr, size, 0).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
}

const GEOMETRY: [&str; 6] = [
    "--I1",
    "32768,8,64",
    "--D1",
    "16384,4,32",
    "--LL",
    "1048576,16,64",
];

#[test]
fn every_thread_count_prints_the_one_thread_summary_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mix.cpt");
    write_trace(&trace);
    let t = trace.to_str().unwrap();
    for format in ["table", "json", "csv"] {
        let run = |threads: &str| {
            let mut a = vec![
                "sim",
                "cachegrind",
                t,
                "--format",
                format,
                "--threads",
                threads,
            ];
            a.extend_from_slice(&GEOMETRY);
            let o = cachepart(&a);
            assert!(
                o.status.success(),
                "--threads {threads}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            o.stdout
        };
        let one = run("1");
        assert!(!one.is_empty());
        for threads in ["2", "4", "8"] {
            assert_eq!(
                String::from_utf8_lossy(&run(threads)),
                String::from_utf8_lossy(&one),
                "--threads {threads} --format {format}"
            );
        }
    }
    // standard input is decoded on one thread, simulated on two
    let mut a = vec![
        "sim",
        "cachegrind",
        "-",
        "--format",
        "json",
        "--threads",
        "2",
    ];
    a.extend_from_slice(&GEOMETRY);
    let piped = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(&a)
        .stdin(std::fs::File::open(&trace).unwrap())
        .output()
        .unwrap();
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let mut a = vec!["sim", "cachegrind", t, "--format", "json"];
    a.extend_from_slice(&GEOMETRY);
    assert_eq!(piped.stdout, cachepart(&a).stdout);
}

#[test]
fn thread_counts_that_cannot_split_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cpt");
    write_trace(&trace);
    let t = trace.to_str().unwrap();
    let refused = |threads: &str, geometry: &[&str], words: &str| {
        let mut a = vec!["sim", "cachegrind", t, "--threads", threads];
        a.extend_from_slice(geometry);
        let o = cachepart(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "--threads {threads}: {err}");
        assert!(err.contains(&format!("--threads {threads}: ")), "{err}");
        assert!(err.contains(words), "--threads {threads}: {err}");
        assert!(o.stdout.is_empty());
    };
    refused("3", &GEOMETRY, "must be a power of two");
    refused("0", &GEOMETRY, "must be a power of two");
    // D1: 128 sets of 32 B lines, bits 5..12; from bit 6 (the 64 B lines)
    // six bits are shared: at most 64 threads
    refused(
        "128",
        &GEOMETRY,
        "(I1 bits 6..12, D1 bits 5..12, LL bits 6..16) share 6 address bits, enough for at most 64 threads",
    );
    // a fully associative I1 (one set) shares no bit
    let mut one_set = GEOMETRY;
    one_set[1] = "1024,16,64";
    refused("2", &one_set, "I1 has one set");
    let o = cachepart(&["sim", "cachegrind", t, "--threads", "two"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'--threads <N>'"));
}

#[test]
fn more_threads_than_cpus_allow_get_a_note_and_one_thread_none() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // a power of two whose decoders and simulating threads outnumber the
    // CPUs; the geometry shares enough bits for up to 32 threads
    let threads = (cpus / 2 + 1).next_power_of_two();
    if threads > 32 {
        eprintln!("SKIPPED: {cpus} CPUs need more threads than the geometry splits into");
        return;
    }
    let d = std::env::temp_dir().join(format!("cg-threads-note-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let trace = d.join("t.cpt");
    write_trace(&trace);
    let t = trace.to_str().unwrap();
    let n = threads.to_string();
    let note = |args: &[&str]| {
        let o = cachepart(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).contains("note: --threads")
    };
    let mut args = vec!["sim", "cachegrind", t, "--threads", &n];
    args.extend(GEOMETRY);
    assert!(
        note(&args),
        "--threads {threads} on {cpus} CPUs gave no note"
    );
    let mut one = vec!["sim", "cachegrind", t];
    one.extend(GEOMETRY);
    assert!(!note(&one), "one thread gave a note");
    std::fs::remove_dir_all(&d).unwrap();
}

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
    write_trace_in_frames(&trace, 7_000);
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
    write_trace_in_frames(&trace, 7_000);
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
