//! The qemu route's fast skip (`CaptureOptions::fast_skip`): the plugin
//! counts the start-up without recording it, and the trace is the same,
//! byte for byte, as when every record of the start-up goes through the
//! pipe and is dropped by the window. Skipped with a `SKIPPED` line when
//! qemu-user or gcc is absent.

mod common;

use std::ffi::OsString;

use cachepart_capture::{capture_qemu, CaptureOptions, FAST_SKIP_MARGIN};
use common::{have_qemu, qemu_opts, tmpdir};

/// A deterministic 1 MiB input for `xz` (words from a small LCG), enough
/// for some 150 M guest instructions at `-1`.
fn input() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(1 << 20);
    while out.len() < 1 << 20 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 2 + (x >> 60) as usize;
        out.extend((0..len).map(|i| b'a' + ((x >> (8 + 3 * i)) & 15) as u8));
        out.push(if (x >> 40) & 7 == 0 { b'\n' } else { b' ' });
    }
    out
}

#[test]
fn a_fast_skip_writes_the_same_trace_as_a_recorded_one() {
    if !have_qemu() {
        return;
    }
    let d = tmpdir("qemu-fast-skip");
    let data = d.join("in.txt");
    std::fs::write(&data, input()).unwrap();
    let cmd: Vec<OsString> = ["xz", "-1", "-c", "-T1"]
        .into_iter()
        .map(OsString::from)
        .chain([data.clone().into_os_string()])
        .collect();
    let skip = FAST_SKIP_MARGIN + 40_000_000;
    // The first capture of a process has given a trace a few records off
    // the later ones (slow and fast alike; every `trace capture` process
    // gives the same bytes run after run), so one is made and dropped.
    let mut first = true;
    for ifetch in [false, true] {
        let run = |fast: bool| {
            let out = d.join(format!("ifetch-{ifetch}-fast-{fast}.cpt"));
            let opts = CaptureOptions {
                skip,
                instructions: Some(3_000_000),
                fast_skip: fast,
                ..qemu_opts(ifetch)
            };
            let s = capture_qemu(&cmd, &out, &opts).unwrap();
            assert!(s.window_ended, "ifetch {ifetch}, fast {fast}: {s:?}");
            assert!(s.instructions() >= 3_000_000, "{s:?}");
            std::fs::read(&out).unwrap()
        };
        if std::mem::take(&mut first) {
            run(false);
        }
        let slow = run(false);
        let fast = run(true);
        assert!(
            slow == fast,
            "ifetch {ifetch}: the fast skip's trace differs ({} against {} bytes)",
            fast.len(),
            slow.len()
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_plugin_skips_only_what_lies_well_before_the_window() {
    let at = |skip: u64, fast_skip: bool| {
        CaptureOptions {
            skip,
            fast_skip,
            ..CaptureOptions::default()
        }
        .plugin_skip()
    };
    assert_eq!(at(0, true), 0);
    assert_eq!(at(FAST_SKIP_MARGIN, true), 0);
    assert_eq!(at(FAST_SKIP_MARGIN + 5, true), 5);
    assert_eq!(at(8_000_000_000, true), 8_000_000_000 - FAST_SKIP_MARGIN);
    assert_eq!(at(8_000_000_000, false), 0);
}
