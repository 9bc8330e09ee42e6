//! Byte codings shared by cachepart's binary files (the trace format here,
//! the SHARDS sample index in `cachepart-curves`, and the test and fuzz
//! harnesses that build files by hand): LEB128 varints (written and read)
//! and the 32-bit FNV-1a checksum.

/// Appends `v` to `out` as an LEB128 varint (7 bits a byte, low first,
/// the high bit set on every byte but the last).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint that runs past 10 bytes (no `u64` needs more), at byte `at`
/// of its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("varint at byte {at} runs past 10 bytes")]
pub struct VarintTooLong {
    /// Where the varint starts.
    pub at: usize,
}

/// Reads an LEB128 varint at `*pos` of `b` and moves `*pos` past it:
/// `Ok(None)` (and `*pos` unchanged) when `b` ends before it does, so a
/// streaming reader can wait for more bytes; an error when it runs past
/// 10 bytes. Bits beyond 64 are dropped.
#[inline(always)]
pub fn get_varint(b: &[u8], pos: &mut usize) -> Result<Option<u64>, VarintTooLong> {
    let mut v = 0u64;
    for i in 0..10 {
        let Some(&x) = b.get(*pos + i) else {
            return Ok(None);
        };
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            *pos += i + 1;
            return Ok(Some(v));
        }
    }
    Err(VarintTooLong { at: *pos })
}

/// FNV-1a, 32 bits: the checksum of the trace index and of the sample
/// index's header.
pub fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fnv1a() {
        let mut out = Vec::new();
        put_varint(&mut out, 0);
        put_varint(&mut out, 127);
        put_varint(&mut out, 128);
        put_varint(&mut out, 300);
        assert_eq!(out, [0, 0x7f, 0x80, 0x01, 0xac, 0x02]);
        out.clear();
        put_varint(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
        let mut pos = 0;
        assert_eq!(get_varint(&out, &mut pos), Ok(Some(u64::MAX)));
        assert_eq!(pos, 10);
        let mut pos = 0;
        assert_eq!(get_varint(&[0xac, 0x02, 0x05], &mut pos), Ok(Some(300)));
        assert_eq!(get_varint(&[0xac, 0x02, 0x05], &mut pos), Ok(Some(5)));
        assert_eq!(pos, 3);
        // Cut short: nothing read, `pos` unchanged.
        let mut pos = 1;
        assert_eq!(get_varint(&[0, 0x80, 0x80], &mut pos), Ok(None));
        assert_eq!(pos, 1);
        let long = [0x80u8; 11];
        let e = get_varint(&long, &mut 0).unwrap_err();
        assert_eq!(e.to_string(), "varint at byte 0 runs past 10 bytes");
        // The published FNV-1a 32 test vectors.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }
}
