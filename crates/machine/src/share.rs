//! How apps that share ways split them: the proportional-to-miss-rate estimate.
//!
//! This is the sharing model of PBBCache (and of Whirlpool): the ways of a
//! shared partition are handed out one at a time, and each new way is split
//! among the sharers in proportion to their current miss rates, read off
//! their alone curves at the (fractional) size each holds so far. The first
//! way is split according to the curves' values at one way.
//!
//! Per-app metrics of an app holding a fractional size `f` are then read off
//! its alone table by linear interpolation ([`interpolate`]).

/// Reads curve `c` at 0-based fractional position `x` (so `x = 0` is the
/// value at one way), as the split step does: linear between neighbouring
/// entries, clamped to the last entry.
#[inline]
pub fn read_at_position(c: &[f64], x: f64) -> f64 {
    let n = c.len();
    let q = x.floor() as usize;
    let r = x - q as f64;
    if q >= n {
        return c[n - 1];
    }
    if r == 0.0 || q + 1 >= n {
        return c[q];
    }
    (1.0 - r) * c[q] + r * c[q + 1]
}

/// Fractional ways each sharer holds, for every partition size.
///
/// `curves[i]` is sharer `i`'s miss-rate curve (index `w - 1` = value at `w`
/// ways). Returns `frac` with `frac[(w - 1) * n + i]` = ways app `i` holds
/// when the `n` sharers share `w` ways, for `w = 1..=max_ways`. The values
/// of one `w` sum to `w`. When every sharer's miss rate is zero the way is
/// split equally (PBBCache would divide by zero here).
pub fn split_ways(curves: &[&[f64]], max_ways: usize, frac: &mut Vec<f64>) {
    let n = curves.len();
    frac.clear();
    frac.resize(max_ways * n, 0.0);
    let mut idx = [0.0f64; 64];
    let mut heap_idx;
    let idx: &mut [f64] = if n <= 64 {
        &mut idx[..n]
    } else {
        heap_idx = vec![0.0; n];
        &mut heap_idx
    };
    let mut v = vec![0.0f64; n];
    for w in 0..max_ways {
        let mut sum = 0.0;
        for i in 0..n {
            v[i] = read_at_position(curves[i], idx[i]);
            sum += v[i];
        }
        for i in 0..n {
            idx[i] += if sum > 0.0 {
                v[i] / sum
            } else {
                1.0 / n as f64
            };
            frac[w * n + i] = idx[i];
        }
    }
}

/// Value of a per-way table `m` (index `w - 1` = value at `w` ways) at a
/// fractional size `f` ways: linear between the neighbouring way counts;
/// below one way, between an extrapolated `P0 = 2 m(1) - m(2)` (clamped to
/// 1e-6 when not positive) and `m(1)`.
#[inline]
pub fn interpolate(m: &[f64], f: f64) -> f64 {
    interpolate_with_floor(m, f, 1e-6)
}

/// [`interpolate`] with the extrapolated `P0` clamped to `floor` instead of
/// 1e-6 when not positive. A count that may be zero (stall cycles) uses a
/// floor of 0, so that a column of zeros reads 0 at every size: with the
/// 1e-6 floor, an app with no stall cycles at all would look, below one
/// way, as if every cycle it has were a memory stall.
#[inline]
pub fn interpolate_with_floor(m: &[f64], f: f64, floor: f64) -> f64 {
    let q = f.floor();
    let r = f - q;
    let qi = q as usize;
    if qi == 0 {
        let m1 = m[0];
        let mut p0 = if m.len() > 1 { 2.0 * m1 - m[1] } else { m1 };
        if p0 <= 0.0 {
            p0 = floor;
        }
        return (1.0 - r) * p0 + r * m1;
    }
    if qi >= m.len() || r == 0.0 {
        return m[qi.min(m.len()) - 1];
    }
    (1.0 - r) * m[qi - 1] + r * m[qi]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_curves_split_equally() {
        let c = [4.0, 3.0, 2.0, 1.0];
        let mut frac = Vec::new();
        split_ways(&[&c, &c], 4, &mut frac);
        for w in 0..4 {
            assert!((frac[w * 2] - (w + 1) as f64 / 2.0).abs() < 1e-12);
        }
    }

    #[test]
    fn interpolation_points() {
        let m = [2.0, 3.0, 5.0];
        assert_eq!(interpolate(&m, 1.0), 2.0);
        assert_eq!(interpolate(&m, 3.0), 5.0);
        assert!((interpolate(&m, 1.5) - 2.5).abs() < 1e-12);
        // below one way: P0 = 2*2 - 3 = 1
        assert!((interpolate(&m, 0.5) - 1.5).abs() < 1e-12);
        let falling = [1.0, 5.0];
        // P0 = -3 -> 1e-6
        assert!((interpolate(&falling, 0.0) - 1e-6).abs() < 1e-15);
        // with a floor of 0, zeros stay zeros below one way
        assert_eq!(interpolate_with_floor(&[0.0, 0.0, 0.0], 0.4, 0.0), 0.0);
        assert!(interpolate(&[0.0, 0.0, 0.0], 0.4) > 0.0);
        assert!((interpolate_with_floor(&falling, 0.5, 0.0) - 0.5).abs() < 1e-15);
    }

    proptest! {
        #[test]
        fn split_sums_to_ways(curves in proptest::collection::vec(
            proptest::collection::vec(0.0f64..50.0, 11), 1..8)) {
            let refs: Vec<&[f64]> = curves.iter().map(|c| c.as_slice()).collect();
            let mut frac = Vec::new();
            split_ways(&refs, 11, &mut frac);
            let n = refs.len();
            for w in 0..11 {
                let s: f64 = frac[w * n..(w + 1) * n].iter().sum();
                prop_assert!((s - (w + 1) as f64).abs() < 1e-9);
            }
        }
    }
}
