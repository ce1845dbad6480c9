//! The table of criteria: one line per criterion naming its file, whose [`Definition`] says
//! everything else about it. [`Criterion`]'s methods read the table; none lists criteria.

use crate::dataflow::DefUse;
use crate::{expr, Decision, Expr, HyperSpec, LabelSpec, Limits};

/// What a criterion is: its name (the labels' tag), its one-line description, what its labels
/// stand for, and how they are written.
pub struct Definition {
    pub name: &'static str,
    pub description: &'static str,
    pub labels: Labels,
    /// Its labels are grouped into hyperlabels (`.hyperlabels` file).
    pub hyperlabels: bool,
    pub objective: Objective,
}

/// Where a criterion's labels go, and the function that writes them there.
#[derive(Clone, Copy)]
pub enum Labels {
    /// Before each decision, from its condition. `whole`: from the decision as written, whose
    /// own short-circuits keep each atom where the program evaluates it; otherwise atom by atom
    /// from [`Decision::contextual`]. Either way each label is guarded so that it cannot trap.
    Decision {
        labels: fn(&Decision, &Limits) -> Vec<LabelSpec>,
        whole: bool,
        /// Hyperlabels over the same decision's labels.
        hyperlabels: Option<fn(&Decision) -> Vec<HyperSpec>>,
    },
    /// Before each visited statement, from the expressions it evaluates, and on a function's
    /// returned value (`return e;` with an arithmetic type).
    Expression {
        labels: fn(&Expr, &Limits) -> Vec<LabelSpec>,
        returned: fn(&str, &Limits) -> Option<LabelSpec>,
    },
    /// At function entry.
    Function(fn() -> Vec<LabelSpec>),
    /// At the head of each basic block.
    Statement(fn() -> Vec<LabelSpec>),
    /// At every statement of a function, over the function's predicates.
    FunctionStatements(fn(&[String], &Limits) -> Vec<LabelSpec>),
    /// Before each call site.
    Call(fn() -> Vec<LabelSpec>),
    /// Before each statement that uses a variable (and a ghost flag per definition).
    DefUse(DefUse),
}

/// Where a criterion puts its labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Decision,
    Expression,
    Function,
    Statement,
    FunctionStatements,
    Call,
    DefUse,
}

/// What one label of a criterion stands for, as the reports of other tools know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// A basic block is executed (an infeasible one is dead code).
    Block,
    /// A decision takes a truth value.
    DecisionOutcome,
    /// An atomic condition takes a truth value (a branch report's condition outcome).
    ConditionOutcome,
    /// Either of the two above.
    Outcome,
    /// A mutant is distinguished from the original (an infeasible one is equivalent).
    Mutant,
    /// A combination of values, a boundary, a call or a def-use pair.
    Other,
}

macro_rules! criteria {
    ($($variant:ident: $module:ident),* $(,)?) => {
        $(mod $module;)*

        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Criterion {
            $($variant),*
        }

        impl Criterion {
            /// Every criterion, in the table's order.
            pub const ALL: &'static [Criterion] = &[$(Criterion::$variant),*];

            /// Its entry in the table.
            pub fn definition(self) -> &'static Definition {
                match self {
                    $(Criterion::$variant => &$module::DEFINITION),*
                }
            }
        }
    };
}

criteria! {
    Fc: fc,
    Stmt: stmt,
    Dc: dc,
    Cc: cc,
    Dcc: dcc,
    Mcc: mcc,
    Ncc: ncc,
    Gacc: gacc,
    Gicc: gicc,
    Cacc: cacc,
    Racc: racc,
    Limit: limit,
    Wm: wm,
    WmS: wms,
    Pct: pct,
    Fcc: fcc,
    Adc: adc,
    Auc: auc,
}

impl Criterion {
    pub fn name(self) -> &'static str {
        self.definition().name
    }

    pub fn description(self) -> &'static str {
        self.definition().description
    }

    pub fn objective(self) -> Objective {
        self.definition().objective
    }

    pub fn placement(self) -> Placement {
        match self.definition().labels {
            Labels::Decision { .. } => Placement::Decision,
            Labels::Expression { .. } => Placement::Expression,
            Labels::Function(_) => Placement::Function,
            Labels::Statement(_) => Placement::Statement,
            Labels::FunctionStatements(_) => Placement::FunctionStatements,
            Labels::Call(_) => Placement::Call,
            Labels::DefUse(_) => Placement::DefUse,
        }
    }

    /// True for criteria whose labels are grouped into hyperlabels (`.hyperlabels` file).
    pub fn has_hyperlabels(self) -> bool {
        self.definition().hyperlabels
    }

    /// Data-flow criteria: for each definition of a variable, its uses (see [`crate::dataflow`]).
    pub fn def_use(self) -> Option<DefUse> {
        match self.definition().labels {
            Labels::DefUse(d) => Some(d),
            _ => None,
        }
    }

    /// Parses a criterion name (case-insensitive; `WMS` and `WM_S` are accepted for WM-S).
    pub fn from_name(name: &str) -> Option<Criterion> {
        let n = name.trim().replace('_', "-");
        let n = if n.eq_ignore_ascii_case("WMS") {
            "WM-S".to_string()
        } else {
            n
        };
        Criterion::ALL
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(&n))
    }

    /// The criterion whose labels carry `tag` (its first word: a mutant's tag also names its
    /// operator).
    pub fn of_tag(tag: &str) -> Option<Criterion> {
        let first = tag.split_whitespace().next()?;
        Criterion::ALL.iter().copied().find(|c| c.name() == first)
    }

    /// Labels for one decision (empty for criteria placed elsewhere), guarded so that their
    /// evaluation cannot trap.
    pub fn decision_labels(self, d: &Decision, limits: &Limits) -> Vec<LabelSpec> {
        let Labels::Decision { labels, whole, .. } = self.definition().labels else {
            return Vec::new();
        };
        let contextual = d.contextual();
        let mut specs = labels(if whole { d } else { &contextual }, limits);
        for s in &mut specs {
            s.predicate = expr::guarded(&contextual.guards, &s.predicate);
        }
        specs
    }

    /// Hyperlabels over the labels [`Criterion::decision_labels`] gives for the same decision.
    pub fn decision_hyperlabels(self, d: &Decision) -> Vec<HyperSpec> {
        match self.definition().labels {
            Labels::Decision {
                hyperlabels: Some(h),
                ..
            } => h(d),
            _ => Vec::new(),
        }
    }

    /// Labels for one expression that a visited statement evaluates (mutation criteria).
    pub fn expression_labels(self, e: &Expr, limits: &Limits) -> Vec<LabelSpec> {
        match self.definition().labels {
            Labels::Expression { labels, .. } => labels(e, limits),
            _ => Vec::new(),
        }
    }

    /// The label on a function's returned value (`return e;` with an arithmetic type): WM's
    /// ABS on LAnnotate's `__retres`, one per function, placed at every return.
    pub fn return_value_label(self, value: &str, limits: &Limits) -> Option<LabelSpec> {
        match self.definition().labels {
            Labels::Expression { returned, .. } => returned(value, limits),
            _ => None,
        }
    }

    /// Labels at the entry of each function.
    pub fn function_labels(self) -> Vec<LabelSpec> {
        match self.definition().labels {
            Labels::Function(f) => f(),
            _ => Vec::new(),
        }
    }

    /// Labels at the head of a basic block.
    pub fn statement_labels(self) -> Vec<LabelSpec> {
        match self.definition().labels {
            Labels::Statement(f) => f(),
            _ => Vec::new(),
        }
    }

    /// Labels before a call site.
    pub fn call_labels(self) -> Vec<LabelSpec> {
        match self.definition().labels {
            Labels::Call(f) => f(),
            _ => Vec::new(),
        }
    }

    /// Labels at a statement of a function whose predicates (atoms) are `preds`.
    pub fn function_statement_labels(self, preds: &[String], limits: &Limits) -> Vec<LabelSpec> {
        match self.definition().labels {
            Labels::FunctionStatements(f) => f(preds, limits),
            _ => Vec::new(),
        }
    }
}
