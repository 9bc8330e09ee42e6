//! Reader for Dinero `din` text traces.
//!
//! Each line is `label address [size]`: label 0 read, 1 write,
//! 2 instruction fetch, 3 escape (access of unknown type, kept as an
//! [`Event::Unknown`]), 4 escape (cache flush, kept as [`Event::Flush`]).
//! The address and the optional size are hexadecimal (Dinero IV's
//! convention, `0x` allowed); without a size the reader's default size
//! (4 bytes unless set) is used. Blank lines are skipped. Each instruction
//! fetch counts as one instruction; other records have a gap of 0.

use std::io::BufRead;

use crate::error::{Result, TraceError};
use crate::record::{Event, Kind, Record, RecordError};
use crate::text::{parse_hex, show, Lines};

/// Streams records out of din text.
pub struct DinReader<R: BufRead> {
    lines: Lines<R>,
    default_size: u32,
    failed: bool,
}

impl<R: BufRead> DinReader<R> {
    /// A reader with a default access size of 4 bytes.
    pub fn new(inner: R) -> Self {
        DinReader {
            lines: Lines::new(inner),
            default_size: 4,
            failed: false,
        }
    }

    /// Sets the size used for lines that give none.
    pub fn default_size(mut self, size: u32) -> Self {
        self.default_size = size;
        self
    }

    fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            let default_size = self.default_size;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            let mut fields = line
                .split(|c| c.is_ascii_whitespace())
                .filter(|f| !f.is_empty());
            let Some(label) = fields.next() else {
                continue;
            };
            let parsed = parse_fields(label, fields, default_size, line);
            return parsed.map(Some).map_err(|reason| TraceError::BadLine {
                format: "din",
                line: self.lines.number(),
                reason,
            });
        }
    }
}

fn parse_fields<'a>(
    label: &[u8],
    mut fields: impl Iterator<Item = &'a [u8]>,
    default_size: u32,
    line: &[u8],
) -> Result<Record, String> {
    let addr = fields
        .next()
        .ok_or_else(|| format!("missing address in {:?}", show(line)))?;
    let addr =
        parse_hex(addr).ok_or_else(|| format!("bad hexadecimal address in {:?}", show(line)))?;
    let size = fields
        .next()
        .map(|s| parse_hex(s).ok_or_else(|| format!("bad hexadecimal size in {:?}", show(line))))
        .transpose()?;
    if fields.next().is_some() {
        return Err(format!("too many fields in {:?}", show(line)));
    }
    let access = |kind| {
        let size = match size {
            None => default_size,
            // a size past u32 is named as it is, not saturated
            Some(v) => u32::try_from(v).map_err(|_| RecordError::Size(v).to_string())?,
        };
        Record::access(kind, addr, size, 0).map_err(|e| e.to_string())
    };
    let r = match label {
        b"0" => return access(Kind::Load),
        b"1" => return access(Kind::Store),
        b"2" => return access(Kind::Ifetch),
        b"3" => Record::event(Event::Unknown(addr), 0),
        b"4" => Record::event(Event::Flush, 0),
        _ => return Err(format!("unknown label {:?} (expected 0-4)", show(label))),
    };
    r.map_err(|e| e.to_string())
}

impl<R: BufRead> Iterator for DinReader<R> {
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

    #[test]
    fn parses_labels_and_sizes() {
        let text = "2 401000 4\n0 0x7ffd0010 8\n1 7ffd0018\n\n3 1234\n4 0\n";
        let recs: Vec<Record> = DinReader::new(text.as_bytes())
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[0].kind(), Kind::Ifetch);
        assert_eq!(recs[1].addr(), 0x7ffd0010);
        assert_eq!(recs[1].size(), 8);
        assert_eq!(recs[2].kind(), Kind::Store);
        assert_eq!(recs[2].size(), 4);
        assert_eq!(recs[3].as_event(), Some(Event::Unknown(0x1234)));
        assert_eq!(recs[4].as_event(), Some(Event::Flush));
    }

    #[test]
    fn bad_lines_report_their_number() {
        let cases = [
            (
                "0 10\n7 10\n",
                "din line 2: unknown label \"7\" (expected 0-4)",
            ),
            ("0\n", "din line 1: missing address in \"0\""),
            ("0 10 4 9\n", "din line 1: too many fields in \"0 10 4 9\""),
            ("1 qq\n", "din line 1: bad hexadecimal address in \"1 qq\""),
            // a size past u32 is named, not saturated (0x100000001)
            (
                "0 1000 100000001\n",
                "din line 1: access size 4294967297 is outside 1..=127",
            ),
            (
                "0 1000 80\n",
                "din line 1: access size 128 is outside 1..=127",
            ),
        ];
        for (text, msg) in cases {
            let err = DinReader::new(text.as_bytes())
                .collect::<Result<Vec<_>>>()
                .unwrap_err();
            assert_eq!(err.to_string(), msg);
        }
    }
}
