//! Zipf-distributed ranks in 1..=n by rejection-inversion (Hörmann and
//! Derflinger, 1996): constant time and memory whatever n is.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A zipf law over ranks 1..=n with exponent s: P(k) proportional to k^-s.
pub(super) struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    pub(super) fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(z.n + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// The density x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// A primitive of `h`, continuous in s (ln x at s = 1).
    fn big_h(&self, x: f64) -> f64 {
        let t = 1.0 - self.s;
        let lx = x.ln();
        if t.abs() < 1e-9 {
            lx
        } else {
            ((t * lx).exp() - 1.0) / t
        }
    }

    fn big_h_inv(&self, y: f64) -> f64 {
        let t = 1.0 - self.s;
        if t.abs() < 1e-9 {
            y.exp()
        } else {
            (1.0 + t * y).max(f64::MIN_POSITIVE).powf(1.0 / t)
        }
    }

    /// A rank in 1..=n.
    pub(super) fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        loop {
            let u = self.h_n + rng.gen::<f64>() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = x.round().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn ranks_follow_the_law() {
        let z = Zipf::new(100, 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut hist = [0u32; 101];
        let draws = 200_000;
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=100).contains(&k));
            hist[k as usize] += 1;
        }
        // P(1) / P(2) = 2 for s = 1; H_100 ~ 5.187 so P(1) ~ 0.193.
        let p1 = f64::from(hist[1]) / f64::from(draws);
        assert!((p1 - 0.193).abs() < 0.01, "p1 = {p1}");
        let ratio = f64::from(hist[1]) / f64::from(hist[2]);
        assert!((ratio - 2.0).abs() < 0.15, "ratio = {ratio}");
    }
}
