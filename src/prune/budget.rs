//! A function's budget: how much solver work (or wall-clock time) its questions may take, and
//! the parts of it that its shares and calling contexts get.

use std::time::Instant;

use super::PruneConfig;

/// A function's budget: deterministic (resource units of the solver) when questions have a
/// resource limit, with the wall clock as a backstop; the wall clock alone otherwise.
pub(super) struct Budget {
    pub(super) start: Instant,
    pub(super) wall: Option<std::time::Duration>,
    pub(super) units: Option<u64>,
}

/// With a deterministic budget, the wall-clock backstop is this many times the nominal one.
pub(super) const BUDGET_BACKSTOP: u32 = 3;

impl Budget {
    /// A deterministic budget of `units`, with the wall-clock backstop.
    pub(super) fn of_units(units: u64, per_ms: u64, start: Instant) -> Budget {
        let nominal = std::time::Duration::from_millis(units / per_ms.max(1));
        Budget {
            start,
            wall: Some(nominal * BUDGET_BACKSTOP),
            units: Some(units),
        }
    }

    /// A wall-clock budget.
    pub(super) fn of_wall(wall: std::time::Duration, start: Instant) -> Budget {
        Budget {
            start,
            wall: Some(wall),
            units: None,
        }
    }

    /// The part `num / den` of this budget (a share of a function's questions gets the part
    /// of the function's budget its weight is of the function's).
    pub(super) fn part(self, num: u64, den: u64) -> Budget {
        let den = u128::from(den.max(1));
        let scale = |x: u128| x * u128::from(num) / den;
        Budget {
            start: self.start,
            wall: self
                .wall
                .map(|w| std::time::Duration::from_nanos(scale(w.as_nanos()) as u64)),
            units: self.units.map(|u| scale(u128::from(u)) as u64),
        }
    }

    /// Is the budget spent, with `work` units done so far?
    pub(super) fn exhausted(&self, work: u64) -> bool {
        self.units.is_some_and(|u| work > u) || self.wall.is_some_and(|w| self.start.elapsed() > w)
    }

    pub(super) fn new(config: &PruneConfig, start: Instant) -> Budget {
        let s = config.function_budget_s;
        if s == 0 {
            return Budget {
                start,
                wall: None,
                units: None,
            };
        }
        let per_ms = config.solver.units_per_ms();
        if per_ms > 0 {
            Budget::of_units(s * 1000 * per_ms, per_ms, start)
        } else {
            Budget::of_wall(std::time::Duration::from_secs(s), start)
        }
    }
}
