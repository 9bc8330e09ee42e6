//! Prints, for each file given, the class of what the reader makes of it
//! (the first error with numbers and quoted text blanked, or `ok`), to keep
//! one small corpus file per distinct outcome:
//! `cargo run --example classify -- TARGET FILE...`.

use std::fs;

use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{DinReader, LackeyReader, Reader, Record, Result, TraceFile};

fn blank(msg: &str) -> String {
    // Drop quoted input, then blank every word holding a digit.
    let cut = msg.split('"').next().unwrap_or(msg);
    cut.split_whitespace()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn first_error(it: impl IntoIterator<Item = Result<Record>>) -> String {
    it.into_iter()
        .find_map(|r| r.err())
        .map_or("ok".into(), |e| e.to_string())
}

fn class(target: &str, data: &[u8], path: &str) -> String {
    match target {
        "frame" => match data {
            [a, b, raw @ ..] => {
                let n = u32::from(u16::from_le_bytes([*a, *b]) % 1024) + 1;
                class("reader", &cachepart_fuzz::assemble(raw, n), path)
            }
            _ => "too short".into(),
        },
        "reader" => match Reader::new(data) {
            Ok(r) => first_error(r),
            Err(e) => e.to_string(),
        },
        "trace_file" => {
            let tmp = std::env::temp_dir().join(format!("classify-{}", std::process::id()));
            fs::write(&tmp, data).unwrap();
            let out = TraceFile::open(&tmp)
                .and_then(|f| f.records_from(0).map(first_error))
                .unwrap_or_else(|e| e.to_string());
            let _ = fs::remove_file(&tmp);
            out
        }
        "lackey" => first_error(LackeyReader::new(data)),
        "din" => first_error(DinReader::new(data)),
        "synth" => match std::str::from_utf8(data).map(toml::from_str::<SynthConfig>) {
            Err(_) => "not UTF-8".into(),
            Ok(Err(e)) => format!("toml: {}", e.message()),
            Ok(Ok(cfg)) => cfg.generator().err().map_or_else(
                || format!("ok {:?}", std::mem::discriminant(&cfg.pattern)),
                |e| e.to_string(),
            ),
        },
        _ => panic!("unknown target {target} ({path})"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (target, files) = args.split_first().expect("TARGET FILE...");
    for path in files {
        let data = fs::read(path).unwrap();
        println!(
            "{}\t{}\t{path}",
            blank(&class(target, &data, path)),
            data.len()
        );
    }
}
