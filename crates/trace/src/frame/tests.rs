//! The frame encoder and decoder: round trips, and the decoder of valid
//! frames against the checked loop on random and corrupted frames.

use proptest::prelude::*;

use super::*;
use crate::codec::put_varint;
use crate::record::{Event, Kind, Record};

#[test]
fn deltas_round_trip_at_the_edges() {
    for (a, b) in [(0, MASK48), (MASK48, 0), (5, 3), (3, 5), (1 << 47, 0)] {
        assert_eq!(undelta48(delta48(a, b), b), a);
    }
}

#[test]
fn frame_round_trips() {
    let recs: Vec<Record> = (0..1000u64)
        .map(|i| match i % 5 {
            0 => Record::access(Kind::Ifetch, 0x40_0000 + i * 3, 3, 0).unwrap(),
            1 => Record::access(Kind::Load, 0x7fff_0000_0000 - i * 8, 8, 1).unwrap(),
            2 => Record::event(crate::Event::ThreadSwitch(i), 2).unwrap(),
            // Dependent loads share the data address section.
            3 => Record::access(Kind::DepLoad, 0x1000_0000 + i * 64, 8, 4).unwrap(),
            _ => Record::access(Kind::Store, 0xffff_ffff_ff60_0000, 8, 63).unwrap(),
        })
        .collect();
    let mut enc = FrameEncoder::new(3).unwrap();
    let mut buf = Vec::new();
    enc.encode(&recs, &mut buf).unwrap();
    let mut hb = [0u8; FRAME_HEADER];
    hb.copy_from_slice(&buf[..FRAME_HEADER]);
    let h = FrameHeader::parse(&hb, 0).unwrap();
    let mut dec = FrameDecoder::new().unwrap();
    let mut out = Vec::new();
    dec.decode(h, &buf[FRAME_HEADER..], 0, 0, &mut out).unwrap();
    assert_eq!(out, recs);
}

/// What decoding a frame gave: the records pushed, and the error's text.
type Outcome = (Vec<Record>, Option<String>);

/// Decodes `frame` (header and body) as a reader does and with the
/// checked loop alone; requires the two to agree (records pushed, error)
/// and returns the outcome. `None` where the header is refused.
fn decode_all_ways(frame: &[u8]) -> Option<Outcome> {
    let mut hb = [0u8; FRAME_HEADER];
    hb.copy_from_slice(&frame[..FRAME_HEADER]);
    let h = FrameHeader::parse(&hb, 64).ok()?;
    let body = &frame[FRAME_HEADER..];
    let mut dec = FrameDecoder::new().unwrap();
    let mut v = Vec::new();
    let got = dec.decode_to(h, body, 64, 1000, &mut v);
    let mut want = Vec::new();
    let expected = dec.decode_reference(h, body, 64, 1000, &mut want);
    let text = |r: Result<()>| r.err().map(|e| format!("{e:?} / {e}"));
    let (got, expected) = (text(got), text(expected));
    assert_eq!(got, expected);
    assert_eq!(v, want);
    Some((want, expected))
}

/// One record's recipe: kind code, a far address (or a step), random
/// bits, size, gap, event code.
type Recipe = (u8, bool, u64, u8, u8, u8);

fn recipe() -> impl Strategy<Value = Recipe> {
    (
        prop_oneof![6 => Just(2u8), 3 => 0u8..=1, 1 => Just(3u8), 1 => Just(5u8), 1 => Just(4u8)],
        prop::bool::weighted(0.15),
        any::<u64>(),
        1u8..=127,
        0u8..=63,
        0u8..10,
    )
}

/// Records from recipes: addresses near the previous one (deltas of one
/// to three bytes) or anywhere in the 48-bit space.
fn records(recipes: &[Recipe]) -> Vec<Record> {
    let mut at = 0x40_0000u64;
    recipes
        .iter()
        .map(|&(k, far, r, size, gap, ev)| {
            let canon = |a: u64| (((a << 16) as i64) >> 16) as u64;
            at = if far {
                canon(r)
            } else {
                canon(at.wrapping_add((((r % 40_000) as i64 - 20_000) >> (r % 3 * 7)) as u64))
            };
            if k == 4 {
                let payload = if far { r & MASK48 } else { r % 300 };
                let e = match ev {
                    0 => Event::InstrGap(payload),
                    1 => Event::ThreadSwitch(payload),
                    2 => Event::RoiBegin(payload),
                    3 => Event::RoiEnd(payload),
                    4 => Event::Mmap(at),
                    5 => Event::Munmap(at),
                    6 => Event::Brk(at),
                    7 => Event::Length(payload),
                    8 => Event::Flush,
                    _ => Event::Unknown(at),
                };
                Record::event(e, u32::from(gap)).unwrap()
            } else {
                let kind = Kind::from_code(k).unwrap();
                Record::access(kind, at, u32::from(size), u32::from(gap)).unwrap()
            }
        })
        .collect()
}

/// The raw (uncompressed) bytes of a frame of `recs`, laid out as the
/// encoder lays them out, its sections given separately.
fn raw_parts(recs: &[Record]) -> (Vec<u8>, [Vec<u8>; 3]) {
    let mut planes = vec![0u8; 3 * recs.len()];
    let mut secs: [Vec<u8>; 3] = Default::default();
    let (mut pi, mut pd) = (0, 0);
    let n = recs.len();
    for (i, r) in recs.iter().enumerate() {
        let raw = r.raw();
        planes[i] = ((raw >> 48) & 7) as u8;
        planes[n + i] = ((raw >> 51) & 0x7f) as u8;
        planes[2 * n + i] = (raw >> 58) as u8;
        let a = raw & MASK48;
        match planes[i] {
            2 => {
                put_varint(&mut secs[0], delta48(a, pi));
                pi = a;
            }
            4 => put_varint(&mut secs[2], a),
            _ => {
                put_varint(&mut secs[1], delta48(a, pd));
                pd = a;
            }
        }
    }
    (planes, secs)
}

/// A whole frame (header and zstd body) of the planes and sections.
fn assemble(records: usize, planes: &[u8], secs: &[Vec<u8>; 3]) -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend_from_slice(&(secs[0].len() as u32).to_le_bytes());
    raw.extend_from_slice(&(secs[1].len() as u32).to_le_bytes());
    raw.extend_from_slice(planes);
    for s in secs {
        raw.extend_from_slice(s);
    }
    let body = zstd::bulk::compress(&raw, 1).unwrap();
    let h = FrameHeader {
        compressed_len: body.len() as u32,
        records: records as u32,
        raw_len: raw.len() as u32,
    };
    let mut out = h.encode().to_vec();
    out.extend_from_slice(&body);
    out
}

/// Found by a robustness probe: kind code 6 or 7 with an empty escape
/// section was "escape section ends early", and a data varint above 48
/// bits "data address section ends early".
#[test]
fn undefined_kinds_and_oversized_varints_are_named() {
    let recs = records(&[(0, false, 8, 8, 0, 0), (0, false, 16, 8, 0, 0)]);
    let (planes, secs) = raw_parts(&recs);
    for k in [6u8, 7] {
        let mut p = planes.clone();
        p[1] = k;
        let (got, err) = decode_all_ways(&assemble(2, &p, &secs)).unwrap();
        assert_eq!(got.len(), 1);
        let err = err.unwrap();
        assert!(
            err.ends_with(&format!(
                "bad record 1001 in frame at byte offset 64: undefined kind code {k}"
            )),
            "{err}"
        );
    }
    for (bytes, words) in [
        (
            vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            "data address section: varint ff ff ff ff ff ff 7f is above 48 bits",
        ),
        (
            vec![0xff; 8],
            "data address section: varint ff ff ff ff ff ff ff runs past 7 bytes",
        ),
        (vec![0xff, 0xff], "data address section ends early"),
    ] {
        let mut s = secs.clone();
        s[1] = bytes;
        let (got, err) = decode_all_ways(&assemble(2, &planes, &s)).unwrap();
        assert!(got.is_empty());
        let err = err.unwrap();
        assert!(err.ends_with(words), "{err}");
    }
}

/// How a test frame is spoiled.
#[derive(Clone, Debug)]
enum Spoil {
    /// A plane byte (index into all three planes) set to a value.
    Plane(usize, u8),
    /// A section loses its last `1 + n % 3` bytes.
    Cut(usize, usize),
    /// Bytes appended to a section.
    Extra(usize, Vec<u8>),
    /// A byte of a section (index modulo its length) set to a value.
    Byte(usize, usize, u8),
    /// Bytes put into a section (at an index modulo its length + 1): a
    /// varint above 48 bits, one past 7 bytes, or one cut short.
    Insert(usize, usize, Vec<u8>),
}

fn spoil() -> impl Strategy<Value = Spoil> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Spoil::Plane(i, v)),
        (0usize..3, any::<usize>()).prop_map(|(s, n)| Spoil::Cut(s, n)),
        (0usize..3, prop::collection::vec(any::<u8>(), 1..4)).prop_map(|(s, b)| Spoil::Extra(s, b)),
        (0usize..3, any::<usize>(), any::<u8>()).prop_map(|(s, i, v)| Spoil::Byte(s, i, v)),
        (
            0usize..3,
            any::<usize>(),
            prop_oneof![
                Just(vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
                Just(vec![0xff; 8]),
                Just(vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]),
                Just(vec![0xff]),
            ]
        )
            .prop_map(|(s, i, b)| Spoil::Insert(s, i, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn frames_decode_as_in_the_checked_loop(recipes in prop::collection::vec(recipe(), 1..3000)) {
        let recs = records(&recipes);
        let mut enc = FrameEncoder::new(1).unwrap();
        let mut frame = Vec::new();
        enc.encode(&recs, &mut frame).unwrap();
        let (got, err) = decode_all_ways(&frame).unwrap();
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, recs);
    }

    #[test]
    fn spoiled_frames_fail_as_in_the_checked_loop(
        recipes in prop::collection::vec(recipe(), 1..1500),
        spoils in prop::collection::vec(spoil(), 1..3),
    ) {
        let recs = records(&recipes);
        let (mut planes, mut secs) = raw_parts(&recs);
        for s in spoils {
            match s {
                Spoil::Plane(i, v) => {
                    let i = i % planes.len();
                    planes[i] = v;
                }
                Spoil::Cut(s, n) => {
                    let keep = secs[s].len().saturating_sub(1 + n % 3);
                    secs[s].truncate(keep);
                }
                Spoil::Extra(s, b) => secs[s].extend_from_slice(&b),
                Spoil::Byte(s, i, v) => {
                    if !secs[s].is_empty() {
                        let i = i % secs[s].len();
                        secs[s][i] = v;
                    }
                }
                Spoil::Insert(s, i, b) => {
                    let i = i % (secs[s].len() + 1);
                    secs[s].splice(i..i, b);
                }
            }
        }
        decode_all_ways(&assemble(recs.len(), &planes, &secs));
    }
}

/// A frame header whose raw length is within the bounds of its record
/// count but not what its zstd frame holds is refused, naming the offset,
/// before the decoder sizes its buffer: before, a corrupt header claiming
/// 16 Mi records and 160 MiB reserved 160 MiB for a 30-byte frame.
#[test]
fn a_wrong_raw_length_allocates_nothing() {
    let recs = records(&[(0, false, 8, 8, 0, 0), (0, false, 16, 8, 0, 0)]);
    let (planes, secs) = raw_parts(&recs);
    let frame = assemble(recs.len(), &planes, &secs);
    let mut hb = [0u8; FRAME_HEADER];
    hb.copy_from_slice(&frame[..FRAME_HEADER]);
    let good = FrameHeader::parse(&hb, 0).unwrap();
    let body = &frame[FRAME_HEADER..];
    let huge = FrameHeader {
        records: MAX_FRAME_RECORDS,
        raw_len: (SECTIONS as u64 + u64::from(MAX_FRAME_RECORDS) * MAX_RAW_PER_RECORD) as u32,
        ..good
    };
    // the header alone is in range (it is consistent with its record count)
    FrameHeader::parse(&huge.encode(), 0).unwrap();
    for h in [
        huge,
        FrameHeader {
            raw_len: good.raw_len + 1,
            ..good
        },
    ] {
        let mut dec = FrameDecoder::new().unwrap();
        let mut out = Vec::new();
        let e = dec.decode(h, body, 4096, 0, &mut out).unwrap_err();
        assert!(
            matches!(e, TraceError::BadFrame { offset: 4096, .. }),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "bad frame at byte offset 4096: zstd frame holds {} bytes, header says {}",
                good.raw_len, h.raw_len
            )
        );
        assert_eq!(dec.raw.capacity(), 0, "{h:?}");
        assert!(out.is_empty());
    }
    // a body that is not a zstd frame at all
    let mut dec = FrameDecoder::new().unwrap();
    let e = dec
        .decode(good, &[0u8; 32], 7, 0, &mut Vec::new())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad frame at byte offset 7: zstd: not a zstd frame header"
    );
    assert_eq!(dec.raw.capacity(), 0);
}

/// Raw lengths outside what the record count allows (`8 + 3 n` to
/// `8 + 10 n` bytes) are refused by the header check, naming the offset.
#[test]
fn raw_lengths_outside_the_record_bounds_are_refused() {
    let n = 40u32;
    for raw_len in [0, 8 + 3 * n - 1, 8 + 10 * n + 1, u32::MAX] {
        let h = FrameHeader {
            compressed_len: 100,
            records: n,
            raw_len,
        };
        let e = FrameHeader::parse(&h.encode(), 123).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("bad frame at byte offset 123: raw length {raw_len} out of range")
        );
    }
    for raw_len in [8 + 3 * n, 8 + 10 * n] {
        let h = FrameHeader {
            compressed_len: 100,
            records: n,
            raw_len,
        };
        assert_eq!(FrameHeader::parse(&h.encode(), 0).unwrap(), h);
    }
}
