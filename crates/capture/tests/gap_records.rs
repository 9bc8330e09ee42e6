//! The instruction-gap records of the C capture tools against Rust's:
//! `include/cp_gap.h`, which cpgrind and the qemu plugin both write their
//! gaps with, is compiled into a small driver (`common/gap_records.c`,
//! built here with the capture's C compiler, gcc; skipped with a
//! `SKIPPED` line when it is absent), and the words it writes must be,
//! byte for byte, those of `Record::after_gap` for the same record and
//! gap, gaps of 2^48 and more included (split over consecutive `InstrGap`
//! escapes; a real program cannot run that many instructions without an
//! access, so only the encoding itself can be tested). The trailing
//! instructions' escapes (`cp_instr_gaps`) are checked the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

use cachepart_capture::CaptureOptions;
use cachepart_trace::record::{MAX_GAP, MAX_PAYLOAD};
use cachepart_trace::{Event, Kind, Record};
use common::tmpdir;

/// Builds the driver in `d`, or `None` (with a `SKIPPED` line) when the
/// C compiler does not run.
fn driver(d: &Path) -> Option<PathBuf> {
    let cc = CaptureOptions::default().cc;
    let runs = Command::new(&cc)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !runs {
        println!(
            "SKIPPED: {} is not installed (apt-get install gcc)",
            cc.display()
        );
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = d.join("gap_records");
    // the tools' optimisation level; any warning in the header fails
    let out = Command::new(&cc)
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(dir.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(dir.join("tests/common/gap_records.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// What the driver writes for `args`.
fn run(exe: &Path, args: &[String]) -> Vec<u8> {
    let out = Command::new(exe).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn bytes(recs: impl IntoIterator<Item = Record>) -> Vec<u8> {
    recs.into_iter()
        .flat_map(|r| r.raw().to_le_bytes())
        .collect()
}

/// The first difference of two record streams, for the failure message.
fn first_difference(c: &[u8], rust: &[u8]) -> String {
    let word = |b: &[u8], i: usize| {
        b.get(i * 8..i * 8 + 8)
            .map(|w| format!("{:#018x}", u64::from_le_bytes(w.try_into().unwrap())))
            .unwrap_or_else(|| "none".into())
    };
    let n = c.len().max(rust.len()).div_ceil(8);
    let i = (0..n).find(|&i| word(c, i) != word(rust, i)).unwrap_or(n);
    format!(
        "{} C records, {} Rust records; record {i}: C {}, Rust {}",
        c.len() / 8,
        rust.len() / 8,
        word(c, i),
        word(rust, i)
    )
}

/// The gaps checked: around the gap field's limit (63) and one escape's
/// (2^48 - 1), several escapes' worth, and the largest.
const GAPS: [u64; 16] = [
    0,
    1,
    MAX_GAP as u64,
    MAX_GAP as u64 + 1,
    1000,
    MAX_PAYLOAD - 1,
    MAX_PAYLOAD,
    1 << 48,
    (1 << 48) + 1,
    (1 << 49) + 5,
    2 * MAX_PAYLOAD,
    2 * MAX_PAYLOAD + 1,
    3 << 48,
    3 * MAX_PAYLOAD,
    3 * MAX_PAYLOAD + 1,
    u64::MAX,
];

#[test]
fn c_gap_records_are_rusts_after_gap() {
    let d = tmpdir("gap-after");
    let Some(exe) = driver(&d) else {
        return;
    };
    let records = [
        Record::access(Kind::Load, 0x1000, 8, 0).unwrap(),
        // a gap field already set is replaced, not added to
        Record::access(Kind::Store, 0xffff_ffff_ff60_0000, 4, 5).unwrap(),
        Record::access(Kind::DepLoad, 0x7fff_ffff_fff8, 127, 63).unwrap(),
        Record::access(Kind::Ifetch, 0x40_1000, 15, 0).unwrap(),
    ];
    for r in records {
        for gap in GAPS {
            let args = ["after".into(), format!("{:#x}", r.raw()), gap.to_string()];
            let c = run(&exe, &args);
            let rust = bytes(r.after_gap(gap));
            assert!(
                c == rust,
                "record {:#x} after a gap of {gap}: {}",
                r.raw(),
                first_difference(&c, &rust)
            );
        }
    }
    // the cases the split is for, spelt out
    let r = records[0];
    let esc = |n| Record::event(Event::InstrGap(n), 0).unwrap();
    for (gap, want) in [
        (MAX_PAYLOAD, vec![esc(MAX_PAYLOAD), r]),
        (1 << 48, vec![esc(MAX_PAYLOAD), esc(1), r]),
        (
            (1 << 49) + 5,
            vec![esc(MAX_PAYLOAD), esc(MAX_PAYLOAD), esc(7), r],
        ),
        (
            3 << 48,
            vec![
                esc(MAX_PAYLOAD),
                esc(MAX_PAYLOAD),
                esc(MAX_PAYLOAD),
                esc(3),
                r,
            ],
        ),
    ] {
        let args = ["after".into(), format!("{:#x}", r.raw()), gap.to_string()];
        assert_eq!(run(&exe, &args), bytes(want), "gap {gap}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// The escapes of `n` trailing instructions: InstrGap escapes of at most
/// 2^48 - 1 each, the full ones first (`after_gap`'s escapes).
fn trailing(n: u64) -> Vec<Record> {
    let mut left = n;
    let mut v = Vec::new();
    while left > 0 {
        let k = left.min(MAX_PAYLOAD);
        left -= k;
        v.push(Record::event(Event::InstrGap(k), 0).unwrap());
    }
    v
}

#[test]
fn c_trailing_instructions_are_split_the_same_way() {
    let d = tmpdir("gap-trailing");
    let Some(exe) = driver(&d) else {
        return;
    };
    let r = Record::access(Kind::Load, 0x1000, 8, 0).unwrap();
    for n in GAPS {
        let want = trailing(n);
        if n > u64::from(MAX_GAP) {
            // the same escapes as before an access
            let v: Vec<Record> = r.after_gap(n).collect();
            assert_eq!(v[..v.len() - 1], want[..], "{n}");
        }
        let c = run(&exe, &["gaps".into(), n.to_string()]);
        let rust = bytes(want);
        assert!(
            c == rust,
            "{n} trailing instructions: {}",
            first_difference(&c, &rust)
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
