//! The scattering of a trace file's frames as they are decoded
//! ([`Scatterer::chunk`] fed by `TraceFile::decode_frame`) against the
//! frames decoded first and scattered after ([`Scatterer::scatter`]), and
//! both against the rule written out plainly.

use cachepart_trace::{FrameScratch, Header, Kind, Record, TraceFile, Writer};
use proptest::prelude::*;

use super::parallel_tests::{geometry, record};
use super::scatter::Scattered;
use super::*;

/// Each bucket's records, split indexes and folded fetches.
type Buckets = Vec<(Vec<Record>, Vec<u32>, u64)>;

fn buckets(s: &Scattered) -> Buckets {
    s.buckets
        .iter()
        .map(|b| (b.records.clone(), b.splits.clone(), b.folded))
        .collect()
}

/// The rule: an escape goes to every bucket; a reference (data clamped to
/// `clamp` bytes) to the bucket of each partition its `2^shift`-byte
/// blocks fall in, its index also to their splits when it spans blocks;
/// but an instruction fetch in one I1 line (`2^ibits` bytes), the line of
/// the last record placed in its bucket, which was a fetch in one I1 line,
/// is only counted there.
fn by_rule(records: &[Record], threads: usize, shift: u32, clamp: u64, ibits: u32) -> Buckets {
    let mut out: Buckets = vec![(Vec::new(), Vec::new(), 0); threads];
    // per bucket: the last record placed, if a fetch in one I1 line
    let mut last_line: Vec<Option<u64>> = vec![None; threads];
    for (idx, r) in records.iter().enumerate() {
        if r.kind() == Kind::Escape {
            for (b, l) in out.iter_mut().zip(&mut last_line) {
                b.0.push(*r);
                *l = None;
            }
            continue;
        }
        let size = match r.kind() {
            Kind::Ifetch => r.size_unchecked(),
            _ => r.size_unchecked().min(clamp),
        };
        let first = r.addr_unchecked() >> shift;
        let last = r.addr_unchecked().wrapping_add(size.max(1) - 1) >> shift;
        let blocks = (last.wrapping_sub(first) & (u64::MAX >> shift)) + 1;
        let mut parts: Vec<usize> = (0..blocks)
            .map(|i| (first.wrapping_add(i) & (threads as u64 - 1)) as usize)
            .collect();
        parts.sort_unstable();
        parts.dedup();
        let (a, end) = (
            r.addr_unchecked(),
            r.addr_unchecked().wrapping_add(size.max(1) - 1),
        );
        let one_iline = r.kind() == Kind::Ifetch && blocks == 1 && a >> ibits == end >> ibits;
        for p in parts {
            if one_iline && last_line[p] == Some(a >> ibits) {
                out[p].2 += 1;
                continue;
            }
            out[p].0.push(*r);
            if blocks > 1 {
                out[p].1.push(idx as u32);
            }
            // data references leave I1 alone; a fetch over two lines, or
            // over blocks, ends the run
            if r.kind() == Kind::Ifetch || blocks > 1 {
                last_line[p] = one_iline.then_some(a >> ibits);
            }
        }
    }
    out
}

fn write(path: &std::path::Path, records: &[Record], frame_records: u32) {
    let header = Header {
        frame_records,
        ..Header::default()
    };
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.extend(records.iter().copied()).unwrap();
    std::fs::write(path, w.finish().unwrap().0).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn frames_scattered_while_decoded_equal_decoded_then_scattered(
        i1 in geometry(),
        d1 in geometry(),
        ll in geometry(),
        records in proptest::collection::vec(record(), 1..2000),
        frame in 1u32..700,
    ) {
        let cfg = CachegrindConfig { i1, d1, ll };
        prop_assume!(CachegrindSim::new(&cfg).is_ok());
        // removed when the case ends, failed or not
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scatter.cpt");
        write(&path, &records, frame);
        let file = TraceFile::open(&path).unwrap();
        let clamp = u64::from(i1.line_bytes.min(d1.line_bytes).min(ll.line_bytes));
        let mut scratch = FrameScratch::new().unwrap();
        for threads in [1, 2, 4] {
            let Ok(sim) = ParallelCachegrind::new(&cfg, threads) else {
                continue;
            };
            let scatterer = sim.scatterer();
            let shift = sim.partition().shift();
            for (i, info) in file.frames().iter().enumerate() {
                let mut chunk = scatterer.chunk();
                file.decode_frame(i, &mut scratch, &mut chunk).unwrap();
                prop_assert_eq!(chunk.len(), info.records as usize);
                let decoded = file.read_frame(i).unwrap();
                let after = scatterer.scatter(&decoded);
                prop_assert_eq!(after.len(), decoded.len());
                let got = buckets(&chunk);
                prop_assert_eq!(&got, &buckets(&after), "{} threads, frame {}", threads, i);
                let ibits = i1.line_bytes.trailing_zeros();
                prop_assert_eq!(&got, &by_rule(&decoded, threads, shift, clamp, ibits));
            }
        }
    }
}
