//! L2 streamer: detects streams of requests (L1 misses) within a 4 KiB
//! page, ascending or descending, and once a stream is confirmed (two
//! steps in the same direction) prefetches ahead of it into the L2: up to
//! `degree` lines per request, keeping at most `distance` lines ahead of
//! the last request, never past the page. It tracks 32 pages, the least
//! recently used replaced (Intel: "one forward and one backward stream
//! per 4K page, 32 streams").

const STREAMS: usize = 32;
const PAGE_LINES_BITS: u32 = 6; // 64 lines of 64 bytes

/// The most lines the streamer can run ahead of a request, or issue for
/// one: the rest of its page.
pub const MAX_AHEAD: u32 = (1 << PAGE_LINES_BITS) - 1;

#[derive(Clone, Copy, Debug)]
struct Stream {
    page: u64,
    last: u64,
    dir: i64,
    steps: u32,
    /// The next line to prefetch.
    next: u64,
    used: u64,
}

/// Host bytes of one streamer's streams (once all are tracked).
pub(super) const STREAMS_BYTES: usize = STREAMS * std::mem::size_of::<Stream>();

/// The L2 streamer.
#[derive(Clone, Debug)]
pub struct Streamer {
    streams: Vec<Stream>,
    degree: u32,
    distance: u32,
    clock: u64,
}

impl Streamer {
    /// A streamer issuing up to `degree` lines per request, at most
    /// `distance` lines ahead.
    pub fn new(degree: u32, distance: u32) -> Self {
        Streamer {
            streams: Vec::with_capacity(STREAMS),
            degree: degree.max(1),
            distance: distance.max(1),
            clock: 0,
        }
    }

    /// Lines to prefetch after an L2 request for `block`, each handed to
    /// `emit` (no buffer of its own: this runs on every L2 request).
    pub fn on_access(&mut self, block: u64, mut emit: impl FnMut(u64)) {
        self.clock += 1;
        let page = block >> PAGE_LINES_BITS;
        let Some(s) = self.streams.iter_mut().find(|s| s.page == page) else {
            let s = Stream {
                page,
                last: block,
                dir: 0,
                steps: 0,
                next: block,
                used: self.clock,
            };
            if self.streams.len() < STREAMS {
                self.streams.push(s);
            } else if let Some(old) = self.streams.iter_mut().min_by_key(|s| s.used) {
                *old = s;
            }
            return;
        };
        s.used = self.clock;
        let dir = (block as i64 - s.last as i64).signum();
        if dir == 0 {
            return;
        }
        if dir == s.dir {
            s.steps += 1;
        } else {
            s.dir = dir;
            s.steps = 1;
            s.next = block;
        }
        s.last = block;
        if s.steps < 2 {
            return;
        }
        let ahead = |n: u64| -> Option<u64> {
            let b = if dir > 0 {
                n.checked_add(1)?
            } else {
                n.checked_sub(1)?
            };
            (b >> PAGE_LINES_BITS == page).then_some(b)
        };
        // Start just past the request if the stream overtook the prefetches.
        let behind = if dir > 0 {
            s.next <= block
        } else {
            s.next >= block
        };
        if behind {
            s.next = block;
        }
        let limit = self.distance as i64;
        for _ in 0..self.degree {
            let Some(b) = ahead(s.next) else { break };
            if (b as i64 - block as i64).abs() > limit {
                break;
            }
            emit(b);
            s.next = b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ascending_stream_is_prefetched_ahead_within_its_page() {
        let mut p = Streamer::new(2, 8);
        let mut out = Vec::new();
        p.on_access(64, |b| out.push(b));
        p.on_access(65, |b| out.push(b));
        assert!(out.is_empty());
        p.on_access(66, |b| out.push(b));
        assert_eq!(out, vec![67, 68]);
        out.clear();
        p.on_access(67, |b| out.push(b));
        assert_eq!(out, vec![69, 70]);
        // never past the page (lines 64..128)
        out.clear();
        for b in 68..128 {
            p.on_access(b, |b| out.push(b));
        }
        assert!(out.iter().all(|&b| (64..128).contains(&b)), "{out:?}");
        assert!(out.iter().all(|&b| b <= 127));
    }

    #[test]
    fn a_descending_stream_too_and_random_requests_issue_little() {
        let mut p = Streamer::new(2, 8);
        let mut out = Vec::new();
        for b in (200..=210).rev() {
            p.on_access(b, |b| out.push(b));
        }
        assert!(!out.is_empty() && out.iter().all(|&b| b < 210), "{out:?}");
        let mut q = Streamer::new(2, 8);
        let mut out = Vec::new();
        let mut x = 12345u64;
        for _ in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            q.on_access((x >> 20) % (1 << 24), |b| out.push(b));
        }
        assert!(out.len() < 50, "{}", out.len());
    }
}
