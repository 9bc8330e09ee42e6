//! Recoloring an address space's pages: moves at once, lazy marks and
//! the access bits the recoloring engine samples.

use super::{AddressSpace, HugeRecolor, ACCESSED, RECOLOR, SMALL_PER_HUGE};
use crate::memory::allocator::{AllocHint, FrameAllocator};
use crate::memory::error::MemoryError;
use crate::memory::page::{Frame, PageSize, HUGE_ORDER};

impl AddressSpace {
    /// Moves 4 KiB page `vpn` to a new frame (of color `target` if given
    /// and available, else as the allocator's round-robin over the app's
    /// colors picks), frees the old frame and charges a page copy. The
    /// caller drops the page's old translation from its TLBs. The page's
    /// recoloring mark is cleared.
    pub fn move_page<A: FrameAllocator + ?Sized>(
        &mut self,
        vpn: u64,
        target: Option<u32>,
        alloc: &mut A,
    ) -> Result<Frame, MemoryError> {
        if !self.small.contains(vpn) {
            return Err(MemoryError::NotMapped { vpn });
        }
        let hint = AllocHint {
            color: target,
            ..self.hint(vpn << PageSize::Small.bits())
        };
        let new = self.alloc_small(alloc, hint, Some(vpn))?;
        let (old, _) = self
            .small
            .update_flags(vpn, |f| f & !RECOLOR)
            .expect("kept mapped");
        self.small.set_frame(vpn, new);
        alloc.free(old, 0);
        self.stats.pages_recolored += 1;
        self.stats.copy_ns += self.costs.copy;
        Ok(new)
    }

    /// Recolors superpage `hv` (a 2 MiB virtual page number) after the
    /// app's colors changed: moved whole to a new 2 MiB block when the
    /// allocator has one (under SWAP a colored app gets a
    /// pseudo-superpage of its colors), charging 512 page copies; else
    /// split into 4 KiB pages in place whose frames not of the app's
    /// colors are marked for lazy recoloring. Moving first keeps the
    /// superpage's single TLB entry, which is what SWAP is for; a split
    /// superpage is never rebuilt in this model. The caller drops the
    /// superpage's translation from its TLBs. `None` when `hv` is not a
    /// superpage of this space.
    pub fn recolor_huge<A: FrameAllocator + ?Sized>(
        &mut self,
        hv: u64,
        alloc: &mut A,
    ) -> Option<HugeRecolor> {
        let old = *self.large.get(&hv)?;
        let hint = self.hint(hv << PageSize::Huge.bits());
        if let Ok(new) = alloc.alloc(HUGE_ORDER, hint) {
            if self.track_fresh {
                self.fresh.push((new, u32::from(HUGE_ORDER)));
            }
            self.large.insert(hv, new);
            alloc.free(old, HUGE_ORDER);
            self.stats.superpages_moved += 1;
            self.stats.pages_recolored += SMALL_PER_HUGE;
            self.stats.copy_ns += SMALL_PER_HUGE * self.costs.copy;
            return Some(HugeRecolor::Moved(new));
        }
        self.large.remove(&hv);
        self.stats.superpage_recolor_splits += 1;
        let mut marked = 0;
        for i in 0..SMALL_PER_HUGE {
            let v = (hv << HUGE_ORDER) + i;
            let f = Frame(old.0 + i);
            self.insert_small(v, f);
            if !alloc.frame_fits(self.app, f) {
                self.mark_recolor(v);
                marked += 1;
            }
        }
        self.small_in_region.insert(hv, SMALL_PER_HUGE as u32);
        Some(HugeRecolor::Split { marked })
    }

    /// The superpages and their first frames, in address order.
    pub fn huge_pages(&self) -> Vec<(u64, Frame)> {
        let mut v: Vec<(u64, Frame)> = self.large.iter().map(|(&v, &f)| (v, f)).collect();
        v.sort_unstable();
        v
    }

    /// Marks resident 4 KiB page `vpn` for lazy recoloring: its next touch
    /// moves it. False if the page is not a resident 4 KiB page.
    pub fn mark_recolor(&mut self, vpn: u64) -> bool {
        self.small.update_flags(vpn, |f| f | RECOLOR).is_some()
    }

    /// Whether page `vpn` is marked for recoloring.
    pub fn is_marked(&self, vpn: u64) -> bool {
        self.small
            .frame_flags(vpn)
            .is_some_and(|(_, f)| f & RECOLOR != 0)
    }

    /// Pages marked for recoloring and not yet moved.
    pub fn marked_pages(&self) -> usize {
        self.small
            .iter()
            .filter(|(_, p)| p.flags & RECOLOR != 0)
            .count()
    }

    /// Clears the access bit of every 4 KiB page (the caller flushes its
    /// TLBs so that the next access of each page walks).
    pub fn clear_accessed(&mut self) {
        self.small.map_flags(|f| f & !ACCESSED);
    }

    /// The 4 KiB pages whose access bit is set, in address order.
    pub fn accessed_pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .small
            .iter()
            .filter(|(_, p)| p.flags & ACCESSED != 0)
            .map(|(v, _)| v)
            .collect();
        v.sort_unstable();
        v
    }
}
