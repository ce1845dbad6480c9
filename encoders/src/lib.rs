//! Coverage criteria for covprune: each criterion turns decisions (a boolean condition with its
//! atomic conditions) and functions into label records (a C predicate and a tag).
//!
//! Architecture invariant: this crate knows nothing of tree-sitter, CFGs, Z3 or the CLI; its
//! inputs are the small types below, its outputs plain [`LabelSpec`]s. One file per criterion,
//! one [`Criterion`] variant, one match arm in [`Criterion::decision_labels`].

mod cc;
mod dc;
mod dcc;
mod fc;
mod mcc;

/// A boolean condition as written in the program: atoms are C expressions kept as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    Atom(String),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

impl Cond {
    /// The atomic conditions, left to right (`a`, `b`, `c` in `(a || b) && !c`).
    pub fn atoms(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_atoms(&mut out);
        out
    }

    fn collect_atoms<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Cond::Atom(a) => out.push(a),
            Cond::Not(c) => c.collect_atoms(out),
            Cond::And(a, b) | Cond::Or(a, b) => {
                a.collect_atoms(out);
                b.collect_atoms(out);
            }
        }
    }

    /// The condition as C text, fully parenthesised where operators nest.
    pub fn to_c(&self) -> String {
        match self {
            Cond::Atom(a) => a.clone(),
            Cond::Not(c) => format!("!({})", c.to_c()),
            Cond::And(a, b) => format!("({}) && ({})", a.to_c(), b.to_c()),
            Cond::Or(a, b) => format!("({}) || ({})", a.to_c(), b.to_c()),
        }
    }
}

/// A decision of the program: the condition of an `if`, `while`, `for` or `do`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub cond: Cond,
}

/// One test objective to insert as `pc_label(predicate, id, "tag");`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelSpec {
    pub predicate: String,
    pub tag: String,
}

impl LabelSpec {
    fn new(predicate: String, tag: &str) -> LabelSpec {
        LabelSpec {
            predicate,
            tag: tag.to_string(),
        }
    }
}

/// `!(p)`, as a predicate text.
fn not(p: &str) -> String {
    format!("!({p})")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Criterion {
    Fc,
    Dc,
    Cc,
    Dcc,
    Mcc,
}

impl Criterion {
    pub const ALL: &'static [Criterion] = &[
        Criterion::Fc,
        Criterion::Dc,
        Criterion::Cc,
        Criterion::Dcc,
        Criterion::Mcc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Criterion::Fc => "FC",
            Criterion::Dc => "DC",
            Criterion::Cc => "CC",
            Criterion::Dcc => "DCC",
            Criterion::Mcc => "MCC",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Criterion::Fc => fc::DESCRIPTION,
            Criterion::Dc => dc::DESCRIPTION,
            Criterion::Cc => cc::DESCRIPTION,
            Criterion::Dcc => dcc::DESCRIPTION,
            Criterion::Mcc => mcc::DESCRIPTION,
        }
    }

    /// Parses a criterion name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Criterion> {
        Criterion::ALL
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Labels for one decision (empty for criteria that do not look at decisions).
    pub fn decision_labels(self, d: &Decision, limits: &Limits) -> Vec<LabelSpec> {
        match self {
            Criterion::Fc => Vec::new(),
            Criterion::Dc => dc::labels(d),
            Criterion::Cc => cc::labels(d),
            Criterion::Dcc => dcc::labels(d),
            Criterion::Mcc => mcc::labels(d, limits),
        }
    }

    /// Labels at the entry of each function.
    pub fn function_labels(self) -> Vec<LabelSpec> {
        match self {
            Criterion::Fc => fc::labels(),
            _ => Vec::new(),
        }
    }
}

/// Bounds on criteria that grow exponentially.
#[derive(Clone, Debug)]
pub struct Limits {
    /// MCC: decisions with more atoms than this get no labels (2^n would be too many).
    pub mcc_max_atoms: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { mcc_max_atoms: 10 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn abc() -> Decision {
        // (a <= 0 || b <= 0) || c <= 0
        let atom = |s: &str| Box::new(Cond::Atom(s.to_string()));
        Decision {
            cond: Cond::Or(
                Box::new(Cond::Or(atom("a <= 0"), atom("b <= 0"))),
                atom("c <= 0"),
            ),
        }
    }

    #[test]
    fn names_round_trip() {
        for c in Criterion::ALL {
            assert_eq!(Criterion::from_name(c.name()), Some(*c));
        }
        assert_eq!(Criterion::from_name("mcc"), Some(Criterion::Mcc));
        assert_eq!(Criterion::from_name("XYZ"), None);
    }

    #[test]
    fn atoms_are_listed_left_to_right() {
        assert_eq!(abc().cond.atoms(), vec!["a <= 0", "b <= 0", "c <= 0"]);
    }
}
