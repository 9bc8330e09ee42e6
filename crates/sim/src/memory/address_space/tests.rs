use super::*;
use crate::memory::buddy::BuddyAllocator;

#[test]
fn first_touch_maps_once() {
    let mut b = BuddyAllocator::new(16 << 20).unwrap();
    let mut s = AddressSpace::new(0, HugePages::Never);
    let a = s.touch(0x1234, &mut b).unwrap();
    assert_eq!(s.touch(0x1fff, &mut b).unwrap(), a);
    assert_eq!(a.0, PageSize::Small);
    assert_eq!(s.stats().faults_4k, 1);
    assert_eq!(b.free_frames(), 4095);
}

#[test]
fn superpages_fall_back_and_split() {
    // 6 MiB: one order-10 block (4 MiB) and one order-9 (2 MiB).
    let mut b = BuddyAllocator::new(6 << 20).unwrap();
    let mut s = AddressSpace::new(0, HugePages::Always);
    for r in 0..3u64 {
        let (size, _, f) = s.touch(r << 21, &mut b).unwrap();
        assert_eq!(size, PageSize::Huge);
        assert_eq!(f.0 % 512, 0);
    }
    // Memory is full of superpages: a fourth region gets nothing.
    assert!(matches!(
        s.touch(3 << 21, &mut b),
        Err(MemoryError::OutOfMemory { order: 0, .. })
    ));
    assert_eq!(s.stats().huge_fallbacks, 1);
    // Unmap 4 KiB in the middle of region 1: split, one frame freed.
    let mut gone = Vec::new();
    s.unmap((1 << 21) + 8192, 4096, &mut b, |sz, v| gone.push((sz, v)));
    assert_eq!(gone, vec![(PageSize::Huge, 1), (PageSize::Small, 512 + 2)]);
    assert_eq!(s.stats().splits, 1);
    assert_eq!(b.free_frames(), 1);
    assert_eq!(s.resident_frames(), 3 * 512 - 1);
    // The freed frame serves a 4 KiB page of a region that has 4 KiB
    // pages already, so no superpage is tried there.
    let (size, _, _) = s.touch((1 << 21) + 8192, &mut b).unwrap();
    assert_eq!(size, PageSize::Small);
    s.release(&mut b);
    assert_eq!(b.free_frames(), 3 * 512);
    assert_eq!(b.free_list(10).len() + b.free_list(9).len(), 2);
}
