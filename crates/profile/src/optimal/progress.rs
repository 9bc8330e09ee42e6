//! Progress reports and the time limit of a search.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How far a search is, in units of work (subproblems), for a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Units finished.
    pub done: u64,
    /// Units in all (may grow while the search runs).
    pub total: u64,
}

/// Shared clock, node counter and progress reporter of one solve.
pub(crate) struct Budget<'a> {
    start: Instant,
    limit: Option<Duration>,
    callback: Option<&'a (dyn Fn(Progress) + Sync)>,
    expired: AtomicBool,
    /// Nodes explored (any kind: tree nodes, clusterings, compositions).
    pub nodes: AtomicU64,
    done: AtomicU64,
    total: AtomicU64,
    last: Mutex<Instant>,
}

/// Minimum time between two progress reports.
const REPORT_EVERY: Duration = Duration::from_millis(100);

impl<'a> Budget<'a> {
    pub fn new(
        limit: Option<Duration>,
        callback: Option<&'a (dyn Fn(Progress) + Sync)>,
    ) -> Budget<'a> {
        let start = Instant::now();
        Budget {
            start,
            limit,
            callback,
            expired: AtomicBool::new(false),
            nodes: AtomicU64::new(0),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            last: Mutex::new(start),
        }
    }

    /// True once the time limit has passed (checks the clock).
    pub fn expired(&self) -> bool {
        if self.expired.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(l) = self.limit {
            if self.start.elapsed() >= l {
                self.expired.store(true, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// True if the limit was reached (does not check the clock).
    pub fn was_expired(&self) -> bool {
        self.expired.load(Ordering::Relaxed)
    }

    /// Seconds since the start.
    pub fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Counts explored nodes.
    #[inline]
    pub fn add_nodes(&self, k: u64) {
        self.nodes.fetch_add(k, Ordering::Relaxed);
    }

    /// Adds units of work to do.
    pub fn add_total(&self, k: u64) {
        self.total.fetch_add(k, Ordering::Relaxed);
        self.report(false);
    }

    /// Marks units of work done and reports, at most every 100 ms.
    pub fn add_done(&self, k: u64) {
        self.done.fetch_add(k, Ordering::Relaxed);
        self.report(false);
    }

    /// Reports now if a callback is set (`force`) or if enough time passed.
    pub fn report(&self, force: bool) {
        let Some(cb) = self.callback else { return };
        if !force {
            let Ok(mut last) = self.last.try_lock() else {
                return;
            };
            if last.elapsed() < REPORT_EVERY {
                return;
            }
            *last = Instant::now();
        }
        cb(Progress {
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
        });
    }
}
