//! The demand path of a plain hierarchy: write-back mode without an L1
//! prefetcher, the settings a simulation loop checks once for a whole
//! slice instead of on every access ([`Hierarchy::access_at_plain`]).

use cachepart_trace::Record;

use super::{write_back_kind, Hierarchy, Mode, Served};
use crate::cache::Cache;
use crate::prefetch::Prefetchers;
use crate::stats::AccessKind;

impl Hierarchy {
    /// Whether [`Hierarchy::access_at`] takes the plain path
    /// ([`Hierarchy::access_at_plain`]): write-back mode and no L1
    /// prefetcher on. Neither changes while records run: the mode is
    /// fixed and prefetchers are set between slices.
    pub fn is_plain(&self) -> bool {
        self.mode == Mode::WriteBack && !self.prefetch.as_deref().is_some_and(Prefetchers::l1_on)
    }

    /// [`Hierarchy::access_at`] of a plain hierarchy
    /// ([`Hierarchy::is_plain`]), without checking the mode and the
    /// prefetchers again.
    ///
    /// An access within one line goes to `write_back_line` unless
    /// it is its first-level set's most recent block (a repeated hit,
    /// inline); only an access across lines (or an escape) takes the
    /// general write-back loop over lines.
    #[inline(always)]
    pub fn access_at_plain(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        self.access_at_plain_with::<false>(llc, rec, addr)
    }

    /// [`Self::access_at_plain`] with the one-line access inline too (for
    /// a caller that is itself out of line, such as a first-level TLB
    /// miss's path).
    #[inline(always)]
    pub fn access_at_plain_inline(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        self.access_at_plain_with::<true>(llc, rec, addr)
    }

    #[inline(always)]
    fn access_at_plain_with<const INLINE: bool>(
        &mut self,
        llc: &mut Cache,
        rec: Record,
        addr: u64,
    ) -> Served {
        debug_assert!(self.is_plain());
        let Some((kind, write, instr)) = write_back_kind(rec) else {
            return self.write_back_at(llc, rec, addr);
        };
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        let bits = l1.geometry().line_bits();
        let first = addr >> bits;
        let last = addr.wrapping_add(rec.size_unchecked() - 1) >> bits;
        if first != last {
            return self.write_back_at(llc, rec, addr);
        }
        if l1.repeat_hit(first, write) {
            l1.record(kind, false);
            self.instructions += u64::from(rec.gap()) + u64::from(instr);
            return Served::L1;
        }
        if INLINE {
            self.write_back_line_inline(llc, rec, addr, first, (kind, write, instr))
        } else {
            self.write_back_line(llc, rec, addr, first, (kind, write, instr))
        }
    }

    /// [`Self::write_back_at`] of access record `rec` at address `addr`
    /// within one line, `block`, of kind `how` ([`write_back_kind`] of
    /// `rec`): the same steps for its one line, without the loop over
    /// lines and without decoding the kind again.
    #[inline(never)]
    fn write_back_line(
        &mut self,
        llc: &mut Cache,
        rec: Record,
        addr: u64,
        block: u64,
        how: (AccessKind, bool, bool),
    ) -> Served {
        self.write_back_line_inline(llc, rec, addr, block, how)
    }

    /// [`Self::write_back_line`], inline.
    #[inline(always)]
    fn write_back_line_inline(
        &mut self,
        llc: &mut Cache,
        rec: Record,
        addr: u64,
        block: u64,
        how: (AccessKind, bool, bool),
    ) -> Served {
        let (kind, write, instr) = how;
        self.instructions += u64::from(rec.gap()) + u64::from(instr);
        if instr {
            self.last_ip = Some(addr);
        }
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        // The caller saw `block` is not its set's most recent block.
        let out = l1.line_not_repeated(block, write, u64::MAX);
        let served = self.after_l1_lookup::<true>(llc, addr, block, kind, instr, &out);
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        l1.record(kind, served != Served::L1);
        served
    }
}
