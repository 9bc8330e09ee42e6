//! Record fields for the per-record hot loops: which lines a record
//! references and how many instructions it accounts for, without the
//! accessors' per-field kind checks. The bit layout itself stays in
//! `cachepart-trace` ([`Record::kind_code`], [`Record::addr_unchecked`],
//! [`Record::size_unchecked`], [`Record::gap_u64`]); the tests check every
//! function here against the [`Record`] accessors.

use cachepart_trace::{Kind, Record};

const IFETCH: u64 = Kind::Ifetch as u64;
const ESCAPE: u64 = Kind::Escape as u64;

/// What a record means for a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// Whether the record is a reference (data access, or an instruction
    /// fetch when they count).
    pub(crate) is_ref: bool,
    /// Whether it is an escape record.
    pub(crate) is_escape: bool,
    /// First line touched (meaningless unless `is_ref`).
    pub(crate) first: u64,
    /// Last line touched, `>= first` (meaningless unless `is_ref`).
    pub(crate) last: u64,
    /// Instructions, except an escape's own payload: the gap, plus one for
    /// an instruction fetch.
    pub(crate) gap_instructions: u64,
}

/// Decodes `r` for lines of `1 << shift` bytes.
#[inline(always)]
pub(crate) fn decode(r: Record, shift: u32, ifetch: bool) -> Decoded {
    let kind = r.kind_code();
    let is_fetch = kind == IFETCH;
    let is_escape = kind == ESCAPE;
    let addr = r.addr_unchecked();
    let size = r.size_unchecked();
    let first = addr >> shift;
    let last = addr.saturating_add(size.saturating_sub(1)) >> shift;
    Decoded {
        is_ref: !is_escape && (!is_fetch || ifetch),
        is_escape,
        first,
        last: last.max(first),
        gap_instructions: r.gap_u64() + u64::from(is_fetch),
    }
}

/// Whether `r` is an instruction fetch that is not a reference (the
/// cheapest test of the hot loops, which skip those).
#[inline(always)]
pub(crate) fn skip_fetch(r: Record, ifetch: bool) -> bool {
    !ifetch && r.kind_code() == IFETCH
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::{Event, Kind};
    use proptest::prelude::*;

    fn check(r: Record) -> Result<(), TestCaseError> {
        for shift in [3u32, 6, 12] {
            for ifetch in [false, true] {
                let d = decode(r, shift, ifetch);
                let k = r.kind();
                prop_assert_eq!(skip_fetch(r, ifetch), !ifetch && k == Kind::Ifetch);
                prop_assert_eq!(d.is_escape, k == Kind::Escape);
                prop_assert_eq!(d.is_ref, k.is_data() || (ifetch && k == Kind::Ifetch));
                let own = match r.as_event() {
                    Some(Event::InstrGap(n)) => n,
                    _ => 0,
                };
                prop_assert_eq!(d.gap_instructions + own, r.instructions());
                if d.is_ref {
                    let a = r.addr();
                    prop_assert_eq!(d.first, a >> shift);
                    prop_assert_eq!(d.last, a.saturating_add(u64::from(r.size()) - 1) >> shift);
                }
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn matches_the_accessors(
            kind in 0usize..4,
            addr in prop_oneof![0u64..1 << 47, (0u64..1 << 47).prop_map(|a| !a)],
            size in 1u32..128,
            gap in 0u32..64,
        ) {
            check(Record::access(Kind::ALL[kind], addr, size, gap).unwrap())?;
        }

        #[test]
        fn matches_the_accessors_on_escapes(payload in 0u64..1 << 48, gap in 0u32..64) {
            for ev in [
                Event::InstrGap(payload),
                Event::ThreadSwitch(payload),
                Event::Length(payload),
                Event::Flush,
            ] {
                check(Record::event(ev, gap).unwrap())?;
            }
        }
    }
}
