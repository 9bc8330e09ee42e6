//! The library side of `cachepart sim cachegrind` and
//! `cachepart.sim.cachegrind`: which geometry to simulate (cachegrind's
//! options, a platform's caches, or cachegrind's defaults), the
//! simulation of a binary trace in the simulator's cachegrind-compatible
//! mode ([`CachegrindSim`], or [`ParallelCachegrind`] on several threads),
//! and the nine totals written as cachegrind
//! prints its summary ([`to_table`]) or as one JSON object ([`to_json`]),
//! both from [`crate::output::cachegrind`].

use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

use cachepart_sim::{
    parse_cache_opt, CacheConfig, CachegrindConfig, CachegrindSim, CachegrindSummary,
    ParallelCachegrind,
};
use cachepart_trace::{FrameScratch, Prefetch, Reader, TraceFile};

use crate::error::Error;
pub use crate::output::cachegrind::{to_csv, to_json, to_table, totals, TotalsRow};
use crate::spec::platforms;

/// Parses the value of cachegrind's option `--NAME=VALUE` (`NAME` is `I1`,
/// `D1` or `LL`); the error holds cachegrind's words and names the option.
pub fn parse_option(name: &str, value: &str) -> Result<CacheConfig, Error> {
    parse_cache_opt(value).map_err(|e| Error::Usage(format!("bad option --{name}={value}: {e}")))
}

/// The geometry to simulate: each of I1, D1, LL from its option when
/// given, else from `platform` (a built-in name or a platform file) when
/// given, else cachegrind's defaults
/// ([`CachegrindConfig::cachegrind_default`]). Checked as cachegrind
/// checks its options.
pub fn config(
    platform: Option<&str>,
    i1: Option<CacheConfig>,
    d1: Option<CacheConfig>,
    ll: Option<CacheConfig>,
) -> Result<CachegrindConfig, Error> {
    let base = match platform {
        Some(p) => CachegrindConfig::from_platform(&platforms::resolve(p, None)?),
        None => CachegrindConfig::cachegrind_default(),
    };
    let cfg = CachegrindConfig {
        i1: i1.unwrap_or(base.i1),
        d1: d1.unwrap_or(base.d1),
        ll: ll.unwrap_or(base.ll),
    };
    cfg.check().map_err(|e| match platform {
        Some(p) => Error::Usage(format!("platform {p}: {e}")),
        None => Error::Usage(e.to_string()),
    })?;
    // the simulator's own limits (at most 64 ways)
    CachegrindSim::new(&cfg).map_err(|e| Error::Usage(e.to_string()))?;
    Ok(cfg)
}

/// Checks that the simulation of `cfg` splits over `threads` threads (a
/// power of two no larger than the set-index bits every level shares
/// allow; see [`cachepart_sim::Partition`]).
pub fn check_threads(cfg: &CachegrindConfig, threads: usize) -> Result<(), Error> {
    cachepart_sim::Partition::new(cfg, threads)
        .map(|_| ())
        .map_err(|e| Error::Usage(e.to_string()))
}

/// The most decoding threads [`simulate_trace`] takes.
pub const MAX_DECODERS: usize = 256;

/// Checks a count of decoding threads for [`simulate_trace`]: 1 to
/// [`MAX_DECODERS`].
pub fn check_decoders(decoders: usize) -> Result<(), Error> {
    if (1..=MAX_DECODERS).contains(&decoders) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "the trace is decoded on 1 to {MAX_DECODERS} threads, not {decoders}"
        )))
    }
}

/// The decoding threads [`simulate_trace`] uses by default for `threads`
/// simulating threads on a machine of `cpus` CPUs: twice `threads` where
/// the machine has CPUs for them beside the simulating ones, fewer where
/// it has fewer, and never fewer than `threads`; so one simulating thread
/// gets two decoders from 3 CPUs on, one on a 2-CPU machine. With the
/// sorting into buckets done while decoding (and the fetches that repeat
/// a line folded there), a decoding thread does about twice a simulating
/// thread's work on a real program's trace; on one simulating thread a
/// single decoder bounds the speed (on 16 free cores, `--threads 1`
/// with two decoders ran 1.15x to 1.57x as fast as with one on a real
/// program's trace: docs/sim.md, "On several threads").
pub fn default_decoders(threads: usize, cpus: usize) -> usize {
    let n = threads.max(1);
    cpus.saturating_sub(n).clamp(n, 2 * n)
}

/// Simulates every record of the binary trace at `path` (a `.cpt` file)
/// on empty caches of geometry `cfg`, on `threads` threads (checked as
/// [`check_threads`] does); the totals are the same for any thread count.
///
/// A trace file (not standard input) is decoded on `decoders` threads
/// (default: [`default_decoders`] for this machine; checked as
/// [`check_decoders`] does), frames in parallel: on one simulating
/// thread, the frames come to it whole and in order ([`Prefetch::file`]);
/// on several, each decoding thread puts its frames' records into the
/// simulating threads' buckets as it decodes them. The totals, and the error of a damaged
/// frame, are the same for any count. Standard input, and a file without
/// a readable index on one simulating thread, are decoded on one thread
/// as they stream in.
pub fn simulate_trace(
    path: &Path,
    cfg: &CachegrindConfig,
    threads: usize,
    decoders: Option<usize>,
) -> Result<CachegrindSummary, Error> {
    let input = |e: cachepart_trace::TraceError| Error::trace(path.display(), e);
    let usage = |e: cachepart_sim::SimError| Error::Usage(e.to_string());
    let decoders = decoders.unwrap_or_else(|| default_decoders(threads, cpus()));
    check_decoders(decoders)?;
    let stdin = path == Path::new("-");
    if threads > 1 && !stdin {
        let file = TraceFile::open(path).map_err(input)?;
        return simulate_frames(&file, path, cfg, threads, decoders);
    }
    // One simulating thread with several decoders takes the frames through
    // the index; without a readable index the streaming reader reads the
    // frames up to the damage and names it, as it would on one decoder.
    let indexed = (threads == 1 && decoders > 1 && !stdin)
        .then(|| TraceFile::open(path).ok())
        .flatten();
    // Frames are decompressed and decoded on other threads while this one
    // simulates; a reader's error still comes out with its byte offset.
    let mut ahead = match indexed {
        Some(file) => Prefetch::file(Arc::new(file), decoders),
        None => {
            let file = cachepart_trace::open_stream(path).map_err(|e| Error::Io {
                path: path.to_path_buf(),
                source: e,
            })?;
            Prefetch::reader(Reader::new(BufReader::with_capacity(1 << 20, file)).map_err(input)?)
        }
    }
    .map_err(input)?;
    if threads == 1 {
        let mut sim = CachegrindSim::new(cfg).map_err(usage)?;
        while let Some(chunk) = ahead.take_chunk().map_err(input)? {
            sim.run(chunk.iter().copied());
        }
        return Ok(sim.summary());
    }
    let mut sim = ParallelCachegrind::new(cfg, threads).map_err(usage)?;
    // each chunk is decoded once and shared by the simulating threads
    sim.run(|mut buf| {
        let n = ahead
            .fill(&mut buf, cachepart_sim::cachegrind::CHUNK_RECORDS)
            .map_err(input)?;
        Ok::<_, Error>((n > 0).then_some(buf))
    })?;
    Ok(sim.summary())
}

/// [`simulate_trace`] on several threads for a trace file that can be
/// read frame by frame: `decoders` threads decode the frames (frame `i`
/// on thread `i % decoders`), each record straight into its simulating
/// thread's bucket, while `threads` others simulate them in order.
fn simulate_frames(
    file: &TraceFile,
    path: &Path,
    cfg: &CachegrindConfig,
    threads: usize,
    decoders: usize,
) -> Result<CachegrindSummary, Error> {
    let input = |e: cachepart_trace::TraceError| Error::trace(path.display(), e);
    let mut sim = ParallelCachegrind::new(cfg, threads).map_err(|e| Error::Usage(e.to_string()))?;
    let scatterer = &sim.scatterer();
    let frames = file.frames().len();
    std::thread::scope(|s| {
        let mut decoded = Vec::with_capacity(decoders);
        for first in 0..decoders {
            let (tx, rx) = sync_channel(2);
            decoded.push(rx);
            s.spawn(move || {
                let mut scratch = match FrameScratch::new() {
                    Ok(scratch) => scratch,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                for i in (first..frames).step_by(decoders) {
                    // each record goes into its bucket as it is decoded
                    let mut chunk = scatterer.chunk();
                    let frame = file
                        .decode_frame(i, &mut scratch, &mut chunk)
                        .map(|()| chunk);
                    // the receiver is gone once the simulation has stopped
                    if tx.send(frame).is_err() {
                        return;
                    }
                }
            });
        }
        let mut next = 0;
        let result = sim.run_scattered(|| {
            if next == frames {
                return Ok(None);
            }
            let rx = &decoded[next % decoders];
            next += 1;
            match rx.recv() {
                Ok(frame) => frame.map(Some).map_err(input),
                Err(_) => Err(Error::Usage("a frame decoder stopped".into())),
            }
        });
        drop(decoded);
        result
    })?;
    Ok(sim.summary())
}

/// The CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The geometry as cachegrind's options: `--I1=... --D1=... --LL=...`.
pub fn describe(cfg: &CachegrindConfig) -> String {
    cfg.valgrind_args().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_default_to_twice_the_threads_where_cpus_allow() {
        assert_eq!(default_decoders(1, 1), 1);
        assert_eq!(default_decoders(1, 2), 1); // the other CPU decodes
        assert_eq!(default_decoders(1, 3), 2);
        assert_eq!(default_decoders(1, 64), 2);
        assert_eq!(default_decoders(2, 2), 2); // as many as the threads at least
        assert_eq!(default_decoders(2, 5), 3);
        assert_eq!(default_decoders(2, 16), 4);
        assert_eq!(default_decoders(4, 16), 8);
        assert_eq!(default_decoders(8, 16), 8);
        assert_eq!(default_decoders(16, 16), 16);
    }

    #[test]
    fn geometry_comes_from_options_platform_or_defaults() {
        let d = config(None, None, None, None).unwrap();
        assert_eq!(d, CachegrindConfig::cachegrind_default());
        let ll = parse_option("LL", "2097152,16,64").unwrap();
        let c = config(Some("xeon-e5506"), None, None, Some(ll)).unwrap();
        assert_eq!(c.ll, ll);
        assert_eq!(c.i1.size_bytes, 32768);
        // the Gold 6138's LLC has 40960 sets: cachegrind refuses it
        let e = config(Some("xeon-gold-6138"), None, None, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "platform xeon-gold-6138: bad option --LL=28835840,11,64: Cache set count is not a power of two."
        );
        let e = parse_option("I1", "1000,2,64").unwrap_err().to_string();
        assert_eq!(
            e,
            "bad option --I1=1000,2,64: Cache set count is not a power of two."
        );
        // cachegrind takes 1024 ways; the simulator stops at 64, and
        // its option parser says so
        let e = parse_option("D1", "65536,1024,64").unwrap_err().to_string();
        assert!(e.contains("associativity 1024 is above 64"), "{e}");
    }
}
