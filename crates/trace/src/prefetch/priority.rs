//! The read-ahead threads' scheduling priority: below the consumer's.
//!
//! A read-ahead thread only has to stay ahead of its consumer; the
//! consumer (a simulating thread) is the one whose time the user waits
//! for. Where threads outnumber free cores (four apps' decoders beside one
//! simulating thread on a 2-core machine), an equal share lets the
//! decoders preempt the simulating thread: on the 2-core CI VM, lowering
//! the decoders' priority made benchmark (b) about 5% faster in wall time
//! (docs/benchmarks.md). When the consumer waits for a chunk it sleeps,
//! so the decoders still run at once; with cores to spare nothing changes.
//! Priorities change no result, only when each thread runs.

/// How much the calling thread's nice value is raised (lower priority);
/// with the consumer at nice 0, a decoder at 10 gets about a tenth of the
/// consumer's share of a core they contend for (Linux CFS weights 1024
/// against 110).
#[cfg(target_os = "linux")]
const NICE: libc::c_int = 10;

/// Lowers the calling thread's priority below its consumer's (Linux: its
/// nice value, which is per thread there; elsewhere nothing). A refusal
/// (a seccomp filter, say) leaves the priority as it was: the records are
/// the same either way, so it is not an error.
pub(crate) fn below_consumer() {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` and `setpriority` take and return plain integers;
    // on Linux `PRIO_PROCESS` with a thread id sets that thread's nice.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, now.saturating_add(NICE).min(19));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_thread_lowers_only_its_own_priority() {
        // SAFETY: as in `below_consumer`.
        let nice = || unsafe {
            libc::getpriority(
                libc::PRIO_PROCESS,
                libc::syscall(libc::SYS_gettid) as libc::id_t,
            )
        };
        let before = nice();
        let inside = std::thread::spawn(move || {
            super::below_consumer();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(inside, (before + super::NICE).min(19));
        assert_eq!(nice(), before, "the spawning thread keeps its priority");
    }
}
