//! Curve builders for hand-written cases, and proptest strategies of
//! random apps and mixes.

use cachepart_machine::AppCurves;
use proptest::prelude::*;

/// Curves whose only interesting column is the bandwidth.
pub fn curves_from_bw(name: &str, bw: &[f64]) -> AppCurves {
    let w = bw.len();
    AppCurves::new(name, vec![1.0; w], vec![1.0; w], vec![1.0; w], bw.to_vec())
}

/// Curves from IPC and MPKC (MPKI = MPKC / IPC, bandwidth = 64 B x MPKC).
pub fn curves_from_ipc(name: &str, ipc: &[f64], mpkc: &[f64]) -> AppCurves {
    let mpki = ipc.iter().zip(mpkc).map(|(i, m)| m / i).collect();
    let bw = mpkc.iter().map(|m| m * 64.0).collect();
    AppCurves::new(name, ipc.to_vec(), mpki, mpkc.to_vec(), bw)
}

/// One random app over `ways` ways: IPC rising with noise, MPKC falling,
/// stall fractions in `[0, 1)`.
fn random_app(ways: usize) -> impl Strategy<Value = AppCurves> {
    (
        0.2f64..3.0,
        proptest::collection::vec(-0.2f64..0.6, ways),
        0.0f64..40.0,
        proptest::collection::vec(0.3f64..1.05, ways),
        0.0f64..0.9,
    )
        .prop_map(move |(ipc0, dipc, mpkc0, decay, stall)| {
            let mut ipc = Vec::with_capacity(ways);
            let mut mpkc = Vec::with_capacity(ways);
            let (mut i, mut m) = (ipc0, mpkc0);
            for w in 0..ways {
                i = (i + dipc[w] * 0.1).max(0.05);
                m *= decay[w].min(1.0);
                ipc.push(i);
                mpkc.push(m);
            }
            let mut c = curves_from_ipc("app", &ipc, &mpkc);
            c.stalls_l2_miss = Some(vec![stall; ways]);
            c
        })
}

/// Random mixes of `min..=max` apps over 2..=16 ways.
pub fn random_curves(min: usize, max: usize) -> impl Strategy<Value = (Vec<AppCurves>, usize)> {
    (2usize..=16).prop_flat_map(move |ways| {
        (
            proptest::collection::vec(random_app(ways), min..=max),
            Just(ways),
        )
    })
}
