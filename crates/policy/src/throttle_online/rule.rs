//! The duty-cycle rule of `throttle-online`, on one decision's numbers:
//! each app's normalised performance and duty cycle in, at most one step
//! of one app's duty cycle out.

use cachepart_machine::MixMetrics;

/// One step of one app's duty cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Raise app `.0`'s duty cycle by one step (it is throttled and now
    /// the slowest).
    Up(usize),
    /// Lower app `.0`'s duty cycle by one step (it is the most favoured).
    Down(usize),
}

impl Step {
    /// The app stepped.
    pub fn app(self) -> usize {
        match self {
            Step::Up(a) | Step::Down(a) => a,
        }
    }
}

/// Zhang et al.'s unfairness factor (the coefficient of variation of
/// normalised performance) of the apps that ran, [`MixMetrics`]'s
/// definition; `None` with fewer than two.
pub fn unfairness(normalised: &[Option<f64>]) -> Option<f64> {
    let slowdowns: Vec<f64> = normalised.iter().flatten().map(|p| 1.0 / p).collect();
    (slowdowns.len() >= 2)
        .then(|| MixMetrics::compute(&slowdowns, &vec![1.0; slowdowns.len()]).unfairness_factor)
}

/// The step the rule takes, if any.
///
/// `normalised[i]` is app `i`'s IPC over its IPC alone in the decision
/// window (`None`: it did not run, so it is not judged), `on[i]` its
/// duty cycle's running steps (`steps` is full speed), `min_on` the lowest
/// the controller may go. Nothing is done with fewer than two running
/// apps or when the unfairness factor `uf` is at most `target`. Otherwise,
/// of the running apps, the slowest `s` and the most favoured `f` (highest
/// normalised performance; ties go to the lower index):
/// - `s` throttled: step `s` up (it is the one the throttling hurts now);
/// - else `f` above `min_on`: step `f` down;
/// - else nothing (`f` is at the floor).
///
/// An app at full speed is never stepped down while it is the slowest:
/// only the most favoured app is, and it is not the slowest.
pub fn duty_step(
    normalised: &[Option<f64>],
    on: &[u32],
    steps: u32,
    min_on: u32,
    uf: f64,
    target: f64,
) -> Option<Step> {
    if uf <= target {
        return None;
    }
    let running: Vec<(usize, f64)> = normalised
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p)))
        .collect();
    if running.len() < 2 {
        return None;
    }
    let mut slowest = running[0];
    let mut fastest = running[0];
    for &(i, p) in &running[1..] {
        if p < slowest.1 {
            slowest = (i, p);
        }
        if p > fastest.1 {
            fastest = (i, p);
        }
    }
    if fastest.1 <= slowest.1 {
        return None;
    }
    if on[slowest.0] < steps {
        return Some(Step::Up(slowest.0));
    }
    (on[fastest.0] > min_on).then_some(Step::Down(fastest.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_favoured_app_is_stepped_down() {
        // app 1 runs at 0.95 of its speed alone, app 0 at 0.4: app 1 down
        let np = [Some(0.4), Some(0.95), Some(0.7)];
        let uf = unfairness(&np).unwrap();
        assert!(uf > 0.3, "{uf}");
        assert_eq!(
            duty_step(&np, &[8, 8, 8], 8, 1, uf, 0.05),
            Some(Step::Down(1))
        );
        // already throttled to 5/8, still the most favoured: down again
        assert_eq!(
            duty_step(&np, &[8, 5, 8], 8, 1, uf, 0.05),
            Some(Step::Down(1))
        );
    }

    #[test]
    fn a_throttled_app_that_is_now_the_slowest_is_stepped_up_first() {
        // app 1 was throttled to 3/8 and overshot: it is now the slowest
        let np = [Some(0.8), Some(0.5), Some(0.9)];
        let uf = unfairness(&np).unwrap();
        assert_eq!(
            duty_step(&np, &[8, 3, 8], 8, 1, uf, 0.05),
            Some(Step::Up(1))
        );
        // the slowest at full speed is never throttled: the fastest is
        assert_eq!(
            duty_step(&np, &[8, 8, 8], 8, 1, uf, 0.05),
            Some(Step::Down(2))
        );
    }

    #[test]
    fn nothing_below_the_target_at_the_floor_or_alone() {
        let np = [Some(0.5), Some(0.9)];
        let uf = unfairness(&np).unwrap();
        assert_eq!(duty_step(&np, &[8, 8], 8, 1, uf, uf), None);
        assert_eq!(duty_step(&np, &[8, 2], 8, 2, uf, 0.05), None);
        assert_eq!(duty_step(&np, &[16, 3], 16, 3, uf, 0.05), None);
        assert_eq!(
            duty_step(&np, &[16, 3], 16, 2, uf, 0.05),
            Some(Step::Down(1))
        );
        // an app that did not run is not judged, and one app is no mix
        let one = [None, Some(0.9)];
        assert_eq!(unfairness(&one), None);
        assert_eq!(duty_step(&one, &[8, 8], 8, 1, 1.0, 0.05), None);
        // equal apps: no step whatever the target
        let same = [Some(0.6), Some(0.6)];
        assert_eq!(unfairness(&same), Some(0.0));
        assert_eq!(duty_step(&same, &[8, 8], 8, 1, 1.0, 0.05), None);
    }

    #[test]
    fn unfairness_is_zhang_s_factor() {
        // normalised 1, 1, 0.25: mean 0.75, deviation sqrt(0.125)
        let uf = unfairness(&[Some(1.0), None, Some(1.0), Some(0.25)]).unwrap();
        assert!((uf - 0.125_f64.sqrt() / 0.75).abs() < 1e-12);
    }
}
