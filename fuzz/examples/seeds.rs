//! Writes the hand-made seed inputs of every fuzz target into
//! `fuzz/corpus/<target>/seed-*` (run from `fuzz/`: `cargo run --example
//! seeds`); the fuzzer grows the corpus from them and `cargo fuzz cmin`
//! keeps it small.

use std::fs;
use std::path::Path;

use cachepart_trace::{Event, Header, Kind, Record, Writer};

fn trace(n: u64, frame: u32, meta: bool) -> Vec<u8> {
    let mut header = Header {
        frame_records: frame,
        ..Header::default()
    };
    if meta {
        header = header
            .with_meta("command", "seed")
            .with_meta("source", "fuzz");
    }
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    for i in 0..n {
        let r = match i % 5 {
            0 => Record::access(Kind::Ifetch, 0x40_0000 + i * 4, 4, 1),
            1 => Record::access(Kind::Load, 0x7ffd_0000 - i * 8, 8, 0),
            2 => Record::access(Kind::Store, 0x1000_0000 + i * 64, 8, 2),
            3 => Record::access(Kind::Modify, 0xffff_ffff_ff60_0000, 4, 63),
            _ => Record::event(Event::ThreadSwitch(i), 0),
        };
        w.push(r.unwrap()).unwrap();
    }
    w.finish().unwrap().0
}

/// Two count bytes and a raw frame body for `kinds` (sizes 8, gaps 0).
fn frame(kinds: &[u8]) -> Vec<u8> {
    let n = kinds.len();
    let ifetch = kinds.iter().filter(|&&k| k == 2).count();
    let data = kinds.iter().filter(|&&k| matches!(k, 0 | 1 | 3)).count();
    let mut raw = ((n - 1) as u16).to_le_bytes().to_vec();
    raw.extend_from_slice(&(ifetch as u32).to_le_bytes());
    raw.extend_from_slice(&(data as u32).to_le_bytes());
    raw.extend_from_slice(kinds);
    raw.resize(raw.len() + n, 8);
    raw.resize(raw.len() + n, 1);
    raw.resize(raw.len() + n, 0x10);
    raw
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let dir = root.join(target);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
    };
    for (name, bytes) in [
        ("empty.cpt", trace(0, 16, false)),
        ("small.cpt", trace(10, 4, true)),
        ("frames.cpt", trace(60, 16, false)),
    ] {
        put("reader", name, &bytes); // shared with `trace_file`
    }
    put("frame", "mixed", &frame(&[2, 0, 1, 2, 3]));
    put("frame", "ifetch", &frame(&[2; 12]));
    put(
        "lackey",
        "sample",
        concat!(
            "==12345== Lackey, an example Valgrind tool\n",
            "I  04001090,3\n",
            " S 1ffefffd78,8\n",
            " L 04022e30,8\n",
            " M 0402a0b0,4\n",
            "\n",
            "--12345-- warning\n",
            "**12345** note\n",
            "hello from the program\n",
        )
        .as_bytes(),
    );
    put(
        "din",
        "sample",
        b"2 401000 4\n0 0x7ffd0010 8\n1 7ffd0018\n\n3 1234\n4 0\r\n0 10 4 9\n",
    );
    let synth = [
        ("streaming.toml", "seed = 1\naccesses = 100\n[mix]\naccesses-per-instr = 0.35\n[pattern]\nclass = \"streaming\"\narray-bytes = 4096\n"),
        ("zipf.toml", "seed = 2\naccesses = 100\nline-bytes = 32\n[pattern]\nclass = \"cache-sensitive\"\nworking-set-bytes = 65536\ndistribution = \"zipf\"\nzipf-exponent = 1.2\n"),
        ("light.toml", "seed = 5\naccesses = 50\nbase = 4096\n[mix]\naccesses-per-instr = 2.5\nstore-fraction = 0.5\n[pattern]\nclass = \"light\"\n"),
        ("phases.toml", "seed = 3\naccesses = 300\n[mix]\naccesses-per-instr = 0.01\n[pattern]\nclass = \"phases\"\n[[pattern.phases]]\naccesses = 20\npattern = { class = \"cache-sensitive\", working-set-bytes = 8192, distribution = \"pointer-chase\" }\n[[pattern.phases]]\naccesses = 10\npattern = { class = \"strided\", array-bytes = 65536, stride-bytes = 4096, element-bytes = 4 }\n"),
    ];
    for (name, text) in synth {
        put("synth", name, text.as_bytes());
    }
    println!("seeds written under {}", root.display());
}
