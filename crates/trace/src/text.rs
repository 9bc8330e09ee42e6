//! Line-by-line input for the text trace formats: bytes (no UTF-8
//! requirement), line numbers, bounded memory, and hex/decimal parsing.

use std::io::BufRead;

use crate::error::Result;

/// Lines of a [`BufRead`], one buffer reused, with 1-based numbers.
pub(crate) struct Lines<R: BufRead> {
    inner: R,
    buf: Vec<u8>,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(inner: R) -> Self {
        Lines {
            inner,
            buf: Vec::with_capacity(128),
            line: 0,
        }
    }

    /// The number of the line last returned.
    pub(crate) fn number(&self) -> u64 {
        self.line
    }

    /// The next line without its end-of-line bytes, or `None` at the end.
    pub(crate) fn next_line(&mut self) -> Result<Option<&[u8]>> {
        self.buf.clear();
        if self.inner.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(None);
        }
        self.line += 1;
        let mut end = self.buf.len();
        while end > 0 && matches!(self.buf[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        Ok(Some(&self.buf[..end]))
    }
}

/// Parses hexadecimal digits (an optional `0x` prefix) into a u64.
pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// Parses decimal digits into a u64.
pub(crate) fn parse_dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    Some(v)
}

/// Shows a line in an error message: lossy UTF-8, cut at 60 bytes.
pub(crate) fn show(line: &[u8]) -> String {
    let cut = &line[..line.len().min(60)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if line.len() > 60 {
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse() {
        assert_eq!(parse_hex(b"0x1F"), Some(31));
        assert_eq!(parse_hex(b"04016b0"), Some(0x4016b0));
        assert_eq!(parse_hex(b"xyz"), None);
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex(b"11112222333344445"), None);
        assert_eq!(parse_dec(b"64"), Some(64));
        assert_eq!(parse_dec(b"6a"), None);
    }
}
