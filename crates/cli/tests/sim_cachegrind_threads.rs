//! `cachepart sim cachegrind --threads N`: the same summary and JSON as
//! one thread on a trace of several chunks, and the thread counts it
//! refuses, named in the error.

use std::path::Path;
use std::process::{Command, Output};

use cachepart::trace::{Header, Kind, Record, Writer};

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
    let mut w = Writer::new(std::fs::File::create(path).unwrap(), &Header::default()).unwrap();
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
