//! Tests of the geometry ([`super::Geometry`]) and its slice hash.

use super::*;

#[test]
fn derives_sets_and_bits() {
    let g = Geometry::new(32 << 10, 8, 64).unwrap();
    assert_eq!(g.sets(), 64);
    assert_eq!(g.line_bits(), 6);
    assert_eq!(g.lines(), 512);
    assert_eq!(g.full_mask(), 0xff);
    assert_eq!(g.set_of(g.block_of(0x1234_5678)), (0x1234_5678 >> 6) & 63);
}

#[test]
fn rejects_what_cachegrind_rejects() {
    // 12 ways are fine when the set count is a power of two.
    assert_eq!(Geometry::new(3 << 20, 12, 64).unwrap().sets(), 4096);
    assert_eq!(
        Geometry::new(6 << 20, 16, 64),
        Err(GeometryError::SetsNotPowerOfTwo { sets: 6144 })
    );
    assert_eq!(
        Geometry::new(32 << 10, 8, 48),
        Err(GeometryError::LineNotPowerOfTwo(48))
    );
    assert_eq!(
        Geometry::new(1000, 8, 64),
        Err(GeometryError::SizeNotMultiple {
            size: 1000,
            ways: 8,
            line: 64
        })
    );
    assert_eq!(Geometry::new(4096, 0, 64), Err(GeometryError::Ways(0)));
    assert_eq!(Geometry::new(1 << 20, 65, 64), Err(GeometryError::Ways(65)));
    let msg = Geometry::new(6 << 20, 16, 64).unwrap_err().to_string();
    assert!(msg.contains("6144 sets"), "{msg}");
    // a size of 0 is a multiple of anything: the message says positive
    let msg = Geometry::new(0, 16, 64).unwrap_err().to_string();
    assert_eq!(
        msg,
        "size 0 B is not a positive multiple of ways x line = 16 x 64 B"
    );
}

/// The slice is the fold of the address bits above the per-slice
/// index modulo the slice count, for every count (powers of two take
/// the low bits of the fold).
#[test]
fn slice_is_the_fold_modulo_the_count() {
    for slices in 1..=24u32 {
        let g = Geometry::sliced(u64::from(slices) * 64 * 4 * 64, 4, 64, slices).unwrap();
        let w = g.fold_bits;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x = x.rotate_left(17).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5851_f42d;
            let block = x >> 6;
            let (mut rest, mut fold) = (block >> g.slice_set_bits, 0u64);
            while rest != 0 {
                fold ^= rest & ((1 << w) - 1);
                rest >>= w;
            }
            let want = if slices == 1 {
                0
            } else {
                (fold % u64::from(slices)) as u32
            };
            assert_eq!(g.slice_of(block), want, "{slices} slices, block {block:#x}");
            assert_eq!(
                g.set_of(block),
                (u64::from(want) * g.sets_per_slice() + block % g.sets_per_slice()) as usize
            );
        }
    }
}

#[test]
fn slices_split_sets_by_a_hash() {
    // 20 slices of 2048 sets, 11 ways: Skylake-SP's 27.5 MiB LLC.
    let g = Geometry::sliced(20 * 2048 * 11 * 64, 11, 64, 20).unwrap();
    assert_eq!(
        (g.sets(), g.sets_per_slice(), g.slices()),
        (40960, 2048, 20)
    );
    let mut per_slice = [0u32; 20];
    for b in 0..(1u64 << 20) {
        let s = g.set_of(b);
        assert!(s < 40960);
        assert_eq!(
            s as u64 % 2048,
            b % 2048,
            "per-slice index is bit selection"
        );
        per_slice[s / 2048] += 1;
    }
    // Every slice gets its share to within a few percent.
    let share = (1u32 << 20) / 20;
    for n in per_slice {
        assert!(n.abs_diff(share) < share / 10, "{per_slice:?}");
    }
    // One slice is plain bit selection.
    let one = Geometry::sliced(1 << 20, 16, 64, 1).unwrap();
    assert_eq!(one, Geometry::new(1 << 20, 16, 64).unwrap());
    assert_eq!(one.set_of(12345), 12345 & 1023);
    assert_eq!(
        Geometry::sliced(1 << 20, 16, 64, 3),
        Err(GeometryError::Slices {
            slices: 3,
            sets: 1024
        })
    );
    assert_eq!(
        Geometry::sliced(3 << 20, 16, 64, 2),
        Err(GeometryError::SliceSetsNotPowerOfTwo {
            slices: 2,
            per_slice: 1536
        })
    );
    let cfg: CacheConfig = serde_json::from_str(
        r#"{"size-bytes": 1048576, "ways": 16, "line-bytes": 64, "slices": 4}"#,
    )
    .unwrap();
    assert_eq!(cfg.geometry().unwrap().sets_per_slice(), 256);
}

#[test]
fn config_prints_valgrind_syntax() {
    assert_eq!(CacheConfig::lru(32768, 8, 64).valgrind_arg(), "32768,8,64");
}
