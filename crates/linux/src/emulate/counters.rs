//! The monitoring counters an emulated mount serves
//! (`mon_data/mon_L3_NN/{llc_occupancy,mbm_total_bytes,mbm_local_bytes}`):
//! a deterministic function of the time since the group's RMID was
//! allocated, the RMID and the domain, so that readings move the way
//! real ones do and tests can predict them.
//!
//! * `mbm_total_bytes` grows at `(64 + 32 * ((7 * rmid + 3 * domain) mod 8))`
//!   MiB/s from the group's creation (64 to 288 MiB/s);
//! * `mbm_local_bytes` is three quarters of it;
//! * `llc_occupancy` cycles every 8 seconds through 4/12 .. 11/12 of the
//!   cache the group may fill on that domain (its mask's ways), in whole
//!   64-byte lines.

use std::time::Duration;

/// The events of `info/L3_MON/mon_features`, in the kernel's order.
pub const EVENTS: [&str; 3] = ["llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"];

/// Bytes per second of memory traffic of `rmid` on domain `domain`.
pub fn rate(rmid: u32, domain: u32) -> u64 {
    (64 + 32 * u64::from((7 * rmid + 3 * domain) % 8)) << 20
}

/// The value of `event` for `rmid` on `domain`, `age` after the RMID was
/// allocated; `mask_bytes` is the cache the group may fill there.
pub fn value(event: &str, rmid: u32, domain: u32, age: Duration, mask_bytes: u64) -> u64 {
    let total = (u128::from(rate(rmid, domain)) * age.as_nanos() / 1_000_000_000) as u64;
    match event {
        "mbm_total_bytes" => total,
        "mbm_local_bytes" => total / 4 * 3,
        _ => {
            let phase = (age.as_secs() + u64::from(rmid)) % 8;
            mask_bytes / 12 * (4 + phase) / 64 * 64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_move_with_time() {
        let s = Duration::from_secs(1);
        assert_eq!(value("mbm_total_bytes", 1, 0, s, 0), rate(1, 0));
        assert_eq!(rate(1, 0), (64 + 32 * 7) << 20);
        assert!(value("mbm_total_bytes", 1, 0, 2 * s, 0) > value("mbm_total_bytes", 1, 0, s, 0));
        assert_eq!(value("mbm_local_bytes", 1, 0, s, 0), rate(1, 0) / 4 * 3);
        let occ = value("llc_occupancy", 0, 0, Duration::ZERO, 12 * 64 * 100);
        assert_eq!(occ, 4 * 64 * 100);
        assert_ne!(occ, value("llc_occupancy", 0, 0, s, 12 * 64 * 100));
    }
}
