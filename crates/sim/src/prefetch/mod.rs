//! Hardware prefetchers, as Zhang et al.'s Table 1 and Intel's
//! optimization manual describe them, one file each: the L1 DCU
//! next-line ([`next_line`]) and IP-stride ([`ip_stride`]) prefetchers,
//! which fill the L1D, and the L2 adjacent-line ([`adjacent`]) and
//! streamer ([`streamer`]) prefetchers, which fill the L2. [`Prefetchers`]
//! is one core's set, switched by a control word laid out as MSR 0x1A4
//! ([`msr`]); the hierarchy feeds it every demand access and carries out
//! the lines it asks for.
//!
//! A prefetched line is fetched like a demand miss (through the L2 and
//! the LLC, under the core's CAT mask, from memory when the LLC misses, so
//! it costs memory traffic), but it stalls nothing and is not counted as a
//! demand reference. Each core counts the lines each prefetcher issued (a
//! line already in the target cache is not issued), and per target cache
//! the useful ones (a later demand access hit them in the cache they were
//! brought into) and the useless ones (evicted from it before any use):
//! the caches carry a "prefetched, unused" bit per line. Late
//! prefetches (a demand access arriving while the prefetch is in flight)
//! are not modelled: a prefetch completes at once.
//!
//! The platform's `[prefetchers]` section says which prefetchers exist and
//! their hardware default; cores sharing one (the Xeon 5160's
//! adjacent-line prefetcher serves a core pair) are recorded, not
//! modelled: each core runs its own.

pub mod adjacent;
pub mod ip_stride;
pub mod msr;
pub mod next_line;
pub mod streamer;

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

pub use msr::{Kind, Word};

use crate::cache::{LineOutcome, Victim};

/// The platform's prefetchers (`[prefetchers]` in a platform file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PrefetchPlatform {
    /// The prefetchers the cores have (the kebab-case names of [`Kind`]).
    #[serde(default)]
    pub available: Vec<String>,
    /// The hardware default, MSR 0x1A4 style (a set bit turns one off).
    #[serde(default)]
    pub default_word: u64,
    /// Prefetchers one of which serves a pair of cores (recorded only).
    #[serde(default)]
    pub shared: Vec<String>,
    /// The streamer's lines per request (default 2).
    #[serde(default = "two")]
    pub streamer_degree: u32,
    /// How far ahead the streamer runs, in lines (default 16).
    #[serde(default = "sixteen")]
    pub streamer_distance: u32,
    /// Cycles one change of a core's word costs it (read and write of
    /// MSR 0x1A4; Zhang et al. measured 298 + 2,065 on their Xeon 5160).
    #[serde(default = "d_write", skip_serializing_if = "is_default_write")]
    pub msr_write_cycles: u64,
    /// The word a run starts with, when the run turns prefetching on (a
    /// scenario's `prefetchers` key sets it; platform files cannot).
    /// `None`: prefetching off, the hierarchy as without prefetchers.
    #[serde(skip)]
    pub run_word: Option<u64>,
}

fn d_write() -> u64 {
    2_363
}
fn is_default_write(c: &u64) -> bool {
    *c == d_write()
}
fn two() -> u32 {
    2
}
fn sixteen() -> u32 {
    16
}

impl Default for PrefetchPlatform {
    /// No prefetcher (the streamer's parameters at their defaults).
    fn default() -> Self {
        PrefetchPlatform {
            available: Vec::new(),
            default_word: 0,
            shared: Vec::new(),
            streamer_degree: two(),
            streamer_distance: sixteen(),
            msr_write_cycles: d_write(),
            run_word: None,
        }
    }
}

impl PrefetchPlatform {
    /// True when the platform declares no prefetcher.
    pub fn is_absent(&self) -> bool {
        self.available.is_empty()
    }

    /// Checks names and the word; the error names the field.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (field, names) in [("available", &self.available), ("shared", &self.shared)] {
            for n in names {
                if Kind::from_name(n).is_none() {
                    return Err((
                        format!("prefetchers.{field}"),
                        format!(
                            "unknown prefetcher {n:?} (expected {})",
                            Kind::names().join(", ")
                        ),
                    ));
                }
            }
        }
        Word::new(self.default_word).map_err(|e| ("prefetchers.default-word".into(), e))?;
        // The streamer never leaves its 4 KiB page of 64 lines, so it can
        // run at most 63 lines ahead of a request and issue at most 63 a
        // request: a larger value would be taken silently as 63.
        let max = streamer::MAX_AHEAD;
        for (key, v) in [
            ("streamer-degree", self.streamer_degree),
            ("streamer-distance", self.streamer_distance),
        ] {
            if !(1..=max).contains(&v) {
                return Err((
                    format!("prefetchers.{key}"),
                    format!(
                        "{v}: expected 1 to {max} lines (the streamer stays within its 4 KiB page)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The prefetchers present.
    pub fn kinds(&self) -> Vec<Kind> {
        self.available
            .iter()
            .filter_map(|n| Kind::from_name(n))
            .collect()
    }
}

/// One core's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefetchStats {
    /// Lines issued per prefetcher ([`Kind`] order: L2 streamer, L2
    /// adjacent, L1 next line, L1 IP stride).
    pub issued: [u64; 4],
    /// Lines prefetched into the L1D that a demand access then hit.
    pub l1_useful: u64,
    /// Lines prefetched into the L1D evicted unused.
    pub l1_useless: u64,
    /// Lines prefetched into the L2 that a request then hit.
    pub l2_useful: u64,
    /// Lines prefetched into the L2 evicted unused.
    pub l2_useless: u64,
}

impl PrefetchStats {
    /// Lines issued by every prefetcher.
    pub fn total_issued(&self) -> u64 {
        self.issued.iter().sum()
    }
}

/// Which cache a prefetch fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The L1 data cache.
    L1,
    /// The L2.
    L2,
}

/// One core's prefetchers (see the module docs).
#[derive(Clone, Debug)]
pub struct Prefetchers {
    word: Word,
    present: Word,
    /// The bits ([`Kind::bit`]) of the prefetchers both present and on in
    /// `word`, kept so that the per-access checks are one AND.
    active: u64,
    next_line: next_line::NextLine,
    ip_stride: ip_stride::IpStride,
    adjacent: adjacent::Adjacent,
    streamer: streamer::Streamer,
    stats: PrefetchStats,
    /// The buffer the hierarchy collects each access's lines in, kept
    /// here so that no access allocates one ([`Self::take_buffer`]).
    buffer: Vec<(u64, Kind)>,
}

impl Prefetchers {
    /// Host bytes one core's prefetchers take (the boxed state, the IP
    /// stride table and the streamer's streams), for the platform's
    /// memory check.
    pub const HOST_BYTES: u64 = (std::mem::size_of::<Prefetchers>()
        + ip_stride::TABLE_BYTES
        + streamer::STREAMS_BYTES) as u64;

    /// The platform's prefetchers for lines of `1 << line_bits` bytes,
    /// switched by `word` (those the platform lacks stay off).
    pub fn new(platform: &PrefetchPlatform, word: Word, line_bits: u32) -> Self {
        let present = Word::only(&platform.kinds());
        Prefetchers {
            word,
            present,
            active: active_bits(word, present),
            next_line: next_line::NextLine,
            ip_stride: ip_stride::IpStride::new(line_bits),
            adjacent: adjacent::Adjacent,
            streamer: streamer::Streamer::new(platform.streamer_degree, platform.streamer_distance),
            stats: PrefetchStats::default(),
            buffer: Vec::new(),
        }
    }

    /// The (empty) buffer for one access's lines to prefetch; hand it
    /// back with [`Self::return_buffer`] so that the next access reuses
    /// its allocation.
    #[inline]
    pub fn take_buffer(&mut self) -> Vec<(u64, Kind)> {
        std::mem::take(&mut self.buffer)
    }

    /// Gives back the buffer of [`Self::take_buffer`], emptied.
    #[inline]
    pub fn return_buffer(&mut self, mut buffer: Vec<(u64, Kind)>) {
        buffer.clear();
        self.buffer = buffer;
    }

    /// Switches prefetchers on and off (a new MSR 0x1A4 word).
    pub fn set_word(&mut self, word: Word) {
        self.word = word;
        self.active = active_bits(word, self.present);
    }

    /// The control word in force.
    pub fn word(&self) -> Word {
        self.word
    }

    #[inline(always)]
    fn on(&self, k: Kind) -> bool {
        self.active & k.bit() != 0
    }

    /// Whether an L1 prefetcher is on (else L1 hits need no look).
    #[inline(always)]
    pub fn l1_on(&self) -> bool {
        self.active & (Kind::L1NextLine.bit() | Kind::L1IpStride.bit()) != 0
    }

    /// Whether the IP stride prefetcher is on (it needs every fetch's IP).
    #[inline(always)]
    pub fn wants_ip(&self) -> bool {
        self.on(Kind::L1IpStride)
    }

    /// A demand data access to `block` (at byte `addr`, by the load at
    /// `ip` if known) that hit or missed the L1D (`first_use`: it hit a
    /// prefetched line no access had used): the lines to prefetch into
    /// the L1D go to `out`.
    pub fn l1_access(
        &mut self,
        ip: Option<u64>,
        addr: u64,
        block: u64,
        (hit, first_use): (bool, bool),
        out: &mut Vec<(u64, Kind)>,
    ) {
        if self.on(Kind::L1NextLine) {
            if let Some(b) = self.next_line.on_access(block, !hit || first_use) {
                out.push((b, Kind::L1NextLine));
            }
        }
        if let Some(b) = ip.and_then(|ip| self.ip_stride_access(ip, addr)) {
            out.push((b, Kind::L1IpStride));
        }
    }

    /// The IP stride prefetcher alone (when on) on the load at `ip` that
    /// read `addr`: its part of [`Self::l1_access`], and all of it for a
    /// repeated L1 hit that is not a first use (the next-line prefetcher
    /// ignores those).
    #[inline]
    pub fn ip_stride_access(&mut self, ip: u64, addr: u64) -> Option<u64> {
        if self.on(Kind::L1IpStride) {
            self.ip_stride.on_access(ip, addr)
        } else {
            None
        }
    }

    /// A request for `block` that hit or missed the L2: the lines to
    /// prefetch into the L2 go to `out`.
    pub fn l2_access(&mut self, block: u64, hit: bool, out: &mut Vec<(u64, Kind)>) {
        if self.on(Kind::L2Adjacent) {
            if let Some(b) = self.adjacent.on_access(block, !hit) {
                out.push((b, Kind::L2Adjacent));
            }
        }
        if self.on(Kind::L2Streamer) {
            self.streamer
                .on_access(block, |b| out.push((b, Kind::L2Streamer)));
        }
    }

    /// A line was prefetched by `kind`.
    pub fn issued(&mut self, kind: Kind) {
        self.stats.issued[kind as usize] += 1;
    }

    /// A demand access used a prefetched line in `t` for the first time.
    pub fn useful(&mut self, t: Target) {
        match t {
            Target::L1 => self.stats.l1_useful += 1,
            Target::L2 => self.stats.l2_useful += 1,
        }
    }

    /// `v` left cache `t`: useless if it was a prefetched line never used.
    pub fn evicted(&mut self, t: Target, v: &Victim) {
        if v.unused_prefetch {
            match t {
                Target::L1 => self.stats.l1_useless += 1,
                Target::L2 => self.stats.l2_useless += 1,
            }
        }
    }

    /// What a demand lookup in `t` did to prefetched lines: a first use
    /// is useful, an unused victim useless.
    pub fn demand(&mut self, t: Target, out: &LineOutcome) {
        if out.first_use {
            self.useful(t);
        }
        if let Some(v) = &out.victim {
            self.evicted(t, v);
        }
    }

    /// The counts so far.
    pub fn stats(&self) -> PrefetchStats {
        self.stats
    }
}

/// The bits of the prefetchers that `present` has and `word` turns on
/// (MSR 0x1A4's bits are set for off).
fn active_bits(word: Word, present: Word) -> u64 {
    Kind::all()
        .filter(|&k| word.is_on(k) && present.is_on(k))
        .fold(0, |a, k| a | k.bit())
}
#[cfg(test)]
mod tests {
    use super::*;

    fn platform(names: &[&str]) -> PrefetchPlatform {
        PrefetchPlatform {
            available: names.iter().map(|s| s.to_string()).collect(),
            ..PrefetchPlatform::default()
        }
    }

    #[test]
    fn a_prefetcher_turned_off_or_absent_issues_nothing() {
        let all = platform(&["l1-next-line", "l1-ip-stride", "l2-adjacent", "l2-streamer"]);
        let mut p = Prefetchers::new(&all, Word::ALL_OFF, 6);
        let mut out = Vec::new();
        for b in 0..100 {
            p.l1_access(Some(0x400), b * 64, b, (false, false), &mut out);
            p.l2_access(b, false, &mut out);
        }
        assert!(out.is_empty());
        // on in the word, but the platform lacks it
        let none = platform(&[]);
        let mut p = Prefetchers::new(&none, Word::new(0).unwrap(), 6);
        p.l1_access(None, 0, 0, (false, false), &mut out);
        p.l2_access(0, false, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn next_line_asks_for_the_next_line_on_a_miss_or_a_first_use() {
        let all = platform(&["l1-next-line"]);
        let mut p = Prefetchers::new(&all, Word::new(0).unwrap(), 6);
        let mut out = Vec::new();
        p.l1_access(None, 0, 10, (false, false), &mut out);
        assert_eq!(out, vec![(11, Kind::L1NextLine)]);
        out.clear();
        p.l1_access(None, 11 * 64, 11, (true, false), &mut out);
        assert!(out.is_empty());
        p.l1_access(None, 11 * 64, 11, (true, true), &mut out);
        assert_eq!(out, vec![(12, Kind::L1NextLine)]);
    }

    #[test]
    fn platform_sections_are_checked() {
        let mut bad = platform(&["l3-magic"]);
        assert_eq!(bad.check().unwrap_err().0, "prefetchers.available");
        bad = platform(&["l2-streamer"]);
        bad.default_word = 0x30;
        assert_eq!(bad.check().unwrap_err().0, "prefetchers.default-word");
        assert!(platform(&["l2-streamer", "l2-adjacent"]).check().is_ok());
        // a platform built in code without the section checks too
        assert!(PrefetchPlatform::default().check().is_ok());
    }

    /// Each streamer field is named on its own, and a value past the page
    /// (which the streamer would take silently as 63) is refused.
    #[test]
    fn streamer_degree_and_distance_are_named_and_bounded_by_the_page() {
        for (degree, distance, key) in [
            (0, 16, "prefetchers.streamer-degree"),
            (2, 0, "prefetchers.streamer-distance"),
            (64, 16, "prefetchers.streamer-degree"),
            (2, u32::MAX, "prefetchers.streamer-distance"),
        ] {
            let p = PrefetchPlatform {
                streamer_degree: degree,
                streamer_distance: distance,
                ..platform(&["l2-streamer"])
            };
            let (k, msg) = p.check().unwrap_err();
            assert_eq!(k, key, "{degree} {distance}");
            assert!(msg.contains("expected 1 to 63 lines"), "{msg}");
        }
        let edge = PrefetchPlatform {
            streamer_degree: 63,
            streamer_distance: 63,
            ..platform(&["l2-streamer"])
        };
        assert!(edge.check().is_ok());
    }
}
