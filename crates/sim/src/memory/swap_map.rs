//! SWAP's pseudo-physical layer (DAC'14, section 3): the bit swap that
//! turns a pseudo-physical address, which the operating system manages
//! and the page tables and TLBs hold, into the physical address that
//! indexes the LLC and memory.
//!
//! `k` bits of the **superpage number** (bits >= 21 of the pseudo-physical
//! address: the pseudo-superpage's *superpage color*) are exchanged with
//! `k` **candidate bits** of the superpage offset that lie in the LLC's
//! set index, above the private caches' set index (so that only the LLC
//! is colored) and above the 4 KiB page offset (so that a 4 KiB page stays
//! one contiguous physical frame). Every address of a pseudo-superpage of
//! superpage color `s` then has `s` in its candidate bits: the
//! pseudo-superpage lands in the color region `s` of `2^k` physical
//! superpages, and so in the LLC sets of the 4 KiB colors whose candidate
//! bits spell `s` ([`SwapMap::colors_of`]).
//!
//! The swap is an involution (applying it twice gives the address back),
//! so it is a bijection of every aligned block of `2^(b+1)` bytes, `b` the
//! highest superpage bit; physical memory must be a multiple of that block
//! for pseudo-physical memory to map onto itself ([`SwapConfig::map`]
//! checks it).
//!
//! Configured by a platform's `[swap]` section ([`SwapConfig`]):
//!
//! ```
//! use cachepart_sim::memory::{ColorLayout, SwapConfig};
//! use cachepart_sim::Geometry;
//! let cfg: SwapConfig = toml::from_str(r#"
//!     superpage-bits = [21, 22, 23, 24]
//!     candidate-bits = [15, 16, 17, 18]
//!     position = "before-llc"
//!     mode = "static"
//! "#).unwrap();
//! assert!(!cfg.enabled); // a scenario turns it on
//! // SWAP's machine: an 8 MiB 16-way LLC (set index bits 6-18) behind a
//! // 256 KiB 8-way L2 (set index bits 6-14).
//! let llc = Geometry::new(8 << 20, 16, 64).unwrap();
//! let map = cfg.map(&llc, 15, 4 << 30).unwrap();
//! // Bit 21 of the pseudo-physical address becomes bit 15 and back.
//! assert_eq!(map.to_physical(1 << 21), 1 << 15);
//! assert_eq!(map.to_physical(1 << 15), 1 << 21);
//! assert_eq!(map.to_physical(map.to_physical(0x1234_5678)), 0x1234_5678);
//! ```

use serde::{Deserialize, Serialize};

use cachepart_units::IdSet;

use super::color::ColorLayout;
use super::error::MemoryError;
use super::page::{Frame, FRAME_BITS, HUGE_BITS};
use crate::geometry::Geometry;

/// Most bits a swap exchanges (the LLC never has more color bits).
pub const MAX_SWAP_BITS: usize = 16;

/// Highest address bit (exclusive) a swap may touch: physical addresses
/// of the simulator's records fit in 48 bits.
const ADDRESS_BITS: u32 = 48;

/// Where the swap sits in the hierarchy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapPosition {
    /// Between the private caches and the LLC: the private caches see
    /// pseudo-physical addresses (the paper's choice).
    #[default]
    BeforeLlc,
    /// Before the first level: every cache sees physical addresses.
    BeforeL1,
}

/// Whether the swap is wired or configurable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapMode {
    /// Wired in hardware: no cost.
    #[default]
    Static,
    /// Which bits are swapped is a register setting: one more cycle on
    /// every LLC access (the paper's 29-cycle L3 hit, section 5.3).
    Configurable,
}

/// A platform's `[swap]` section, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SwapConfig {
    /// The `k` superpage-number bits (>= 21) that make a pseudo-superpage's
    /// color, lowest first; the i-th is swapped with the i-th candidate.
    pub superpage_bits: Vec<u32>,
    /// The `k` candidate bits: LLC set-index bits above the private
    /// caches' set index and the 4 KiB page offset, below bit 21.
    pub candidate_bits: Vec<u32>,
    /// `before-llc` (default) or `before-l1`.
    #[serde(default)]
    pub position: SwapPosition,
    /// `static` (default) or `configurable`.
    #[serde(default)]
    pub mode: SwapMode,
    /// Whether runs use the swap (not a file key: a platform file
    /// declares its machine's swap, a scenario's `swap` key turns it on,
    /// as with prefetchers).
    #[serde(skip)]
    pub enabled: bool,
}

fn config_err(field: &'static str, reason: String) -> MemoryError {
    MemoryError::Config { field, reason }
}

fn bit_list(bits: &[u32]) -> String {
    bits.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl SwapConfig {
    /// The number of swapped bit pairs, `k`.
    pub fn k(&self) -> usize {
        self.superpage_bits.len()
    }

    /// Cycles the swap adds to every LLC access: 1 when configurable
    /// (and enabled).
    pub fn extra_llc_cycles(&self) -> u32 {
        match (self.enabled, self.mode) {
            (true, SwapMode::Configurable) => 1,
            _ => 0,
        }
    }

    /// Checks the section against an LLC of geometry `llc`, private
    /// caches whose set indices end below bit `private_index_end`
    /// (exclusive: `line bits + log2(sets)` of the largest private level)
    /// and `memory_bytes` of physical memory, and builds the map. Each
    /// refusal names its field (`swap.superpage-bits`, ...).
    pub fn map(
        &self,
        llc: &Geometry,
        private_index_end: u32,
        memory_bytes: u64,
    ) -> Result<SwapMap, MemoryError> {
        let layout = ColorLayout::for_frames(llc);
        let set = layout.set_index_bits();
        let colors = layout.color_bits();
        let lo = colors.start.max(private_index_end).max(FRAME_BITS);
        let hi = colors.end.min(HUGE_BITS);
        let available = hi.saturating_sub(lo);
        let k = self.k();
        if k == 0 {
            return Err(config_err(
                "swap.superpage-bits",
                "no bits: a swap needs k >= 1 superpage bits and as many candidate bits".into(),
            ));
        }
        if k > available as usize {
            return Err(config_err(
                "swap.superpage-bits",
                format!(
                    "k = {k} bits, but the LLC has only {available} color bits above the private caches' set index (bits {lo}..{hi}, set index bits {}..{})",
                    set.start, set.end
                ),
            ));
        }
        if self.candidate_bits.len() != k {
            return Err(config_err(
                "swap.candidate-bits",
                format!(
                    "{} bits, expected k = {k} (as many as swap.superpage-bits)",
                    self.candidate_bits.len()
                ),
            ));
        }
        let mut seen = 0u64;
        for (field, bits) in [
            ("swap.superpage-bits", &self.superpage_bits),
            ("swap.candidate-bits", &self.candidate_bits),
        ] {
            for &b in bits.iter() {
                if b >= ADDRESS_BITS {
                    return Err(config_err(
                        field,
                        format!(
                            "bit {b} is beyond the {ADDRESS_BITS}-bit physical address ({})",
                            bit_list(bits)
                        ),
                    ));
                }
                if seen & (1 << b) != 0 {
                    return Err(config_err(
                        field,
                        format!("bit {b} appears twice (the swapped bits overlap)"),
                    ));
                }
                seen |= 1 << b;
            }
        }
        for &b in &self.superpage_bits {
            if b < HUGE_BITS {
                return Err(config_err(
                    "swap.superpage-bits",
                    format!("bit {b} is in the superpage offset: superpage-number bits are {HUGE_BITS} and above"),
                ));
            }
        }
        for &b in &self.candidate_bits {
            if !set.contains(&b) {
                return Err(config_err(
                    "swap.candidate-bits",
                    format!(
                        "bit {b} is outside the LLC set index (bits {}..{})",
                        set.start, set.end
                    ),
                ));
            }
            if b < private_index_end {
                return Err(config_err(
                    "swap.candidate-bits",
                    format!("bit {b} is inside the private caches' set index (bits ..{private_index_end}): swapping it would color the private caches"),
                ));
            }
            if b < FRAME_BITS {
                return Err(config_err(
                    "swap.candidate-bits",
                    format!("bit {b} is in the 4 KiB page offset: a 4 KiB page would not stay one physical frame"),
                ));
            }
        }
        let top = *self.superpage_bits.iter().max().expect("k >= 1");
        let block = 1u64 << (top + 1);
        if !memory_bytes.is_multiple_of(block) {
            return Err(config_err(
                "swap.superpage-bits",
                format!(
                    "bit {top} swaps within blocks of {block} B, but memory.size-bytes {memory_bytes} is not a multiple of it (pseudo-physical memory would map outside physical memory)"
                ),
            ));
        }
        let mut m = SwapMap {
            k: k as u8,
            high: [0; MAX_SWAP_BITS],
            low: [0; MAX_SWAP_BITS],
        };
        for i in 0..k {
            m.high[i] = self.superpage_bits[i] as u8;
            m.low[i] = self.candidate_bits[i] as u8;
        }
        Ok(m)
    }
}

/// A checked swap: `k` pairs of bit positions, exchanged in both
/// directions (pseudo-physical to physical and back).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SwapMap {
    k: u8,
    /// Superpage-number bits.
    high: [u8; MAX_SWAP_BITS],
    /// Candidate bits (the i-th swaps with `high[i]`).
    low: [u8; MAX_SWAP_BITS],
}

impl SwapMap {
    /// The number of swapped pairs.
    pub fn k(&self) -> usize {
        usize::from(self.k)
    }

    /// The superpage colors: `2^k`.
    pub fn superpage_colors(&self) -> u32 {
        1 << self.k
    }

    /// The physical address of pseudo-physical address `addr` (and, the
    /// swap being an involution, the pseudo-physical address of physical
    /// address `addr`).
    #[inline]
    pub fn to_physical(&self, addr: u64) -> u64 {
        let mut a = addr;
        for i in 0..usize::from(self.k) {
            let (h, l) = (self.high[i], self.low[i]);
            let d = ((a >> h) ^ (a >> l)) & 1;
            a ^= (d << h) | (d << l);
        }
        a
    }

    /// The physical frame of pseudo-physical 4 KiB frame `f` (candidate
    /// bits are above the page offset, so a frame maps to one frame).
    #[inline]
    pub fn frame(&self, f: Frame) -> Frame {
        Frame::of_addr(self.to_physical(f.addr()))
    }

    /// The superpage color of the pseudo-superpage holding pseudo-physical
    /// frame `f`: its superpage-number bits, the i-th as bit i.
    pub fn superpage_color(&self, f: Frame) -> u32 {
        let a = f.addr();
        (0..usize::from(self.k))
            .map(|i| (((a >> self.high[i]) & 1) as u32) << i)
            .sum()
    }

    /// The 4 KiB colors of `layout` that every 4 KiB piece of a
    /// pseudo-superpage of superpage color `s` may have: those whose
    /// candidate bits spell `s` (the other color bits take every value).
    pub fn colors_of(&self, layout: &ColorLayout, s: u32) -> IdSet {
        let lo = layout.color_bits().start;
        (0..u32::try_from(layout.colors()).unwrap_or(u32::MAX))
            .filter(|&c| {
                (0..usize::from(self.k)).all(|i| {
                    let bit = u32::from(self.low[i]) - lo;
                    (c >> bit) & 1 == (s >> i) & 1
                })
            })
            .collect()
    }

    /// The superpage colors all of whose 4 KiB colors are in `colors`:
    /// the pseudo-superpages an app with `colors` may be given.
    pub fn superpage_colors_within(&self, layout: &ColorLayout, colors: &IdSet) -> Vec<u32> {
        (0..self.superpage_colors())
            .filter(|&s| self.colors_of(layout, s).iter().all(|c| colors.contains(c)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn paper() -> SwapConfig {
        SwapConfig {
            superpage_bits: vec![21, 22, 23, 24],
            candidate_bits: vec![15, 16, 17, 18],
            position: SwapPosition::BeforeLlc,
            mode: SwapMode::Static,
            enabled: true,
        }
    }

    fn llc8m() -> Geometry {
        Geometry::new(8 << 20, 16, 64).unwrap()
    }

    #[test]
    fn bijection_by_brute_force_on_a_small_memory() {
        // 64 MiB with the paper's swap: every pseudo-physical frame maps
        // to a distinct physical frame of the same memory, and back.
        let mem = 64u64 << 20;
        let m = paper().map(&llc8m(), 15, mem).unwrap();
        let frames = mem >> FRAME_BITS;
        let mut seen = HashSet::new();
        let mut moved = 0;
        for f in 0..frames {
            let p = m.frame(Frame(f));
            assert!(p.0 < frames, "frame {f} maps outside memory to {}", p.0);
            assert!(seen.insert(p), "frame {} is hit twice", p.0);
            assert_eq!(m.frame(p), Frame(f));
            moved += u64::from(p.0 != f);
        }
        assert_eq!(seen.len() as u64, frames);
        // Only the frames whose swapped bits agree stay in place.
        assert_eq!(moved, frames - frames / 16);
    }

    #[test]
    fn a_pseudo_superpage_lands_in_one_color_region_of_2k_superpages() {
        let m = paper().map(&llc8m(), 15, 1 << 30).unwrap();
        let layout = ColorLayout::for_frames(&llc8m()); // 128 colors, bits 12-18
        let base = Frame(0b1011_0101 << 9); // superpage number 0b1011_0101
        let s = m.superpage_color(base);
        assert_eq!(s, 0b0101);
        let allowed = m.colors_of(&layout, s);
        assert_eq!(allowed.len(), 8); // bits 12-14 free, 15-18 fixed
        let mut supers = HashSet::new();
        for i in 0..512 {
            let p = m.frame(Frame(base.0 + i));
            assert!(allowed.contains(layout.color_of_frame(p)));
            assert_eq!((p.addr() >> 15) & 0xf, u64::from(s));
            supers.insert(p.0 >> 9);
        }
        assert_eq!(supers.len(), 16);
        // An app's colors admit the superpage colors they cover whole.
        let colors: IdSet = "0-23,30".parse().unwrap();
        assert_eq!(m.superpage_colors_within(&layout, &colors), vec![0, 1, 2]);
    }

    #[test]
    fn bad_swaps_are_refused_with_the_field_named() {
        let llc = llc8m();
        let cases: Vec<(SwapConfig, &str, &str)> = vec![
            (
                SwapConfig {
                    superpage_bits: vec![],
                    candidate_bits: vec![],
                    ..paper()
                },
                "swap.superpage-bits",
                "no bits",
            ),
            (
                SwapConfig {
                    superpage_bits: vec![21, 22, 23, 24, 25],
                    candidate_bits: vec![14, 15, 16, 17, 18],
                    ..paper()
                },
                "swap.superpage-bits",
                "only 4 color bits",
            ),
            (
                SwapConfig {
                    candidate_bits: vec![15, 16, 17],
                    ..paper()
                },
                "swap.candidate-bits",
                "expected k = 4",
            ),
            (
                SwapConfig {
                    candidate_bits: vec![15, 16, 16, 18],
                    ..paper()
                },
                "swap.candidate-bits",
                "twice",
            ),
            (
                SwapConfig {
                    superpage_bits: vec![21, 22, 23, 24],
                    candidate_bits: vec![15, 16, 17, 19],
                    ..paper()
                },
                "swap.candidate-bits",
                "outside the LLC set index",
            ),
            (
                SwapConfig {
                    candidate_bits: vec![14, 15, 16, 17],
                    ..paper()
                },
                "swap.candidate-bits",
                "private caches",
            ),
            (
                SwapConfig {
                    superpage_bits: vec![20, 22, 23, 24],
                    ..paper()
                },
                "swap.superpage-bits",
                "superpage offset",
            ),
            (
                SwapConfig {
                    superpage_bits: vec![21, 22, 23, 60],
                    ..paper()
                },
                "swap.superpage-bits",
                "48-bit",
            ),
        ];
        for (cfg, field, words) in cases {
            let e = cfg.map(&llc, 15, 1 << 30).unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(e, MemoryError::Config { field: f, .. } if f == field),
                "{cfg:?}: {text}"
            );
            assert!(text.contains(field) && text.contains(words), "{text}");
        }
        // Memory that the swap's blocks do not tile.
        let e = paper().map(&llc, 15, 48 << 20).unwrap_err().to_string();
        assert!(e.contains("memory.size-bytes"), "{e}");
        // Superpage bits that overlap candidate bits.
        let over = SwapConfig {
            superpage_bits: vec![21, 22],
            candidate_bits: vec![17, 21],
            ..paper()
        };
        let e = over.map(&llc, 15, 1 << 30).unwrap_err().to_string();
        assert!(
            e.contains("swap.candidate-bits") && e.contains("twice"),
            "{e}"
        );
        // Candidate bits in the 4 KiB page offset: an LLC whose set index
        // starts low, private caches with a tiny index.
        let low = SwapConfig {
            superpage_bits: vec![21],
            candidate_bits: vec![11],
            ..paper()
        };
        let e = low.map(&llc, 8, 1 << 30).unwrap_err().to_string();
        assert!(e.contains("page offset"), "{e}");
    }

    #[test]
    fn the_configurable_swap_costs_one_llc_cycle() {
        assert_eq!(paper().extra_llc_cycles(), 0);
        let c = SwapConfig {
            mode: SwapMode::Configurable,
            ..paper()
        };
        assert_eq!(c.extra_llc_cycles(), 1);
        let t: SwapConfig =
            toml::from_str("superpage-bits = [21]\ncandidate-bits = [18]\nmode = \"configurable\"\nposition = \"before-l1\"").unwrap();
        assert_eq!(
            (t.mode, t.position),
            (SwapMode::Configurable, SwapPosition::BeforeL1)
        );
        let e = toml::from_str::<SwapConfig>("superpage-bits = [21]\ncandidate-bits = [18]\nk = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `k`"), "{e}");
    }

    proptest! {
        /// Any valid swap is an involution (so a bijection) that keeps
        /// the bits it does not name, and keeps a 4 KiB page's offset.
        #[test]
        fn any_valid_swap_is_an_involution(
            k in 1usize..=4,
            shift in 0u32..8,
            perm in any::<u64>(),
            addr in 0u64..(1 << 40),
        ) {
            let mut cands: Vec<u32> = (15..19).collect();
            // A deterministic shuffle of the candidate order.
            for i in (1..cands.len()).rev() {
                let j = ((perm >> (i * 4)) % (i as u64 + 1)) as usize;
                cands.swap(i, j);
            }
            let cfg = SwapConfig {
                superpage_bits: (0..k as u32).map(|i| 21 + shift + i).collect(),
                candidate_bits: cands[..k].to_vec(),
                ..paper()
            };
            let m = cfg.map(&llc8m(), 15, 1 << 40).unwrap();
            let p = m.to_physical(addr);
            prop_assert_eq!(m.to_physical(p), addr);
            prop_assert_eq!(p & 0xfff, addr & 0xfff);
            let touched: u64 = cfg.superpage_bits.iter().chain(&cfg.candidate_bits).map(|b| 1u64 << b).sum();
            prop_assert_eq!(p & !touched, addr & !touched);
            prop_assert_eq!((p ^ addr).count_ones() % 2, 0);
            // The superpage color lands in the candidate bits.
            let s = m.superpage_color(Frame::of_addr(addr));
            for (i, &c) in cfg.candidate_bits.iter().enumerate() {
                prop_assert_eq!((p >> c) & 1, u64::from((s >> i) & 1));
            }
        }
    }
}
