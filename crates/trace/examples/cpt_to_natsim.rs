//! Writes a `.cpt` trace's accesses as natsim's raw 8-byte records
//! (`../shared/bench/natsim.c`): `addr[47:0] | size[55:48] | type[59:56]`,
//! type 0 load (a dependent load too), 1 store, 2 modify, 3 instruction
//! fetch, in the machine's byte order (natsim maps the file); escape
//! records are left out. The same records `lk2bin` writes
//! from valgrind lackey's text, so `scripts/bench/cachegrind_natsim.py
//! --trace FILE.cpt` can race cachepart against natsim on any trace,
//! including on a machine without valgrind.
//!
//! ```sh
//! cargo run --release -p cachepart-trace --example cpt_to_natsim -- IN.cpt OUT.bin
//! ```
//!
//! OUT is written to a temporary name beside it and renamed once complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cachepart_trace::{Kind, TraceFile};

/// natsim's type code of an access kind; `None` for an escape record.
fn natsim_type(kind: Kind) -> Option<u64> {
    match kind {
        Kind::Load | Kind::DepLoad => Some(0),
        Kind::Store => Some(1),
        Kind::Modify => Some(2),
        Kind::Ifetch => Some(3),
        Kind::Escape => None,
    }
}

fn convert(input: &Path, output: &Path) -> Result<u64, String> {
    let trace = TraceFile::open(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let mut tmp = PathBuf::from(output);
    tmp.as_mut_os_string().push(".tmp");
    let file = File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut written = 0u64;
    let result = (|| -> Result<(), String> {
        for r in trace
            .records_from(0)
            .map_err(|e| format!("{}: {e}", input.display()))?
        {
            let r = r.map_err(|e| format!("{}: {e}", input.display()))?;
            let Some(ty) = natsim_type(r.kind()) else {
                continue;
            };
            let raw =
                (r.addr() & 0xFFFF_FFFF_FFFF) | (u64::from(r.size().min(255)) << 48) | (ty << 56);
            out.write_all(&raw.to_ne_bytes())
                .map_err(|e| format!("{}: {e}", tmp.display()))?;
            written += 1;
        }
        out.flush().map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| written)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: cpt_to_natsim IN.cpt OUT.bin");
        return ExitCode::from(2);
    };
    match convert(Path::new(input), Path::new(output)) {
        Ok(n) => {
            eprintln!("cpt_to_natsim: {n} records written to {output}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cpt_to_natsim: {e}");
            ExitCode::FAILURE
        }
    }
}
