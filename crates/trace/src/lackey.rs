//! Reader for valgrind lackey's memory trace (`--tool=lackey --trace-mem=yes`).
//!
//! Lines are `I  addr,size` (instruction fetch), ` L addr,size` (load),
//! ` S addr,size` (store) and ` M addr,size` (modify), with a hexadecimal
//! address and a decimal size. valgrind's own lines (`==pid==`, `--pid--`,
//! `**pid**`) and blank lines are skipped. Each `I` line is one instruction,
//! so every record's gap is 0. Streams from any [`BufRead`], so valgrind's
//! output can be piped in without a file on disk.

use std::io::BufRead;

use crate::error::{Result, TraceError};
use crate::record::{Kind, Record, RecordError};
use crate::text::{parse_dec, parse_hex, show, Lines};

/// Streams records out of lackey text.
pub struct LackeyReader<R: BufRead> {
    lines: Lines<R>,
    lenient: bool,
    skipped: u64,
    failed: bool,
}

impl<R: BufRead> LackeyReader<R> {
    /// A strict reader: a line that is neither a trace line nor a valgrind
    /// line is an error.
    pub fn new(inner: R) -> Self {
        LackeyReader {
            lines: Lines::new(inner),
            lenient: false,
            skipped: 0,
            failed: false,
        }
    }

    /// Skips foreign lines (say, the traced program's own output mixed in
    /// by `2>&1`) instead of failing; [`LackeyReader::skipped`] counts them.
    pub fn lenient(mut self, yes: bool) -> Self {
        self.lenient = yes;
        self
    }

    /// Foreign lines skipped so far (lenient mode).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            let lenient = self.lenient;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            if line.is_empty()
                || line.starts_with(b"==")
                || line.starts_with(b"--")
                || line.starts_with(b"**")
            {
                continue;
            }
            match parse_line(line) {
                Ok(r) => return Ok(Some(r)),
                Err(_) if lenient => self.skipped += 1,
                Err(reason) => {
                    return Err(TraceError::BadLine {
                        format: "lackey",
                        line: self.lines.number(),
                        reason,
                    })
                }
            }
        }
    }
}

/// Parses one trace line.
fn parse_line(line: &[u8]) -> Result<Record, String> {
    let (kind, rest) = match line {
        [b'I', b' ', rest @ ..] => (Kind::Ifetch, rest),
        [b' ', b'L', b' ', rest @ ..] => (Kind::Load, rest),
        [b' ', b'S', b' ', rest @ ..] => (Kind::Store, rest),
        [b' ', b'M', b' ', rest @ ..] => (Kind::Modify, rest),
        _ => return Err(format!("not a lackey trace line: {:?}", show(line))),
    };
    let rest = rest.trim_ascii();
    let comma = rest
        .iter()
        .position(|&c| c == b',')
        .ok_or_else(|| format!("missing ',' in {:?}", show(line)))?;
    let addr = parse_hex(&rest[..comma])
        .ok_or_else(|| format!("bad hexadecimal address in {:?}", show(line)))?;
    let size = parse_dec(&rest[comma + 1..])
        .ok_or_else(|| format!("bad decimal size in {:?}", show(line)))?;
    // a size past u32 is named as written, not saturated
    let size = u32::try_from(size).map_err(|_| RecordError::Size(size).to_string())?;
    Record::access(kind, addr, size, 0).map_err(|e| e.to_string())
}

impl<R: BufRead> Iterator for LackeyReader<R> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        if self.failed {
            return None;
        }
        match self.next_record() {
            Ok(r) => r.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = concat!(
        "==12345== Lackey, an example Valgrind tool\n",
        "==12345== Command: /bin/true\n",
        "==12345== \n",
        "I  04001090,3\n",
        " S 1ffefffd78,8\n",
        "I  04001093,5\n",
        " L 04022e30,8\n",
        " M 0402a0b0,4\n",
        "\n",
        "==12345== Counted 1 calls to main()\n",
    );

    #[test]
    fn parses_the_four_kinds_and_skips_banners() {
        let recs: Vec<Record> = LackeyReader::new(SAMPLE.as_bytes())
            .collect::<Result<_>>()
            .unwrap();
        let kinds: Vec<Kind> = recs.iter().map(|r| r.kind()).collect();
        assert_eq!(
            kinds,
            [
                Kind::Ifetch,
                Kind::Store,
                Kind::Ifetch,
                Kind::Load,
                Kind::Modify
            ]
        );
        assert_eq!(recs[1].addr(), 0x1ffefffd78);
        assert_eq!(recs[1].size(), 8);
        assert_eq!(recs[2].size(), 5);
        assert_eq!(recs.iter().map(|r| r.instructions()).sum::<u64>(), 2);
    }

    #[test]
    fn bad_line_reports_its_number() {
        let text = "I  0400,3\nhello world\n";
        let err = LackeyReader::new(text.as_bytes())
            .collect::<Result<Vec<_>>>()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "lackey line 2: not a lackey trace line: \"hello world\""
        );
        let ok: Vec<_> = LackeyReader::new(text.as_bytes())
            .lenient(true)
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(ok.len(), 1);
        let err = LackeyReader::new(" L zz,8\n".as_bytes())
            .next()
            .unwrap()
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("lackey line 1: bad hexadecimal address"));
        let err = LackeyReader::new(" L 10,0\n".as_bytes())
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "lackey line 1: access size 0 is outside 1..=127"
        );
        // past u32: the size as written, not saturated
        let err = LackeyReader::new("I  04000000,3\n L 04001000,4294967297\n".as_bytes())
            .collect::<Result<Vec<_>>>()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "lackey line 2: access size 4294967297 is outside 1..=127"
        );
    }
}
