//! The SHARDS sample index gives the same estimate as a pass over the
//! trace, bit for bit, for every configuration it serves; it refuses the
//! others, a stale index and a corrupt one with errors that say why.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use cachepart_curves::{
    build_index, index_path, mix64, shards, CurveError, Options, Sampling, ShardsConfig,
    ShardsIndex,
};
use cachepart_trace::{Event, Header, Kind, Record, Writer};
use proptest::prelude::*;

/// A trace with hot lines (runs of repeats), a wide footprint, fetches,
/// line-crossing accesses and escapes.
fn records(n: u64, seed: u64, lines: u64) -> Vec<Record> {
    let mut x = seed;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        x = mix64(x ^ i);
        if x.is_multiple_of(97) {
            out.push(Record::event(Event::InstrGap(1000 + x % 50), 0).unwrap());
            continue;
        }
        let kind = [Kind::Load, Kind::Ifetch, Kind::Store, Kind::Modify][(x >> 8) as usize % 4];
        let line = match (x >> 16) % 10 {
            0..=3 => (x >> 24) % 8,
            4..=6 => (x >> 24) % 300,
            _ => (x >> 24) % lines,
        };
        let offset = if x.is_multiple_of(13) {
            60
        } else {
            (x >> 32) % 56
        };
        out.push(
            Record::access(kind, 0x1000_0000 + line * 64 + offset, 8, (x % 3) as u32).unwrap(),
        );
    }
    out
}

fn write_trace(dir: &Path, name: &str, recs: &[Record]) -> PathBuf {
    let path = dir.join(name);
    let f = BufWriter::new(File::create(&path).unwrap());
    let mut w = Writer::new(f, &Header::default()).unwrap();
    w.extend(recs.iter().copied()).unwrap();
    w.finish().unwrap();
    path
}

fn configs() -> Vec<ShardsConfig> {
    let mut v = Vec::new();
    for salt in [0, 1, 7] {
        v.push(ShardsConfig::fixed_rate(0.01).with_salt(salt));
        v.push(ShardsConfig::fixed_rate(0.03).with_salt(salt));
        v.push(ShardsConfig::fixed_rate(0.001).with_salt(salt));
        v.push(
            ShardsConfig::fixed_rate(0.01)
                .with_salt(salt)
                .with_exact_below(16),
        );
        v.push(
            ShardsConfig::fixed_rate(0.01)
                .with_salt(salt)
                .with_exact_below(0),
        );
        v.push(
            ShardsConfig::fixed_rate(0.01)
                .with_salt(salt)
                .with_adjust(false)
                .with_exact_below(0),
        );
        v.push(
            ShardsConfig::fixed_rate(0.01)
                .with_salt(salt)
                .with_reference_fraction(0.25),
        );
        v.push(ShardsConfig {
            sampling: Sampling::FixedSize {
                max_lines: 20,
                initial_rate: 0.02,
            },
            ..ShardsConfig::fixed_rate(0.02).with_salt(salt)
        });
    }
    v
}

#[test]
fn index_estimates_equal_a_pass_over_the_trace() {
    let guard = tempdir("equal");
    let dir = guard.path();
    let recs = records(400_000, 3, 60_000);
    let trace = write_trace(dir, "t.cpt", &recs);
    let opts = Options::default();
    let summary = build_index(&trace, &opts, 256).unwrap();
    assert_eq!(summary.path, index_path(&trace));
    let index = ShardsIndex::open(&summary.path).unwrap();
    index.check_trace(&trace).unwrap();
    let mut served = 0;
    for cfg in configs() {
        let full = shards(recs.iter().copied(), &opts, &cfg).unwrap();
        index.serves(&opts, &cfg).unwrap();
        let from_index = index.estimate(&opts, &cfg).unwrap();
        assert_eq!(from_index, full, "{cfg:?}");
        assert!(full.sampled_refs > 0, "{cfg:?}");
        served += 1;
    }
    assert_eq!(served, 24);
    // The index holds about 1/32 of the references.
    let ratio = summary.sampled_refs as f64 / summary.accesses as f64;
    assert!(ratio > 0.005 && ratio < 0.2, "base sample fraction {ratio}");
}

#[test]
fn another_base_salt_needs_its_own_index() {
    let guard = tempdir("base-salt");
    let dir = guard.path();
    let recs = records(100_000, 4, 20_000);
    let trace = write_trace(dir, "t.cpt", &recs);
    let opts = Options::default();
    cachepart_curves::build_index_with_base_salt(&trace, &opts, 256, 5).unwrap();
    let index = ShardsIndex::open(&index_path(&trace)).unwrap();
    let cfg = ShardsConfig::fixed_rate(0.01)
        .with_base_salt(5)
        .with_salt(2);
    let full = shards(recs.iter().copied(), &opts, &cfg).unwrap();
    assert_eq!(index.estimate(&opts, &cfg).unwrap(), full);
    // Another base salt is another base sample.
    let other = shards(recs.iter().copied(), &opts, &cfg.with_base_salt(0)).unwrap();
    assert_ne!(other, full);
    let why = index.serves(&opts, &cfg.with_base_salt(0)).unwrap_err();
    assert!(why.contains("another base salt"), "{why}");
}

#[test]
fn fetches_and_line_size_must_match() {
    let guard = tempdir("opts");
    let dir = guard.path();
    let recs = records(50_000, 5, 5_000);
    let trace = write_trace(dir, "t.cpt", &recs);
    let opts = Options::default().with_ifetch(true).with_line_bytes(128);
    build_index(&trace, &opts, 64).unwrap();
    let index = ShardsIndex::open(&index_path(&trace)).unwrap();
    let cfg = ShardsConfig::fixed_rate(0.02).with_exact_below(64);
    let full = shards(recs.iter().copied(), &opts, &cfg).unwrap();
    assert_eq!(index.estimate(&opts, &cfg).unwrap(), full);
    let why = index.serves(&Options::default(), &cfg).unwrap_err();
    assert!(why.contains("128-byte lines with fetches"), "{why}");
    // Not served: a rate above the base rate, C above the index's, a
    // reference sample above the base.
    for (cfg, words) in [
        (ShardsConfig::fixed_rate(0.1), "above the index's base rate"),
        (
            ShardsConfig::fixed_rate(0.01).with_exact_below(256),
            "exact-below-lines 256 is above the index's 64",
        ),
        (
            ShardsConfig::fixed_rate(0.01)
                .with_exact_below(64)
                .with_reference_fraction(1.0),
            "reference sample's rate",
        ),
    ] {
        let why = index.serves(&opts, &cfg).unwrap_err();
        assert!(why.contains(words), "{why}");
        assert!(matches!(
            index.estimate(&opts, &cfg),
            Err(CurveError::NotServed(_))
        ));
    }
}

/// Found by a robustness probe: `-` was looked for as a file named `-`
/// ("No such file or directory").
#[test]
fn standard_input_is_refused_by_name() {
    let err = build_index(Path::new("-"), &Options::default(), 64).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("-: ") && msg.contains("standard input can not be read here"),
        "{msg}"
    );
}

#[test]
fn stale_and_corrupt_indexes_are_refused() {
    let guard = tempdir("bad");
    let dir = guard.path();
    let recs = records(100_000, 9, 10_000);
    let trace = write_trace(dir, "t.cpt", &recs);
    let opts = Options::default();
    build_index(&trace, &opts, 256).unwrap();
    let idx = index_path(&trace);
    let good = std::fs::read(&idx).unwrap();
    // Another trace under the same name: the index is stale.
    write_trace(dir, "t.cpt", &recs[..90_000]);
    let e = ShardsIndex::open(&idx)
        .unwrap()
        .check_trace(&trace)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("built from another version") && msg.contains("shards-index"),
        "{msg}"
    );
    // Corruptions: each error names the file and a byte offset.
    let cfg = ShardsConfig::fixed_rate(0.01);
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    let mut magic = good.clone();
    magic[0] = b'X';
    cases.push((magic, "byte 0: bad magic"));
    let mut version = good.clone();
    version[8] = 9;
    cases.push((version, "byte 8: version 9"));
    let mut head = good.clone();
    head[60] ^= 1;
    cases.push((head, "byte 168: header checksum"));
    cases.push((good[..good.len() - 5].to_vec(), "byte 128: section lengths"));
    let mut runs = good.clone();
    let n = runs.len();
    runs[n - 40] ^= 0x55;
    cases.push((runs, "byte "));
    cases.push((good[..100].to_vec(), "truncated"));
    for (bytes, words) in cases {
        std::fs::write(&idx, &bytes).unwrap();
        let r = ShardsIndex::open(&idx).and_then(|i| i.estimate(&opts, &cfg));
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains(words), "{msg}");
        assert!(msg.contains("t.cpt.shards"), "{msg}");
    }
}

#[test]
fn a_failed_build_leaves_no_index() {
    let guard = tempdir("fail");
    let dir = guard.path();
    let mut bytes = {
        let recs = records(50_000, 1, 1000);
        std::fs::read(write_trace(dir, "t.cpt", &recs)).unwrap()
    };
    // Break a frame in the middle.
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0xa5;
    }
    let trace = dir.join("broken.cpt");
    std::fs::write(&trace, &bytes).unwrap();
    assert!(build_index(&trace, &Options::default(), 256).is_err());
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".shards"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_directory_where_the_index_goes_is_refused_first() {
    let guard = tempdir("dir");
    let dir = guard.path();
    let trace = write_trace(dir, "t.cpt", &records(1_000, 1, 100));
    std::fs::create_dir(index_path(&trace)).unwrap();
    let e = build_index(&trace, &Options::default(), 256)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.cpt.shards: not a regular file: expected the trace's index there"),
        "{e}"
    );
    assert!(index_path(&trace).is_dir(), "the directory is left alone");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// On random small traces, at random rates and salts, the index's
    /// estimate is the pass's.
    #[test]
    fn index_equals_pass_on_random_traces(
        seed in 0u64..1000,
        n in 1_000u64..40_000,
        lines in 1u64..5_000,
        rate in 0.001f64..0.03,
        salt in 0u64..100,
        c in 0u32..300,
    ) {
        let guard = tempdir(&format!("prop-{seed}-{n}"));
    let dir = guard.path();
        let recs = records(n, seed, lines);
        let trace = write_trace(dir, "p.cpt", &recs);
        let opts = Options::default();
        build_index(&trace, &opts, 300).unwrap();
        let index = ShardsIndex::open(&index_path(&trace)).unwrap();
        let cfg = ShardsConfig::fixed_rate(rate).with_salt(salt).with_exact_below(c);
        let full = shards(recs.iter().copied(), &opts, &cfg).unwrap();
        prop_assert_eq!(index.estimate(&opts, &cfg).unwrap(), full);
    }
}

/// A scratch directory, removed when the returned guard drops.
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cachepart-shards-index-{name}-"))
        .tempdir()
        .expect("create a scratch directory")
}
