//! Byte codings shared by cachepart's binary files (the trace format here,
//! the SHARDS sample index in `cachepart-curves`, and the test and fuzz
//! harnesses that build files by hand): LEB128 varints and the 32-bit
//! FNV-1a checksum.

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
        // The published FNV-1a 32 test vectors.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }
}
