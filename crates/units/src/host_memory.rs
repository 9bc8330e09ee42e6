//! What a run may allocate: a planned allocation checked against the
//! host's physical memory before it is made.
//!
//! Tables sized by user input (per-set LRU stacks of a curve, the frame
//! arrays of a simulated memory) are checked with [`check_allocation`]
//! before they are allocated, so that a size within the documented limits
//! but beyond the machine is refused with an error saying how much and
//! why, instead of aborting in the allocator or being killed by the
//! kernel's out-of-memory handler.

use thiserror::Error;

/// A planned allocation larger than the host's memory (or than `u64`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{what} would need {} ({why}), more than {}", bytes_text(*.bytes), limit_text(*.limit))]
pub struct TooLarge {
    /// What would be allocated (`the per-set LRU stacks`).
    pub what: String,
    /// How the size comes about (`4294967296 sets x 1024 ways x 8 B`).
    pub why: String,
    /// Bytes needed (`u128` so that an overflowing product is reported as
    /// is).
    pub bytes: u128,
    /// The host's physical memory in bytes (`None`: the planned size
    /// does not fit in a `u64`, whatever the host).
    pub limit: Option<u64>,
}

fn limit_text(limit: Option<u64>) -> String {
    match limit {
        Some(l) => format!("this machine's {} of memory", bytes_text(u128::from(l))),
        None => "2^64 bytes".to_string(),
    }
}

/// Bytes in the largest binary unit that leaves at least 1 (one decimal).
pub fn bytes_text(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The host's physical memory in bytes, when the platform says.
pub fn host_memory_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a system constant; it has no preconditions.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return (pages as u64).checked_mul(page as u64);
        }
    }
    None
}

/// Checks that `bytes` (of `what`, sized as `why` says) fits in the host's
/// physical memory (and in a `u64`); where the host's memory is unknown
/// only the `u64` bound applies.
pub fn check_allocation(what: &str, why: &str, bytes: u128) -> Result<(), TooLarge> {
    check_allocation_within(what, why, bytes, host_memory_bytes())
}

/// [`check_allocation`] against a given memory size (`None`: unknown).
pub fn check_allocation_within(
    what: &str,
    why: &str,
    bytes: u128,
    memory: Option<u64>,
) -> Result<(), TooLarge> {
    let err = |limit| TooLarge {
        what: what.to_string(),
        why: why.to_string(),
        bytes,
        limit,
    };
    if bytes > u128::from(u64::MAX) {
        return Err(err(None));
    }
    match memory {
        Some(m) if bytes > u128::from(m) => Err(err(Some(m))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_exceeds_memory_and_says_how_much() {
        let e = check_allocation_within("the stacks", "4 x 8 B", 32 << 40, Some(24 << 30))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the stacks would need 32.0 TiB (4 x 8 B), more than this machine's 24.0 GiB of memory"
        );
        assert!(check_allocation_within("x", "y", 1 << 20, Some(1 << 30)).is_ok());
        assert!(check_allocation_within("x", "y", 1 << 40, None).is_ok());
        let e = check_allocation_within("x", "y", 1 << 70, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("1.0 ZiB") || e.contains("1024.0 EiB"), "{e}");
        assert!(e.contains("2^64"), "{e}");
    }

    #[test]
    fn the_host_has_memory() {
        #[cfg(unix)]
        assert!(host_memory_bytes().is_some_and(|m| m >= 1 << 20));
    }

    #[test]
    fn bytes_text_picks_a_unit() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(1536), "1.5 KiB");
        assert_eq!(bytes_text(16 << 40), "16.0 TiB");
    }
}
