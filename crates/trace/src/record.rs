//! The trace record: one packed 64-bit word per memory access or event.
//!
//! This module owns the bit layout of a record (documented in
//! `docs/trace-format.md`), the access [`Kind`]s and the escape [`Event`]s.
//! Every reader and generator of this crate yields [`Record`]s, and the
//! binary format stores them (logically) as they are here.
//!
//! ```text
//!  63      58 57      51 50  48 47                                    0
//! +----------+----------+------+---------------------------------------+
//! |   gap    | size/code| kind |        address / event payload        |
//! +----------+----------+------+---------------------------------------+
//! ```
//!
//! Kind codes: 0 load, 1 store, 2 instruction fetch, 3 modify, 4 escape,
//! 5 dependent load (a load marked as needing the previous load's data;
//! see [`Kind::DepLoad`]); 6 and 7 are invalid.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Bits of virtual address (or event payload) held by a record.
pub const ADDR_BITS: u32 = 48;
/// Largest access size, in bytes, that a record can hold.
pub const MAX_SIZE: u32 = 127;
/// Largest instruction gap a record holds; larger gaps use
/// [`Event::InstrGap`] escape records before the record (see
/// [`Record::after_gap`]).
pub const MAX_GAP: u32 = 63;
/// Largest event payload (48 bits).
pub const MAX_PAYLOAD: u64 = (1 << ADDR_BITS) - 1;

const ADDR_MASK: u64 = MAX_PAYLOAD;
const KIND_SHIFT: u32 = 48;
const SIZE_SHIFT: u32 = 51;
const GAP_SHIFT: u32 = 58;
/// The event code of [`Event::InstrGap`] (an escape's size field; see
/// `Event::code`).
const INSTR_GAP_CODE: u64 = 0;

/// What a record stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A data read.
    Load = 0,
    /// A data write.
    Store = 1,
    /// An instruction fetch; the record also counts as one instruction.
    Ifetch = 2,
    /// A read-modify-write of the same bytes (valgrind's `M`).
    Modify = 3,
    /// An escape record carrying an [`Event`] instead of an access.
    Escape = 4,
    /// A data read whose address depends on the data of the previous
    /// load (a dependency hint: pointer chasing). Caches treat it as a
    /// [`Kind::Load`]; the simulator's out-of-order window issues it only
    /// once the previous load's data has arrived. Traces without hints
    /// hold none, and every load counts as independent.
    DepLoad = 5,
}

impl Kind {
    /// All kinds, in code order.
    pub const ALL: [Kind; 6] = [
        Kind::Load,
        Kind::Store,
        Kind::Ifetch,
        Kind::Modify,
        Kind::Escape,
        Kind::DepLoad,
    ];

    /// The kind with this 3-bit code, if any.
    pub fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(code)).copied()
    }

    /// Whether this kind is a memory access (not an escape).
    pub fn is_access(self) -> bool {
        self != Kind::Escape
    }

    /// Whether this kind touches data (load, dependent load, store or
    /// modify).
    pub fn is_data(self) -> bool {
        matches!(
            self,
            Kind::Load | Kind::Store | Kind::Modify | Kind::DepLoad
        )
    }

    /// Whether this kind reads data without writing it (a load, dependent
    /// or not).
    pub fn is_load(self) -> bool {
        matches!(self, Kind::Load | Kind::DepLoad)
    }
}

/// An event carried by an escape record; the payload is at most 48 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// This many instructions retired (without records of their own) since
    /// the previous record: a gap too large for the record's gap field.
    InstrGap(u64),
    /// The following records belong to this thread.
    ThreadSwitch(u64),
    /// A region of interest with this id begins.
    RoiBegin(u64),
    /// A region of interest with this id ends.
    RoiEnd(u64),
    /// A mapping starts at this address; a [`Event::Length`] record follows.
    Mmap(u64),
    /// A mapping at this address is removed; a [`Event::Length`] record follows.
    Munmap(u64),
    /// The program break moved to this address.
    Brk(u64),
    /// The length in bytes of the preceding `Mmap` or `Munmap`.
    Length(u64),
    /// The caches are flushed (Dinero label 4).
    Flush,
    /// An access of unknown type at this address (Dinero label 3).
    Unknown(u64),
}

impl Event {
    /// Number of defined event codes; codes at or above it are invalid.
    pub const CODES: u8 = 10;

    fn code(self) -> u8 {
        match self {
            Event::InstrGap(_) => 0,
            Event::ThreadSwitch(_) => 1,
            Event::RoiBegin(_) => 2,
            Event::RoiEnd(_) => 3,
            Event::Mmap(_) => 4,
            Event::Munmap(_) => 5,
            Event::Brk(_) => 6,
            Event::Length(_) => 7,
            Event::Flush => 8,
            Event::Unknown(_) => 9,
        }
    }

    /// Whether the payload is an address (stored in canonical 48-bit form).
    fn payload_is_addr(code: u8) -> bool {
        matches!(code, 4 | 5 | 6 | 9)
    }

    fn payload(self) -> u64 {
        match self {
            Event::Flush => 0,
            Event::InstrGap(v)
            | Event::ThreadSwitch(v)
            | Event::RoiBegin(v)
            | Event::RoiEnd(v)
            | Event::Mmap(v)
            | Event::Munmap(v)
            | Event::Brk(v)
            | Event::Length(v)
            | Event::Unknown(v) => v,
        }
    }

    fn from_parts(code: u8, payload: u64) -> Option<Event> {
        Some(match code {
            0 => Event::InstrGap(payload),
            1 => Event::ThreadSwitch(payload),
            2 => Event::RoiBegin(payload),
            3 => Event::RoiEnd(payload),
            4 => Event::Mmap(payload),
            5 => Event::Munmap(payload),
            6 => Event::Brk(payload),
            7 => Event::Length(payload),
            8 => Event::Flush,
            9 => Event::Unknown(payload),
            _ => return None,
        })
    }
}

/// Why a record cannot be built or decoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RecordError {
    /// The address is not a canonical 48-bit address.
    #[error("address {0:#x} does not fit in 48 bits (canonical form)")]
    Address(u64),
    /// The size is 0 or above [`MAX_SIZE`].
    #[error("access size {0} is outside 1..=127")]
    Size(u64),
    /// The gap is above [`MAX_GAP`].
    #[error("instruction gap {0} is above 63")]
    Gap(u64),
    /// The event payload is above 48 bits.
    #[error("event payload {0:#x} does not fit in 48 bits")]
    Payload(u64),
    /// An escape kind was given where an access kind was needed.
    #[error("escape is not an access kind")]
    NotAnAccess,
    /// The 3-bit kind field holds an undefined code.
    #[error("undefined kind code {0}")]
    KindCode(u8),
    /// The escape record holds an undefined event code.
    #[error("undefined event code {0}")]
    EventCode(u8),
    /// A flush event with a non-zero payload.
    #[error("flush event with non-zero payload {0:#x}")]
    FlushPayload(u64),
}

/// One packed trace record (8 bytes): an access or an escape event.
///
/// Records are always valid: every constructor checks its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Record(u64);

/// The kind a record's kind code ([`Record::kind_code`]) stands for;
/// codes 6 and 7 never reach a record (every constructor refuses them)
/// and read as escapes.
#[inline]
pub(crate) fn kind_of_code(code: u64) -> Kind {
    match code {
        0 => Kind::Load,
        1 => Kind::Store,
        2 => Kind::Ifetch,
        3 => Kind::Modify,
        5 => Kind::DepLoad,
        _ => Kind::Escape,
    }
}

/// Folds a canonical 64-bit address to 48 bits, or fails.
fn fold_addr(addr: u64) -> Result<u64, RecordError> {
    let top = addr >> (ADDR_BITS - 1);
    if top == 0 || top == (u64::MAX >> (ADDR_BITS - 1)) {
        Ok(addr & ADDR_MASK)
    } else {
        Err(RecordError::Address(addr))
    }
}

/// Sign-extends a 48-bit address to its canonical 64-bit form.
fn unfold_addr(bits: u64) -> u64 {
    (((bits << (64 - ADDR_BITS)) as i64) >> (64 - ADDR_BITS)) as u64
}

impl Record {
    /// An access of `kind` (not [`Kind::Escape`]) at `addr` of `size` bytes,
    /// after `gap` instructions that have no record of their own.
    pub fn access(kind: Kind, addr: u64, size: u32, gap: u32) -> Result<Record, RecordError> {
        if kind == Kind::Escape {
            return Err(RecordError::NotAnAccess);
        }
        if size == 0 || size > MAX_SIZE {
            return Err(RecordError::Size(u64::from(size)));
        }
        if gap > MAX_GAP {
            return Err(RecordError::Gap(u64::from(gap)));
        }
        let a = fold_addr(addr)?;
        Ok(Record(
            a | (kind as u64) << KIND_SHIFT
                | u64::from(size) << SIZE_SHIFT
                | u64::from(gap) << GAP_SHIFT,
        ))
    }

    /// An escape record carrying `event`, after `gap` instructions.
    pub fn event(event: Event, gap: u32) -> Result<Record, RecordError> {
        if gap > MAX_GAP {
            return Err(RecordError::Gap(u64::from(gap)));
        }
        let code = event.code();
        let payload = if Event::payload_is_addr(code) {
            fold_addr(event.payload())?
        } else if event.payload() > MAX_PAYLOAD {
            return Err(RecordError::Payload(event.payload()));
        } else {
            event.payload()
        };
        Ok(Record(
            payload
                | (Kind::Escape as u64) << KIND_SHIFT
                | u64::from(code) << SIZE_SHIFT
                | u64::from(gap) << GAP_SHIFT,
        ))
    }

    /// Wraps a raw access word whose kind (not an escape), size (1 to
    /// 127) and gap the caller has already checked: the frame decoder checks
    /// a whole frame's planes at once, then builds its records with this.
    #[inline(always)]
    pub(crate) const fn from_checked_access(raw: u64) -> Record {
        Record(raw)
    }

    /// Checks and wraps a raw 64-bit word.
    #[inline]
    pub fn from_raw(raw: u64) -> Result<Record, RecordError> {
        let kind_code = ((raw >> KIND_SHIFT) & 7) as u8;
        let kind = Kind::from_code(kind_code).ok_or(RecordError::KindCode(kind_code))?;
        let field = ((raw >> SIZE_SHIFT) & 0x7f) as u8;
        if kind == Kind::Escape {
            if field >= Event::CODES {
                return Err(RecordError::EventCode(field));
            }
            if field == 8 && raw & ADDR_MASK != 0 {
                return Err(RecordError::FlushPayload(raw & ADDR_MASK));
            }
        } else if field == 0 {
            return Err(RecordError::Size(0));
        }
        Ok(Record(raw))
    }

    /// The raw 64-bit word.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The kind's code (bits 48..51: [`Kind`] as `u64`), without the
    /// match of [`Record::kind`]: for hot loops that compare it with
    /// `Kind::X as u64`.
    #[inline(always)]
    pub const fn kind_code(self) -> u64 {
        (self.0 >> KIND_SHIFT) & 7
    }

    /// The low 48 bits sign-extended, whatever the kind: the address of an
    /// access (as [`Record::addr`]), meaningless for an escape. For hot
    /// loops that have checked the kind themselves.
    #[inline(always)]
    pub const fn addr_unchecked(self) -> u64 {
        (((self.0 << (64 - ADDR_BITS)) as i64) >> (64 - ADDR_BITS)) as u64
    }

    /// Bits 51..58, whatever the kind: the size of an access (as
    /// [`Record::size`]), the event code of an escape.
    #[inline(always)]
    pub const fn size_unchecked(self) -> u64 {
        (self.0 >> SIZE_SHIFT) & 0x7f
    }

    /// The gap (bits 58..64) as a `u64`, for sums in hot loops.
    #[inline(always)]
    pub const fn gap_u64(self) -> u64 {
        self.0 >> GAP_SHIFT
    }

    /// The record's kind.
    #[inline]
    pub fn kind(self) -> Kind {
        kind_of_code(self.kind_code())
    }

    /// Whether this is an access (not an escape).
    pub fn is_access(self) -> bool {
        self.kind().is_access()
    }

    /// The accessed address (canonical, sign-extended from 48 bits); for an
    /// escape record, the raw 48-bit payload.
    pub fn addr(self) -> u64 {
        if self.is_access() {
            unfold_addr(self.0 & ADDR_MASK)
        } else {
            self.0 & ADDR_MASK
        }
    }

    /// The access size in bytes (0 for an escape record).
    pub fn size(self) -> u32 {
        if self.is_access() {
            ((self.0 >> SIZE_SHIFT) & 0x7f) as u32
        } else {
            0
        }
    }

    /// Instructions retired since the previous record that have no record
    /// of their own (0..=63).
    pub fn gap(self) -> u32 {
        (self.0 >> GAP_SHIFT) as u32
    }

    /// The event of an escape record.
    pub fn as_event(self) -> Option<Event> {
        if self.is_access() {
            return None;
        }
        let code = ((self.0 >> SIZE_SHIFT) & 0x7f) as u8;
        let bits = self.0 & ADDR_MASK;
        let payload = if Event::payload_is_addr(code) {
            unfold_addr(bits)
        } else {
            bits
        };
        Event::from_parts(code, payload)
    }

    /// Instructions this record accounts for: its gap, plus one for an
    /// instruction fetch, plus the payload of an [`Event::InstrGap`].
    ///
    /// Inline and without a jump on the kind: the capture routes count
    /// every record they pass on with it.
    #[inline]
    pub fn instructions(self) -> u64 {
        let code = self.kind_code();
        let own = if code == Kind::Ifetch as u64 {
            1
        } else if code == Kind::Escape as u64 && self.size_unchecked() == INSTR_GAP_CODE {
            self.0 & ADDR_MASK
        } else {
            0
        };
        self.gap_u64() + own
    }

    /// The same record with another gap (`gap` must be at most [`MAX_GAP`]).
    pub fn with_gap(self, gap: u32) -> Result<Record, RecordError> {
        if gap > MAX_GAP {
            return Err(RecordError::Gap(u64::from(gap)));
        }
        Ok(self.set_gap(u64::from(gap)))
    }

    /// The same record with its gap field set to `gap` (at most
    /// [`MAX_GAP`]; the callers check it).
    const fn set_gap(self, gap: u64) -> Record {
        Record((self.0 & !(0x3f << GAP_SHIFT)) | gap << GAP_SHIFT)
    }

    /// This record preceded by `gap` instructions of any size, as the
    /// records to write in order: if the gap fits the gap field it is stored
    /// there and the record comes alone; otherwise [`Event::InstrGap`]
    /// escapes come first, as many as the gap needs (each carries at most
    /// [`MAX_PAYLOAD`] instructions, so a gap above 2^48 - 1 is split over
    /// consecutive escapes and no instruction is lost), then the record
    /// with a gap of 0.
    pub fn after_gap(self, gap: u64) -> AfterGap {
        if gap <= u64::from(MAX_GAP) {
            AfterGap {
                escapes: 0,
                record: Some(self.set_gap(gap)),
            }
        } else {
            AfterGap {
                escapes: gap,
                record: Some(self.set_gap(0)),
            }
        }
    }
}

/// The records of [`Record::after_gap`]: the `InstrGap` escapes of a large
/// gap (none when the gap fits the record), then the record itself.
#[derive(Clone, Debug, Default)]
pub struct AfterGap {
    /// Instructions still to be written as `InstrGap` escapes.
    escapes: u64,
    /// The record, until it has been yielded.
    record: Option<Record>,
}

impl Iterator for AfterGap {
    type Item = Record;

    #[inline]
    fn next(&mut self) -> Option<Record> {
        if self.escapes > 0 {
            let n = self.escapes.min(MAX_PAYLOAD);
            self.escapes -= n;
            return Some(Record(n | (Kind::Escape as u64) << KIND_SHIFT));
        }
        self.record.take()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.escapes.div_ceil(MAX_PAYLOAD) + u64::from(self.record.is_some());
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unchecked_fields_agree_with_the_accessors() {
        for (kind, addr, size, gap) in [
            (Kind::Load, 0x1234_5678u64, 8u32, 0u32),
            (Kind::Ifetch, 0xffff_8000_0000_0040, 127, 63),
            (Kind::Store, 0x7fff_ffff_fff8, 1, 5),
        ] {
            let r = Record::access(kind, addr, size, gap).unwrap();
            assert_eq!(r.kind_code(), kind as u64);
            assert_eq!(r.addr_unchecked(), r.addr());
            assert_eq!(r.addr_unchecked(), addr);
            assert_eq!(r.size_unchecked(), u64::from(r.size()));
            assert_eq!(r.gap_u64(), u64::from(r.gap()));
        }
        let e = Record::event(Event::InstrGap(1000), 7).unwrap();
        assert_eq!(e.kind_code(), Kind::Escape as u64);
        assert_eq!(e.gap_u64(), 7);
    }

    #[test]
    fn access_fields_round_trip() {
        let r = Record::access(Kind::Store, 0x7ff0_0000_1234, 8, 5).unwrap();
        assert_eq!(r.kind(), Kind::Store);
        assert_eq!(r.addr(), 0x7ff0_0000_1234);
        assert_eq!(r.size(), 8);
        assert_eq!(r.gap(), 5);
        assert_eq!(r.instructions(), 5);
        assert_eq!(Record::from_raw(r.raw()), Ok(r));
    }

    #[test]
    fn dependent_loads_round_trip_as_code_5() {
        let r = Record::access(Kind::DepLoad, 0x7ff0_0000_1000, 8, 3).unwrap();
        assert_eq!(r.kind(), Kind::DepLoad);
        assert_eq!(r.kind_code(), 5);
        assert_eq!(Kind::from_code(5), Some(Kind::DepLoad));
        assert!(r.is_access() && r.kind().is_data() && r.kind().is_load());
        assert!(!Kind::Store.is_load() && !Kind::Modify.is_load() && Kind::Load.is_load());
        assert_eq!(
            (r.addr(), r.size(), r.instructions()),
            (0x7ff0_0000_1000, 8, 3)
        );
        assert_eq!(Record::from_raw(r.raw()), Ok(r));
    }

    #[test]
    fn high_canonical_addresses_sign_extend() {
        let r = Record::access(Kind::Ifetch, 0xffff_ffff_ff60_0000, 4, 0).unwrap();
        assert_eq!(r.addr(), 0xffff_ffff_ff60_0000);
        assert_eq!(r.instructions(), 1);
        assert_eq!(
            Record::access(Kind::Load, 0x0001_0000_0000_0000, 4, 0),
            Err(RecordError::Address(0x0001_0000_0000_0000))
        );
    }

    #[test]
    fn bad_fields_are_rejected() {
        assert_eq!(
            Record::access(Kind::Load, 0, 0, 0),
            Err(RecordError::Size(0))
        );
        assert_eq!(
            Record::access(Kind::Load, 0, 128, 0),
            Err(RecordError::Size(128))
        );
        assert_eq!(
            Record::access(Kind::Load, 0, 1, 64),
            Err(RecordError::Gap(64))
        );
        assert_eq!(
            Record::access(Kind::Escape, 0, 1, 0),
            Err(RecordError::NotAnAccess)
        );
        assert_eq!(Record::from_raw(6 << 48), Err(RecordError::KindCode(6)));
        assert_eq!(Record::from_raw(7 << 48), Err(RecordError::KindCode(7)));
        assert_eq!(
            Record::from_raw(4 << 48 | 10 << 51),
            Err(RecordError::EventCode(10))
        );
        assert_eq!(Record::from_raw(0), Err(RecordError::Size(0)));
    }

    #[test]
    fn large_gaps_become_escapes() {
        let r = Record::access(Kind::Load, 64, 8, 0).unwrap();
        let v: Vec<Record> = r.after_gap(1000).collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].as_event(), Some(Event::InstrGap(1000)));
        assert_eq!(v[1].gap(), 0);
        assert_eq!(v[1].kind(), Kind::Load);
        let v: Vec<Record> = r.after_gap(63).collect();
        assert_eq!(v, [r.with_gap(63).unwrap()]);
        // a record that had a gap gets the new one, not the sum
        let r5 = r.with_gap(5).unwrap();
        assert_eq!(
            r5.after_gap(7).collect::<Vec<_>>(),
            [r.with_gap(7).unwrap()]
        );
        assert_eq!(r5.after_gap(64).nth(1), Some(r));
    }

    /// A gap above one escape's payload (2^48 - 1) is split over
    /// consecutive `InstrGap` escapes: before, it was clamped to 2^48 - 1
    /// and the rest of the instructions were lost without a word.
    #[test]
    fn gaps_above_one_escape_are_split() {
        let r = Record::access(Kind::Store, 0x1000, 4, 0).unwrap();
        for (gap, escapes) in [
            (MAX_PAYLOAD, 1),
            (MAX_PAYLOAD + 1, 2),
            (3 * MAX_PAYLOAD, 3),
            (u64::MAX, 65537),
        ] {
            let it = r.after_gap(gap);
            assert_eq!(it.size_hint(), (escapes + 1, Some(escapes + 1)));
            let v: Vec<Record> = it.collect();
            assert_eq!(v.len(), escapes + 1, "{gap}");
            assert_eq!(*v.last().unwrap(), r);
            assert!(v[..escapes]
                .iter()
                .all(|e| matches!(e.as_event(), Some(Event::InstrGap(n)) if n > 0)));
            let sum = v
                .iter()
                .try_fold(0u64, |s, e| s.checked_add(e.instructions()));
            assert_eq!(sum, Some(gap));
            // every record is one the checked constructors accept
            for e in &v {
                assert_eq!(Record::from_raw(e.raw()), Ok(*e));
            }
        }
    }

    fn any_event() -> impl Strategy<Value = Event> {
        let p = 0..=MAX_PAYLOAD;
        prop_oneof![
            p.clone().prop_map(Event::InstrGap),
            p.clone().prop_map(Event::ThreadSwitch),
            p.clone().prop_map(Event::RoiBegin),
            p.clone().prop_map(Event::RoiEnd),
            (0u64..1 << 47).prop_map(Event::Mmap),
            (0u64..1 << 47).prop_map(Event::Munmap),
            (0u64..1 << 47).prop_map(Event::Brk),
            p.clone().prop_map(Event::Length),
            Just(Event::Flush),
            (0u64..1 << 47).prop_map(Event::Unknown),
        ]
    }

    proptest! {
        /// `after_gap` keeps every instruction: the records it yields
        /// account for exactly the gap (plus the record's own fetch).
        #[test]
        fn after_gap_preserves_instructions(
            gap in prop_oneof![0u64..200, 0u64..=u64::MAX / 2, (MAX_PAYLOAD - 5)..(MAX_PAYLOAD * 4)],
            old_gap in 0u32..=63,
            kind in prop_oneof![Just(Kind::Load), Just(Kind::Ifetch), Just(Kind::Store)],
        ) {
            let r = Record::access(kind, 0x40, 8, old_gap).unwrap();
            let own = u64::from(kind == Kind::Ifetch);
            let v: Vec<Record> = r.after_gap(gap).collect();
            let sum: u64 = v.iter().map(|e| e.instructions()).sum();
            prop_assert_eq!(sum, gap + own);
            prop_assert_eq!(v.last().unwrap().kind(), kind);
            prop_assert!(v[..v.len() - 1].iter().all(|e| e.kind() == Kind::Escape));
        }

        #[test]
        fn events_round_trip(e in any_event(), gap in 0u32..=63) {
            let r = Record::event(e, gap).unwrap();
            prop_assert_eq!(r.as_event(), Some(e));
            prop_assert_eq!(r.gap(), gap);
            prop_assert_eq!(Record::from_raw(r.raw()), Ok(r));
        }

        #[test]
        fn from_raw_never_panics(raw in any::<u64>()) {
            if let Ok(r) = Record::from_raw(raw) {
                prop_assert_eq!(r.raw(), raw);
                let _ = (r.kind(), r.addr(), r.size(), r.as_event(), r.instructions());
            }
        }
    }
}
