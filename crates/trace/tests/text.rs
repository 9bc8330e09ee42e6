//! The text readers end to end: lackey and din conversions, and a real
//! valgrind lackey capture when valgrind is installed.

use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use cachepart_trace::{convert, convert_stream, info, Event, Header, Kind, TraceFormat};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tx-{}-{name}", std::process::id()))
}

#[test]
fn din_converts_with_counts() {
    let input = tmp("in.din");
    let output = tmp("out.cpt");
    let mut text = String::new();
    for i in 0..5000u64 {
        text.push_str(&format!("2 {:x} 4\n", 0x40_0000 + 4 * i));
        if i % 2 == 0 {
            text.push_str(&format!("0 {:x} 8\n", 0x10_0000 + 64 * (i % 100)));
        }
        if i % 5 == 0 {
            text.push_str(&format!("1 {:x}\n", 0x20_0000 + 8 * i));
        }
    }
    text.push_str("3 1234\n4 0\n");
    std::fs::write(&input, text).unwrap();
    let s = convert(&input, TraceFormat::Din, &output).unwrap();
    assert_eq!(s.records, 5000 + 2500 + 1000 + 2);
    let i = info(&output).unwrap();
    assert_eq!(i.counts.ifetches, 5000);
    assert_eq!(i.counts.loads, 2500);
    assert_eq!(i.counts.stores, 1000);
    assert_eq!(i.counts.escapes, 2);
    assert_eq!(i.counts.instructions, 5000);
    assert_eq!(i.accesses, 8500);
    assert_eq!(i.meta[0], ("source-format".into(), "din".into()));
    std::fs::remove_file(&input).unwrap();
    std::fs::remove_file(&output).unwrap();
}

#[test]
fn conversions_compose() {
    // lackey text -> cpt -> cpt gives the same records.
    let lackey = "I  0400,3\n L 1000,8\n S 1008,8\nI  0403,2\n M 1010,4\n";
    let mut a = Vec::new();
    convert_stream(
        lackey.as_bytes(),
        TraceFormat::Lackey,
        &mut a,
        &Header::default(),
    )
    .unwrap();
    let mut b = Vec::new();
    convert_stream(&a[..], TraceFormat::Cpt, &mut b, &Header::default()).unwrap();
    assert_eq!(a, b);
    assert_eq!("din".parse::<TraceFormat>().unwrap(), TraceFormat::Din);
    assert!("xyz".parse::<TraceFormat>().is_err());
    let _ = (Kind::Load, Event::Flush);
}

#[test]
fn real_lackey_capture_converts_line_for_line() {
    if !cachepart_testkit::have_valgrind() {
        return;
    }
    let log = tmp("true.lackey");
    let status = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .arg("/bin/true")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let count = |p: &str| text.lines().filter(|l| l.starts_with(p)).count() as u64;
    let (ifetch, loads, stores, mods) = (count("I  "), count(" L "), count(" S "), count(" M "));
    assert!(ifetch > 10_000, "only {ifetch} instructions");
    let out = tmp("true.cpt");
    let s = convert(&log, TraceFormat::Lackey, &out).unwrap();
    assert_eq!(s.records, ifetch + loads + stores + mods);
    let i = info(&out).unwrap();
    assert_eq!(i.counts.ifetches, ifetch);
    assert_eq!(i.counts.loads, loads);
    assert_eq!(i.counts.stores, stores);
    assert_eq!(i.counts.modifies, mods);
    assert_eq!(i.counts.instructions, ifetch);
    assert!(i.footprint_pages > 5);
    println!(
        "/bin/true: {} records, {} bytes, {:.3} bytes/access",
        i.counts.records,
        i.file_bytes,
        i.bytes_per_access.expect("a trace with records")
    );
    std::fs::remove_file(&log).unwrap();
    std::fs::remove_file(&out).unwrap();
}

#[test]
fn real_lackey_capture_streams_through_a_pipe() {
    if !cachepart_testkit::have_valgrind() {
        return;
    }
    // valgrind's log (the trace) goes to stderr; the program's output is
    // discarded, so no text file is ever written.
    let mut child = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes", "/bin/true"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let header = Header::default().with_meta("command", "/bin/true");
    let mut out = Vec::new();
    let s = convert_stream(stderr, TraceFormat::Lackey, &mut out, &header).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(s.records > 10_000);
    assert_eq!(s.bytes, out.len() as u64);
}
