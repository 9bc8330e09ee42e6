//! Traces for the curves' benchmarks, accuracy tests and the figures of
//! `docs/curves.md`: seeded synthetic ones, and real programs captured
//! with valgrind lackey at run time when valgrind is installed.

#![allow(dead_code)]

use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use cachepart_trace::synth::{Distribution, InstructionMix, Pattern, Phase, SynthConfig};
use cachepart_trace::{LackeyReader, Record};

fn synth(seed: u64, accesses: u64, pattern: Pattern) -> Vec<Record> {
    SynthConfig {
        seed,
        accesses,
        pattern,
        mix: InstructionMix::default(),
        base: 0x1000_0000,
        line_bytes: 64,
    }
    .generator()
    .expect("valid config")
    .collect()
}

/// Zipf (exponent 0.99) accesses over `ws` bytes.
pub fn zipf(accesses: u64, ws: u64) -> Vec<Record> {
    synth(
        11,
        accesses,
        Pattern::CacheSensitive {
            working_set_bytes: ws,
            distribution: Distribution::Zipf,
            zipf_exponent: 0.99,
        },
    )
}

/// Uniform accesses over a `ws`-byte working set.
pub fn working_set(accesses: u64, ws: u64) -> Vec<Record> {
    synth(
        12,
        accesses,
        Pattern::CacheSensitive {
            working_set_bytes: ws,
            distribution: Distribution::Uniform,
            zipf_exponent: 0.0,
        },
    )
}

/// Phases: zipf over 8 MiB, a 32 MiB stream, uniform over 256 KiB.
pub fn phased(accesses: u64) -> Vec<Record> {
    let third = accesses / 6;
    synth(
        13,
        accesses,
        Pattern::Phases {
            phases: vec![
                Phase {
                    accesses: third,
                    pattern: Pattern::CacheSensitive {
                        working_set_bytes: 8 << 20,
                        distribution: Distribution::Zipf,
                        zipf_exponent: 0.99,
                    },
                    offset_bytes: 0,
                },
                Phase {
                    accesses: third,
                    pattern: Pattern::Streaming {
                        array_bytes: 32 << 20,
                        element_bytes: 8,
                    },
                    offset_bytes: 0,
                },
                Phase {
                    accesses: third,
                    pattern: Pattern::Light {
                        working_set_bytes: 256 << 10,
                    },
                    offset_bytes: 0,
                },
            ],
        },
    )
}

/// Seeded text of `bytes` bytes: words of a 2,000-word vocabulary, one per
/// line (input for `sort` and `xz`).
pub fn text(bytes: usize) -> Vec<u8> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let vocab: Vec<Vec<u8>> = (0..2000)
        .map(|_| {
            let len = 2 + next() % 8;
            (0..len).map(|_| b'a' + (next() % 16) as u8).collect()
        })
        .collect();
    let mut out = Vec::with_capacity(bytes + 16);
    while out.len() < bytes {
        out.extend_from_slice(&vocab[(next() % 2000) as usize]);
        out.push(b'\n');
    }
    out
}

/// Runs `cmd` on a generated text file of `bytes` bytes under valgrind
/// lackey and returns its trace; `None` when valgrind is not installed.
pub fn lackey(name: &str, cmd: &[&str], bytes: usize) -> Option<Vec<Record>> {
    let input: PathBuf = std::env::temp_dir().join(format!(
        "cachepart-curves-{}-{name}.txt",
        std::process::id()
    ));
    std::fs::File::create(&input)
        .and_then(|mut f| f.write_all(&text(bytes)))
        .expect("temp file");
    let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    args.push(input.display().to_string());
    let recs = lackey_args(&args);
    let _ = std::fs::remove_file(&input);
    recs
}

/// Runs the command `args` under valgrind lackey and returns its trace;
/// `None` when valgrind or the program is missing or fails.
pub fn lackey_args(args: &[String]) -> Option<Vec<Record>> {
    let child = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return None;
    };
    let err = BufReader::with_capacity(1 << 20, child.stderr.take()?);
    let recs: Result<Vec<Record>, _> = LackeyReader::new(err).lenient(true).collect();
    let status = child.wait();
    match (recs, status) {
        (Ok(r), Ok(s)) if s.success() && !r.is_empty() => Some(r),
        _ => None,
    }
}

/// `sqlite3` on an in-memory database: 4,000 rows of generated text,
/// an index, a grouped count and a sorted self-join (about 6 M data
/// references).
pub fn sqlite() -> Option<Vec<Record>> {
    let sql = "create table t(k integer primary key, w text, v integer);\
        with recursive c(x) as (select 1 union all select x + 1 from c where x < 4000) \
        insert into t select x, printf('%08x', (x * 2654435761) % 4294967296), (x * 7919) % 1009 from c;\
        create index tv on t(v);\
        select v % 37, count(*), sum(length(w)) from t group by v % 37 order by 2 desc limit 5;\
        select count(*) from t a join t b on a.v = b.v where a.k < b.k;";
    lackey_args(&["sqlite3".into(), ":memory:".into(), sql.into()])
}

/// `sort` of 3,000 generated lines (about 3.4 M data references).
pub fn sort() -> Option<Vec<Record>> {
    lackey("sort", &["sort"], 18_000)
}

/// `xz -3 -c` of 60 KB of generated text (about 9 M data references).
pub fn xz() -> Option<Vec<Record>> {
    lackey("xz", &["xz", "-3", "-c"], 60_000)
}
