//! The writer's frame compression workers: full frames are encoded on
//! worker threads while the caller keeps producing records, and come back
//! in submission order, so the file is byte-for-byte the one a single
//! thread writes (each frame is compressed on its own).
//!
//! At most `2 × workers` frames are in flight (each up to
//! [`crate::frame::MAX_FRAME_RECORDS`] records): [`Pool::submit`] blocks on
//! the oldest frame when that many are outstanding, which bounds memory.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{Result, TraceError};
use crate::frame::FrameEncoder;
use crate::record::Record;

/// A frame to compress: its sequence number and records.
type Job = (u64, Vec<Record>);
/// A compressed frame: sequence number, bytes (or the error), the record
/// buffer (returned for reuse) and its record count.
type Done = (u64, Result<Vec<u8>>, Vec<Record>);

/// A compressed frame ready to be written, in order.
pub(crate) struct Ready {
    /// The frame's bytes, header included.
    pub(crate) bytes: Vec<u8>,
    /// Records in it.
    pub(crate) records: u32,
}

/// Worker threads compressing frames.
pub(crate) struct Pool {
    jobs: Option<SyncSender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    max_in_flight: usize,
    next_submit: u64,
    next_out: u64,
    done: BTreeMap<u64, (Vec<u8>, u32)>,
    /// Record buffers back from the workers, for reuse.
    pub(crate) spare: Vec<Vec<Record>>,
}

impl Pool {
    /// Starts `workers` (at least 1) threads compressing at zstd `level`.
    pub(crate) fn new(workers: usize, level: i32) -> Result<Pool> {
        let workers = workers.max(1);
        let max_in_flight = 2 * workers;
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(max_in_flight);
        let (done_tx, results) = mpsc::channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let mut handles = Vec::with_capacity(workers);
        for i in 0..workers {
            // Each worker's encoder is made here, so a bad level is
            // reported before any thread starts.
            let mut enc = FrameEncoder::new(level)?;
            let rx = Arc::clone(&job_rx);
            let tx = done_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("cpt-compress-{i}"))
                .spawn(move || loop {
                    let job = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, recs)) = job else { return };
                    let mut out = Vec::new();
                    let r = enc.encode(&recs, &mut out).map(|()| out);
                    if tx.send((seq, r, recs)).is_err() {
                        return;
                    }
                })
                .map_err(TraceError::Io)?;
            handles.push(h);
        }
        Ok(Pool {
            jobs: Some(jobs),
            results,
            workers: handles,
            max_in_flight,
            next_submit: 0,
            next_out: 0,
            done: BTreeMap::new(),
            spare: Vec::new(),
        })
    }

    fn in_flight(&self) -> usize {
        (self.next_submit - self.next_out) as usize
    }

    /// Hands `records` (1..=MAX_FRAME_RECORDS) to a worker; returns the
    /// frames now ready to be written, in order (blocking for the oldest
    /// when too many are in flight).
    pub(crate) fn submit(&mut self, records: Vec<Record>) -> Result<Vec<Ready>> {
        let mut ready = Vec::new();
        while self.in_flight() >= self.max_in_flight {
            self.wait_next(&mut ready)?;
        }
        let seq = self.next_submit;
        self.next_submit += 1;
        self.jobs
            .as_ref()
            .ok_or_else(|| lost("the pool is closed"))?
            .send((seq, records))
            .map_err(|_| lost("a compression thread stopped"))?;
        // Collect whatever has finished meanwhile, without waiting.
        while let Ok(d) = self.results.try_recv() {
            self.accept(d)?;
        }
        self.drain_ready(&mut ready);
        Ok(ready)
    }

    /// Waits for every frame still in flight; returns them in order.
    pub(crate) fn finish(&mut self) -> Result<Vec<Ready>> {
        let mut ready = Vec::new();
        while self.in_flight() > 0 {
            self.wait_next(&mut ready)?;
        }
        Ok(ready)
    }

    /// Blocks until the oldest outstanding frame is done, then moves every
    /// frame ready in order into `ready`.
    fn wait_next(&mut self, ready: &mut Vec<Ready>) -> Result<()> {
        while !self.done.contains_key(&self.next_out) {
            let d = self
                .results
                .recv()
                .map_err(|_| lost("a compression thread stopped"))?;
            self.accept(d)?;
        }
        self.drain_ready(ready);
        Ok(())
    }

    fn accept(&mut self, (seq, r, mut recs): Done) -> Result<()> {
        let n = recs.len() as u32;
        recs.clear();
        self.spare.push(recs);
        self.done.insert(seq, (r?, n));
        Ok(())
    }

    fn drain_ready(&mut self, ready: &mut Vec<Ready>) {
        while let Some((bytes, records)) = self.done.remove(&self.next_out) {
            ready.push(Ready { bytes, records });
            self.next_out += 1;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the job channel ends the workers' loops.
        self.jobs = None;
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

fn lost(what: &str) -> TraceError {
    TraceError::Io(std::io::Error::other(what.to_string()))
}
