//! Synthetic generators: determinism, statistics, and configuration.

use std::collections::HashSet;
use std::path::PathBuf;

use cachepart_trace::synth::{Distribution, InstructionMix, Pattern, Phase, SynthConfig};
use cachepart_trace::{Counts, Footprint, Kind, Record};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sy-{}-{name}", std::process::id()))
}

fn cfg(pattern: Pattern, accesses: u64) -> SynthConfig {
    SynthConfig {
        seed: 42,
        accesses,
        pattern,
        mix: InstructionMix::default(),
        base: 0x1000_0000,
        line_bytes: 64,
    }
}

fn all_patterns() -> Vec<Pattern> {
    let ws = |d| Pattern::CacheSensitive {
        working_set_bytes: 1 << 20,
        distribution: d,
        zipf_exponent: 0.9,
    };
    vec![
        Pattern::Streaming {
            array_bytes: 8 << 20,
            element_bytes: 8,
        },
        ws(Distribution::Uniform),
        ws(Distribution::Zipf),
        ws(Distribution::PointerChase),
        Pattern::Light {
            working_set_bytes: 128 << 10,
        },
        Pattern::Strided {
            array_bytes: 4 << 20,
            stride_bytes: 4160,
            element_bytes: 4,
        },
        Pattern::Phases {
            phases: vec![
                Phase {
                    accesses: 1000,
                    pattern: Pattern::Light {
                        working_set_bytes: 32 << 10,
                    },
                    offset_bytes: 0,
                },
                Phase {
                    accesses: 3000,
                    pattern: Pattern::Streaming {
                        array_bytes: 1 << 20,
                        element_bytes: 8,
                    },
                    offset_bytes: 0,
                },
            ],
        },
    ]
}

#[test]
fn same_seed_gives_byte_identical_files() {
    for (i, p) in all_patterns().into_iter().enumerate() {
        let c = cfg(p, 50_000);
        let (a, b) = (tmp(&format!("a{i}")), tmp(&format!("b{i}")));
        c.write(&a).unwrap();
        c.write(&b).unwrap();
        let (ba, bb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(ba, bb, "pattern {i}");
        let other = SynthConfig { seed: 43, ..c };
        other.write(&b).unwrap();
        if i != 0 && i != 5 {
            // Address patterns that use the rng differ with the seed.
            assert_ne!(ba, std::fs::read(&b).unwrap(), "pattern {i}");
        }
        std::fs::remove_file(&a).unwrap();
        std::fs::remove_file(&b).unwrap();
    }
}

#[test]
fn generators_yield_the_requested_accesses_and_mix() {
    for p in all_patterns() {
        let mut c = Counts::default();
        cfg(p, 100_000).generator().unwrap().for_each(|r| c.add(r));
        assert_eq!(c.accesses(), 100_000);
        let stores = c.stores as f64 / 1e5;
        assert!((stores - 0.3).abs() < 0.01, "store fraction {stores}");
        let ipa = c.instructions as f64 / 1e5;
        assert!((ipa - 2.5).abs() < 0.05, "instructions per access {ipa}");
    }
}

#[test]
fn dense_mixes_give_zero_gaps_and_sparse_ones_escapes() {
    let mut c = cfg(
        Pattern::Light {
            working_set_bytes: 4096,
        },
        100_000,
    );
    c.mix.accesses_per_instr = 2.0;
    let mut counts = Counts::default();
    c.generator().unwrap().for_each(|r| counts.add(r));
    assert!((counts.instructions as f64 / 1e5 - 0.5).abs() < 0.01);
    c.mix.accesses_per_instr = 0.005; // ~200 instructions per access
    let mut counts = Counts::default();
    c.generator().unwrap().for_each(|r| counts.add(r));
    assert!(counts.escapes > 50_000);
    assert!((counts.instructions as f64 / 1e5 - 200.0).abs() < 4.0);
}

#[test]
fn streaming_never_revisits_a_line_within_a_sweep() {
    let array = 1u64 << 20;
    let recs: Vec<Record> = cfg(
        Pattern::Streaming {
            array_bytes: array,
            element_bytes: 8,
        },
        3 * array / 8,
    )
    .generator()
    .unwrap()
    .filter(|r| r.is_access())
    .collect();
    for sweep in recs.chunks((array / 8) as usize) {
        let mut seen = HashSet::new();
        let mut last = None;
        for r in sweep {
            let line = r.addr() / 64;
            if last != Some(line) {
                assert!(seen.insert(line), "line {line:#x} revisited");
            }
            last = Some(line);
        }
        assert_eq!(seen.len() as u64, array / 64);
    }
}

#[test]
fn working_set_footprint_equals_the_working_set() {
    let ws = 2u64 << 20;
    for d in [
        Distribution::Uniform,
        Distribution::PointerChase,
        Distribution::Zipf,
    ] {
        let mut lines = Footprint::new(64);
        let mut pages = Footprint::new(4096);
        cfg(
            Pattern::CacheSensitive {
                working_set_bytes: ws,
                distribution: d,
                zipf_exponent: 0.5,
            },
            400_000,
        )
        .generator()
        .unwrap()
        .for_each(|r| {
            if r.is_access() {
                assert!(r.addr() >= 0x1000_0000 && r.addr() + 8 <= 0x1000_0000 + ws);
            }
            lines.add(r);
            pages.add(r);
        });
        assert_eq!(pages.len(), ws / 4096, "{d:?}");
        if d != Distribution::Zipf {
            assert_eq!(lines.len(), ws / 64, "{d:?}");
        }
    }
}

#[test]
fn pointer_chase_visits_every_line_once_per_lap() {
    let ws = 256u64 << 10;
    let n = ws / 64;
    let recs: Vec<u64> = cfg(
        Pattern::CacheSensitive {
            working_set_bytes: ws,
            distribution: Distribution::PointerChase,
            zipf_exponent: 1.0,
        },
        2 * n,
    )
    .generator()
    .unwrap()
    .filter(|r| r.is_access())
    .map(|r| r.addr() / 64)
    .collect();
    let lap: HashSet<u64> = recs[..n as usize].iter().copied().collect();
    assert_eq!(lap.len() as u64, n);
    assert_eq!(recs[..n as usize], recs[n as usize..]);
}

#[test]
fn strided_walks_at_its_stride() {
    let recs: Vec<Record> = cfg(
        Pattern::Strided {
            array_bytes: 1 << 16,
            stride_bytes: 256,
            element_bytes: 4,
        },
        1000,
    )
    .generator()
    .unwrap()
    .filter(|r| r.is_access())
    .collect();
    assert!(recs
        .iter()
        .all(|r| r.size() == 4 && r.kind() != Kind::Ifetch));
    assert_eq!(recs[1].addr() - recs[0].addr(), 256);
}

#[test]
fn configs_deserialise_from_toml_with_kebab_case() {
    let text = r#"
        seed = 9
        accesses = 5000
        [mix]
        accesses-per-instr = 0.3
        [pattern]
        class = "phases"
        [[pattern.phases]]
        accesses = 100
        pattern = { class = "cache-sensitive", working-set-bytes = 65536, distribution = "pointer-chase" }
        [[pattern.phases]]
        accesses = 200
        pattern = { class = "strided", array-bytes = 65536, stride-bytes = 128 }
    "#;
    let c: SynthConfig = toml::from_str(text).unwrap();
    assert_eq!(c.mix.store_fraction, 0.3);
    assert_eq!(c.line_bytes, 64);
    assert_eq!(
        c.generator().unwrap().filter(|r| r.is_access()).count(),
        5000
    );
    let bad = "seed = 1\naccesses = 1\npattern = { class = \"streaming\", array-bytes = 4096, bogus = 1 }";
    assert!(toml::from_str::<SynthConfig>(bad).is_err());
    let bad = SynthConfig {
        pattern: Pattern::Streaming {
            array_bytes: 1 << 20,
            element_bytes: 0,
        },
        ..c
    };
    assert_eq!(
        bad.generator().err().unwrap().to_string(),
        "invalid generator configuration: element-bytes 0 outside 1..=127"
    );
}

/// Phases with `offset-bytes` touch disjoint regions, each at its offset
/// above the generator's base, interleaved in the phases' proportions;
/// an offset of 0 is left out of the configuration's JSON (so headers of
/// existing configurations are unchanged).
#[test]
fn phase_offsets_give_disjoint_regions() {
    let phase = |accesses, offset_bytes, working_set_bytes| Phase {
        accesses,
        pattern: Pattern::CacheSensitive {
            working_set_bytes,
            distribution: Distribution::Uniform,
            zipf_exponent: 0.9,
        },
        offset_bytes,
    };
    let c = cfg(
        Pattern::Phases {
            phases: vec![phase(3, 0, 64 << 10), phase(1, 1 << 32, 1 << 20)],
        },
        40_000,
    );
    let (mut low, mut high) = (0u64, 0u64);
    for r in c.generator().unwrap().filter(|r| r.is_access()) {
        let a = r.addr() - 0x1000_0000;
        if a < 64 << 10 {
            low += 1;
        } else {
            assert!(
                (1u64 << 32..(1u64 << 32) + (1 << 20)).contains(&a),
                "{a:#x}"
            );
            high += 1;
        }
    }
    assert_eq!((low, high), (30_000, 10_000));
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(json.matches("offset-bytes").count(), 1, "{json}");
    let past = cfg(
        Pattern::Phases {
            phases: vec![phase(1, u64::MAX, 64)],
        },
        10,
    );
    assert!(past.generator().is_err());
}

/// `dependency-hints` turns the loads of pointer-chase patterns (and of
/// nothing else) into dependent loads, leaving every address, size, gap
/// and store where it was; off, no record is a dependent load and the
/// key is left out of the configuration's JSON (headers of existing
/// configurations are unchanged).
#[test]
fn dependency_hints_mark_only_pointer_chase_loads() {
    let chase = Pattern::CacheSensitive {
        working_set_bytes: 64 << 10,
        distribution: Distribution::PointerChase,
        zipf_exponent: 1.0,
    };
    let uniform = Pattern::CacheSensitive {
        working_set_bytes: 64 << 10,
        distribution: Distribution::Uniform,
        zipf_exponent: 1.0,
    };
    let phased = Pattern::Phases {
        phases: vec![
            Phase {
                accesses: 100,
                pattern: chase.clone(),
                offset_bytes: 0,
            },
            Phase {
                accesses: 100,
                pattern: uniform.clone(),
                offset_bytes: 1 << 30,
            },
        ],
    };
    for pattern in [chase, uniform, phased] {
        let plain = cfg(pattern.clone(), 20_000);
        let mut hinted = plain.clone();
        hinted.mix.dependency_hints = true;
        let a: Vec<Record> = plain.generator().unwrap().collect();
        let b: Vec<Record> = hinted.generator().unwrap().collect();
        assert_eq!(a.len(), b.len());
        assert!(a.iter().all(|r| r.kind() != Kind::DepLoad));
        let mut dep = 0;
        for (x, y) in a.iter().zip(&b) {
            if y.kind() == Kind::DepLoad {
                dep += 1;
                assert_eq!(x.kind(), Kind::Load);
                // Chased lines are below the uniform phase's offset.
                assert!(y.addr() < 0x1000_0000 + (1 << 30), "{:#x}", y.addr());
            } else {
                assert_eq!(x.kind(), y.kind());
            }
            assert_eq!((x.addr(), x.size(), x.gap()), (y.addr(), y.size(), y.gap()));
        }
        let loads = a.iter().filter(|r| r.kind() == Kind::Load).count();
        match &pattern {
            Pattern::CacheSensitive {
                distribution: Distribution::PointerChase,
                ..
            } => assert_eq!(dep, loads),
            Pattern::CacheSensitive { .. } => assert_eq!(dep, 0),
            _ => assert!(dep > 0 && dep < loads, "{dep} of {loads}"),
        }
        let mut counts = Counts::default();
        b.iter().for_each(|&r| counts.add(r));
        assert_eq!(
            (counts.dependent_loads, counts.loads),
            (dep as u64, loads as u64)
        );
        let json = serde_json::to_string(&plain).unwrap();
        assert!(!json.contains("dependency-hints"), "{json}");
        let json = serde_json::to_string(&hinted).unwrap();
        assert!(json.contains("\"dependency-hints\":true"), "{json}");
        assert_eq!(serde_json::from_str::<SynthConfig>(&json).unwrap(), hinted);
        // A hinted trace survives the binary format.
        let path = tmp("hints.cpt");
        hinted.write(&path).unwrap();
        let back = cachepart_trace::TraceFile::open(&path)
            .unwrap()
            .read_all_parallel()
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back, b);
    }
}
