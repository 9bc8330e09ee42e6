//! What the capture tests share: scratch folders, argument lists, trace
//! counts and metadata, and whether qemu-user can run here.

#![allow(dead_code)] // each test file uses part of it

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cachepart_capture::CaptureOptions;
use cachepart_trace::{info, Counts};

pub fn tmpdir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("capture-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn words(ws: &[&str]) -> Vec<OsString> {
    ws.iter().map(OsString::from).collect()
}

/// Names of the files in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Counts of the trace at `path`, as `trace info` computes them.
pub fn counts(path: &Path) -> Counts {
    info(path).unwrap().counts
}

/// Whether qemu-user and gcc can run (the qemu route needs both).
pub fn have_qemu() -> bool {
    let opts = CaptureOptions::default();
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let ok = runs(&opts.qemu) && runs(&opts.cc);
    if !ok {
        eprintln!(
            "SKIPPED: {} or {} is not installed (apt-get install qemu-user gcc)",
            opts.qemu.display(),
            opts.cc.display()
        );
    }
    ok
}

/// Options that cache the plugin under the test's target dir.
pub fn qemu_opts(ifetch: bool) -> CaptureOptions {
    CaptureOptions {
        plugin_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("qemu-plugin")),
        ifetch,
        ..CaptureOptions::default()
    }
}

pub fn meta(path: &Path, key: &str) -> Option<String> {
    info(path)
        .unwrap()
        .meta
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}
