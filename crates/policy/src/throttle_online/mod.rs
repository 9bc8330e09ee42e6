//! `throttle-online`: Zhang et al.'s execution throttling ("Hardware
//! Execution Throttling for Multi-core Resource Management", USENIX
//! ATC'09) as a controller that acts while the mix runs.
//!
//! At start it reads each app's IPC alone with the whole LLC: given by the
//! caller, or the last point of the machine's alone curves over ways.
//!
//! It decides after every interval once `decision_intervals` intervals
//! have passed since its last change, on the samples since that change
//! (at most the last `max_window_intervals`): a setting that stays is
//! judged on more and more of the run, so that short-term noise (two
//! identical apps take turns being ahead) does not look like unfairness,
//! and a phase change still shows within `max_window_intervals`.
//!
//! At each decision it computes each running app's normalised
//! performance (IPC over those intervals over IPC alone) and their
//! unfairness factor (the coefficient of variation of normalised
//! performance, [`cachepart_machine::MixMetrics`]), and takes at most one
//! step:
//!
//! 1. A prefetcher trial of the previous decision is judged: kept if the
//!    unfairness factor dropped, reverted otherwise.
//! 2. Otherwise, above the target: in hybrid mode, the slowest app, if it
//!    runs at full speed with prefetchers it kept off, gets the last of
//!    them back; else the duty rule ([`rule::duty_step`]):
//!    a throttled app that is now the slowest goes up one step, else the
//!    most favoured app goes down one step, never below `min_duty`.
//!    Hysteresis: the factor measured under every setting visited is
//!    remembered for `hysteresis_windows` decisions, and the rule never
//!    moves to a setting where it was measured, that recently, at or
//!    above the factor measured now.
//! 3. Otherwise (the duty cycles have settled), in hybrid mode and above
//!    the target: one prefetcher of the most favoured app is turned off,
//!    one not tried on that app before; step 1 judges it at the next
//!    decision.
//!
//! Every step is one [`Action::Throttle`] and one [`ThrottleDecision`] in
//! the log. A machine without throttling refuses the first action, and
//! the run stops with its error.

mod log;
mod params;
pub mod rule;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};

use cachepart_machine::{Action, AppThrottle, Duty, Interval, Machine};

use crate::controller::Controller;
use crate::error::PolicyError;
pub use log::{ThrottleDecision, ThrottleMove};
pub use params::{PrefetchKnobs, ThrottleOnlineParams};
use rule::{duty_step, unfairness, Step};

/// A prefetcher turned off on trial.
#[derive(Clone, Copy, Debug)]
struct Trial {
    app: usize,
    old_word: u64,
    uf_before: f64,
}

/// The controller (see the module docs).
pub struct ThrottleOnline {
    params: ThrottleOnlineParams,
    alone_ipc: Vec<f64>,
    /// Per app: running steps of its duty cycle.
    on: Vec<u32>,
    /// Per app: its prefetcher word (hybrid mode).
    words: Vec<u64>,
    /// Per app: the prefetcher bits tried on it.
    tried: Vec<u64>,
    /// Per interval since the last change (at most the last
    /// `max_window_intervals`), per app: instructions and cycles.
    recent: VecDeque<Vec<(f64, f64)>>,
    /// The unfairness factor last measured under each setting (duty
    /// cycles, then words), and the decision that measured it.
    seen: BTreeMap<Vec<u64>, (f64, u64)>,
    /// Decisions so far.
    windows: u64,
    trial: Option<Trial>,
    decisions: Vec<ThrottleDecision>,
}

impl ThrottleOnline {
    /// The controller for `n_apps` apps, once its parameters pass
    /// [`ThrottleOnlineParams::check`].
    pub fn new(params: ThrottleOnlineParams, n_apps: usize) -> Result<ThrottleOnline, PolicyError> {
        params.check(n_apps)?;
        let word = params.prefetchers.as_ref().map_or(0, |k| k.word);
        Ok(ThrottleOnline {
            on: vec![params.steps; n_apps],
            words: vec![word; n_apps],
            tried: vec![0; n_apps],
            recent: VecDeque::new(),
            params,
            alone_ipc: Vec::new(),
            seen: BTreeMap::new(),
            windows: 0,
            trial: None,
            decisions: Vec::new(),
        })
    }

    /// Every decision that acted, in order.
    pub fn decisions(&self) -> &[ThrottleDecision] {
        &self.decisions
    }

    /// The IPC alone each app is normalised by (known once started).
    pub fn alone_ipc(&self) -> &[f64] {
        &self.alone_ipc
    }

    fn duty(&self, app: usize) -> Duty {
        Duty::new(self.on[app], self.params.steps).expect("kept within 1..=steps")
    }

    fn hybrid(&self) -> bool {
        self.params.prefetchers.is_some()
    }

    /// The setting as a key of `seen`.
    fn key(&self, on: &[u32], words: &[u64]) -> Vec<u64> {
        on.iter()
            .map(|&o| u64::from(o))
            .chain(words.iter().copied().filter(|_| self.hybrid()))
            .collect()
    }

    fn record(
        &mut self,
        iv: &Interval,
        normalised: &[Option<f64>],
        uf: f64,
        action: ThrottleMove,
        app: usize,
    ) {
        self.decisions.push(ThrottleDecision {
            interval: iv.index,
            at_cycles: iv.end_cycles,
            normalised: normalised.to_vec(),
            unfairness_factor: uf,
            action,
            app,
            duty: self.duty(app),
            prefetchers: self.hybrid().then(|| self.words[app]),
        });
    }

    fn word_action(&self, app: usize) -> Action {
        Action::Throttle(AppThrottle {
            app,
            duty: None,
            prefetchers: Some(self.words[app]),
        })
    }

    /// The normalised performances over the intervals since the last
    /// change.
    fn normalised(&self) -> Vec<Option<f64>> {
        let mut sum = vec![(0.0, 0.0); self.alone_ipc.len()];
        for iv in &self.recent {
            for (s, x) in sum.iter_mut().zip(iv) {
                s.0 += x.0;
                s.1 += x.1;
            }
        }
        sum.iter()
            .zip(&self.alone_ipc)
            .map(|(&(instr, cycles), &alone)| {
                (instr > 0.0 && cycles > 0.0).then(|| instr / cycles / alone)
            })
            .collect()
    }

    /// Step 2: the duty rule, unless the setting it leads to was measured
    /// no fairer than now.
    fn duty_move(&mut self, np: &[Option<f64>], uf: f64) -> Option<(Step, Action)> {
        let p = &self.params;
        let step = duty_step(np, &self.on, p.steps, p.min_duty.on(), uf, p.target)?;
        let mut on = self.on.clone();
        match step {
            Step::Up(a) => on[a] += 1,
            Step::Down(a) => on[a] -= 1,
        }
        let key = self.key(&on, &self.words);
        let recent = u64::from(p.hysteresis_windows);
        if self
            .seen
            .get(&key)
            .is_some_and(|&(then, at)| self.windows - at < recent && then >= uf)
        {
            return None;
        }
        self.on = on;
        let a = step.app();
        Some((step, Action::Throttle(AppThrottle::duty(a, self.duty(a)))))
    }

    /// Step 2, first: the slowest app at full speed with prefetchers it
    /// kept off gets the last of them back, unless that setting was
    /// recently measured no fairer than now.
    fn prefetcher_restore(&mut self, np: &[Option<f64>], uf: f64) -> Option<usize> {
        let knobs = self.params.prefetchers.as_ref()?;
        if uf <= self.params.target {
            return None;
        }
        let mut slowest: Option<(usize, f64)> = None;
        for (i, p) in np.iter().enumerate() {
            if let Some(p) = *p {
                if slowest.is_none_or(|(_, low)| p < low) {
                    slowest = Some((i, p));
                }
            }
        }
        let (app, _) = slowest?;
        if self.on[app] < self.params.steps {
            return None;
        }
        let bit = knobs
            .bits
            .iter()
            .rev()
            .map(|(_, b)| *b)
            .find(|b| self.words[app] & b != 0 && knobs.word & b == 0)?;
        let mut words = self.words.clone();
        words[app] &= !bit;
        let key = self.key(&self.on, &words);
        let recent = u64::from(self.params.hysteresis_windows);
        if self
            .seen
            .get(&key)
            .is_some_and(|&(then, at)| self.windows - at < recent && then >= uf)
        {
            return None;
        }
        self.words = words;
        Some(app)
    }

    /// Step 3: the next prefetcher of the most favoured app to try off.
    fn prefetcher_trial(&mut self, np: &[Option<f64>], uf: f64) -> Option<usize> {
        let knobs = self.params.prefetchers.as_ref()?;
        if uf <= self.params.target {
            return None;
        }
        let mut fav: Option<(usize, f64)> = None;
        for (i, p) in np.iter().enumerate() {
            if let Some(p) = *p {
                if fav.is_none_or(|(_, best)| p > best) {
                    fav = Some((i, p));
                }
            }
        }
        let (app, _) = fav?;
        let bit = knobs
            .bits
            .iter()
            .map(|(_, b)| *b)
            .find(|b| self.words[app] & b == 0 && self.tried[app] & b == 0)?;
        self.tried[app] |= bit;
        self.trial = Some(Trial {
            app,
            old_word: self.words[app],
            uf_before: uf,
        });
        self.words[app] |= bit;
        Some(app)
    }
}

impl Controller for ThrottleOnline {
    fn name(&self) -> &str {
        "throttle-online"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        if let Some(given) = &self.params.alone_ipc {
            self.alone_ipc = given.clone();
            return Ok(Vec::new());
        }
        let curves = machine.alone_curves()?;
        if curves.len() != self.on.len() {
            return Err(PolicyError::MissingData {
                policy: "throttle-online".into(),
                what: format!(
                    "alone curves of its {} apps; the machine gave {}",
                    self.on.len(),
                    curves.len()
                ),
            });
        }
        let mut alone = Vec::with_capacity(curves.len());
        for c in curves {
            match c.ipc.last() {
                Some(&ipc) if ipc.is_finite() && ipc > 0.0 => alone.push(ipc),
                other => {
                    return Err(PolicyError::MissingData {
                        policy: "throttle-online".into(),
                        what: format!(
                            "each app's IPC alone with the whole LLC; {}'s is {other:?}",
                            c.name
                        ),
                    })
                }
            }
        }
        self.alone_ipc = alone;
        Ok(Vec::new())
    }

    fn on_interval(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        let mut now = vec![(0.0, 0.0); self.alone_ipc.len()];
        for s in iv.samples.iter().filter(|s| s.ran) {
            if let Some(a) = now.get_mut(s.app) {
                *a = (s.instructions, s.cycles);
            }
        }
        self.recent.push_back(now);
        while self.recent.len() > self.params.max_window_intervals as usize {
            self.recent.pop_front();
        }
        if self.recent.len() < self.params.decision_intervals as usize {
            return Ok(Vec::new());
        }
        let actions = self.decide(iv);
        if actions.as_ref().is_ok_and(|a| !a.is_empty()) {
            self.recent.clear();
        }
        actions
    }
}

impl ThrottleOnline {
    /// One decision (see the module docs).
    fn decide(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        let np = self.normalised();
        let Some(uf) = unfairness(&np) else {
            return Ok(Vec::new());
        };
        self.windows += 1;
        self.seen
            .insert(self.key(&self.on, &self.words), (uf, self.windows));
        if let Some(t) = self.trial.take() {
            let kept = uf < t.uf_before;
            if !kept {
                self.words[t.app] = t.old_word;
            }
            let m = if kept {
                ThrottleMove::Keep
            } else {
                ThrottleMove::Revert
            };
            self.record(iv, &np, uf, m, t.app);
            return Ok(if kept {
                Vec::new()
            } else {
                vec![self.word_action(t.app)]
            });
        }
        if let Some(app) = self.prefetcher_restore(&np, uf) {
            self.record(iv, &np, uf, ThrottleMove::PrefetcherOn, app);
            return Ok(vec![self.word_action(app)]);
        }
        if let Some((step, action)) = self.duty_move(&np, uf) {
            let m = match step {
                Step::Up(_) => ThrottleMove::DutyUp,
                Step::Down(_) => ThrottleMove::DutyDown,
            };
            self.record(iv, &np, uf, m, step.app());
            return Ok(vec![action]);
        }
        if let Some(app) = self.prefetcher_trial(&np, uf) {
            self.record(iv, &np, uf, ThrottleMove::PrefetcherOff, app);
            return Ok(vec![self.word_action(app)]);
        }
        Ok(Vec::new())
    }
}
