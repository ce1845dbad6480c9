//! Coverage criteria for covprune: each criterion turns decisions (a boolean condition with its
//! atomic conditions) and functions into label records (a C predicate and a tag).
//!
//! Architecture invariant: this crate knows nothing of tree-sitter, CFGs, Z3 or the CLI; its
//! inputs are the small types below, its outputs plain [`LabelSpec`]s. A criterion is one file
//! holding its [`Definition`] (name, description, what its labels stand for, the function that
//! writes them) and one line of the table in `criteria.rs`.
//!
//! Where covprune's labels differ from LAnnotate 0.2's, and why (each criterion's file says
//! what is particular to it):
//! - Short-circuits. LAnnotate evaluates every atom of a decision before it, so `p && p->x > 0`
//!   gets `pc_label(p->x > 0, ...)`, which dereferences NULL (schedule2 crashed on 2,658 of its
//!   2,710 tests). Here an atom that could trap (dereference, index, division, shift, call) is
//!   read under its short-circuit prefix, `(p) && (p->x > 0)`, and tested false as
//!   `(p) && !(p->x > 0)` ([`Decision::atom_guards`]); atoms that cannot trap keep LAnnotate's
//!   meaning. Mutants and boundary labels of a node that could trap follow the same rule.
//! - Calls in decisions. Frama-C moves a call's value into a typed temporary (`tmp = f(x); if
//!   (tmp > 0)`); covprune's annotator moves each atom's truth value into an `int` temporary.
//!   The decisions and their atom counts are the same (CC, MCC and GACC counts equal
//!   LAnnotate's on the Siemens programs); the predicates read the temporaries, and WM has no
//!   mutants of the operands of such atoms (fewer WM labels).
//! - Divisions. A label that divides (or shifts) by a value that may be zero (or out of range)
//!   is guarded, `d != 0 && (...)`, where LAnnotate's raise SIGFPE.
//! - Returned values. LAnnotate's `__retres < 0` is not written for a function whose returns
//!   are all non-negative literals (it is false by construction).
//! - GICC uses the definition; LAnnotate builds both cofactors with `c := 1` (see `gicc`).

mod criteria;
pub mod dataflow;
pub mod expr;
pub mod mutation;

pub use criteria::{Criterion, Definition, Labels, Objective, Placement};
pub use expr::{is_positive_int_literal, BinOp, Expr, Ty, UnOp, Written};
pub use mutation::Mutator;

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

    /// The same condition with every atom's text replaced, left to right.
    pub fn map_atoms(&self, f: &mut dyn FnMut(&str) -> String) -> Cond {
        match self {
            Cond::Atom(a) => Cond::Atom(f(a)),
            Cond::Not(c) => Cond::Not(Box::new(c.map_atoms(f))),
            Cond::And(a, b) => {
                let a = a.map_atoms(f);
                Cond::And(Box::new(a), Box::new(b.map_atoms(f)))
            }
            Cond::Or(a, b) => {
                let a = a.map_atoms(f);
                Cond::Or(Box::new(a), Box::new(b.map_atoms(f)))
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

    /// The condition with its `index`-th atom (left to right) replaced by a truth value,
    /// simplified: `Ok(cond)` or `Err(constant)` when the whole condition becomes constant.
    pub fn with_atom(&self, index: usize, value: bool) -> Result<Cond, bool> {
        let mut next = 0;
        self.subst(index, value, &mut next)
    }

    fn subst(&self, index: usize, value: bool, next: &mut usize) -> Result<Cond, bool> {
        match self {
            Cond::Atom(_) => {
                let i = *next;
                *next += 1;
                if i == index {
                    Err(value)
                } else {
                    Ok(self.clone())
                }
            }
            Cond::Not(c) => match c.subst(index, value, next) {
                Ok(c) => Ok(Cond::Not(Box::new(c))),
                Err(v) => Err(!v),
            },
            Cond::And(a, b) | Cond::Or(a, b) => {
                let is_and = matches!(self, Cond::And(..));
                let (x, y) = (a.subst(index, value, next), b.subst(index, value, next));
                match (x, y) {
                    (Err(v), _) | (_, Err(v)) if v != is_and => Err(v),
                    (Err(_), Err(_)) => Err(is_and),
                    (Err(_), Ok(c)) | (Ok(c), Err(_)) => Ok(c),
                    (Ok(x), Ok(y)) => Ok(if is_and {
                        Cond::And(Box::new(x), Box::new(y))
                    } else {
                        Cond::Or(Box::new(x), Box::new(y))
                    }),
                }
            }
        }
    }
}

/// A simplified boolean: a constant or a C condition text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bool {
    Const(bool),
    Text(String),
}

impl Bool {
    fn of(r: Result<Cond, bool>) -> Bool {
        match r {
            Ok(c) => Bool::Text(c.to_c()),
            Err(v) => Bool::Const(v),
        }
    }

    pub(crate) fn not(&self) -> Bool {
        match self {
            Bool::Const(v) => Bool::Const(!v),
            Bool::Text(t) => Bool::Text(not(t)),
        }
    }

    pub(crate) fn and(&self, other: &Bool) -> Bool {
        match (self, other) {
            (Bool::Const(false), _) | (_, Bool::Const(false)) => Bool::Const(false),
            (Bool::Const(true), x) | (x, Bool::Const(true)) => x.clone(),
            (Bool::Text(a), Bool::Text(b)) => Bool::Text(format!("({a}) && ({b})")),
        }
    }

    pub(crate) fn xor(&self, other: &Bool) -> Bool {
        match (self, other) {
            (Bool::Const(a), Bool::Const(b)) => Bool::Const(a != b),
            (Bool::Const(false), x) | (x, Bool::Const(false)) => x.clone(),
            (Bool::Const(true), x) | (x, Bool::Const(true)) => x.not(),
            (Bool::Text(a), Bool::Text(b)) => {
                Bool::Text(format!("(!({a}) && ({b})) || (({a}) && !({b}))"))
            }
        }
    }

    pub(crate) fn text(&self) -> String {
        match self {
            Bool::Const(true) => "1".into(),
            Bool::Const(false) => "0".into(),
            Bool::Text(t) => t.clone(),
        }
    }
}

/// `D[c:=1] xor D[c:=0]` for the `index`-th atom: the atom determines the decision.
pub(crate) fn determines(d: &Decision, index: usize) -> Bool {
    Bool::of(d.cond.with_atom(index, true)).xor(&Bool::of(d.cond.with_atom(index, false)))
}

/// A decision of the program: the condition of an `if`, `while`, `for` or `do`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub cond: Cond,
    /// The condition as an expression tree (for boundary labels), when the annotator built one.
    pub expr: Option<Expr>,
    /// Conditions under which evaluating the decision's atoms cannot trap (divisors not zero,
    /// shift counts in range); every label of the decision is guarded by them, because labels
    /// evaluate every atom, ignoring short-circuits.
    pub guards: Vec<String>,
    /// Per atom (left to right), the condition under which the program evaluates it, when a
    /// label must not read it otherwise (it could trap, as `*p > 0` in `p && *p > 0`, or it is
    /// a temporary the program only sets when it evaluates the atom). Labels read such an
    /// atom as `(g) && (a)`: false where the program does not evaluate it; a label that tests
    /// the atom false reads `(g) && !(a)`. Empty: every atom may be read anywhere.
    pub atom_guards: Vec<Option<String>>,
    /// Filled by [`Decision::contextual`]: the strict negation of each guarded atom.
    negations: Vec<Option<String>>,
}

impl Decision {
    pub fn new(cond: Cond) -> Decision {
        Decision {
            cond,
            expr: None,
            guards: Vec::new(),
            atom_guards: Vec::new(),
            negations: Vec::new(),
        }
    }

    /// The decision as labels read it: each guarded atom `a` with guard `g` becomes
    /// `(g) && (a)`, and its strict negation `(g) && !(a)` is kept for the criteria that test
    /// an atom false ([`Decision::negation`]).
    pub(crate) fn contextual(&self) -> Decision {
        if self.atom_guards.iter().all(Option::is_none) {
            return self.clone();
        }
        let mut index = 0;
        let mut negations = Vec::new();
        let cond = self.cond.map_atoms(&mut |a| {
            let g = self.atom_guards.get(index).cloned().flatten();
            index += 1;
            match g {
                Some(g) => {
                    negations.push(Some(format!("({g}) && {}", not(a))));
                    format!("({g}) && ({a})")
                }
                None => {
                    negations.push(None);
                    a.to_string()
                }
            }
        });
        Decision {
            cond,
            expr: self.expr.clone(),
            guards: self.guards.clone(),
            atom_guards: Vec::new(),
            negations,
        }
    }

    /// The `index`-th atom tested false: `!(a)`, or `(g) && !(a)` for a guarded atom, so that
    /// an atom the program did not evaluate is never counted as false.
    pub(crate) fn negation(&self, index: usize, atom: &str) -> String {
        match self.negations.get(index) {
            Some(Some(n)) => n.clone(),
            _ => not(atom),
        }
    }
}

/// Values a hyperlabel's label records when it is covered (`pc_label_bindings`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Index, among the hyperlabels of the same decision, of the hyperlabel this label is part of.
    pub hyper: usize,
    /// (name, C expression) pairs.
    pub vars: Vec<(String, String)>,
}

/// One test objective to insert as `pc_label(predicate, id, "tag");`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelSpec {
    pub predicate: String,
    pub tag: String,
    pub binding: Option<Binding>,
    /// The one atom outcome the label stands for (condition coverage): other tools' reports
    /// count the same objective as one side of that condition's branch.
    pub outcome: Option<Outcome>,
    /// For a mutant that replaces a binary operator: which, by which, and where it is written
    /// (mutation tools name their mutants by operator and position).
    pub replacement: Option<Replacement>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub from: BinOp,
    pub to: BinOp,
    /// The byte range of the operator's token in the source (None: the normal form's own).
    pub at: Option<(usize, usize)>,
}

/// An atom of a decision taking a value: `atom` indexes [`Cond::atoms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub atom: usize,
    pub value: bool,
}

impl LabelSpec {
    fn new(predicate: String, tag: &str) -> LabelSpec {
        LabelSpec {
            predicate,
            tag: tag.to_string(),
            binding: None,
            outcome: None,
            replacement: None,
        }
    }

    fn of_outcome(mut self, atom: usize, value: bool) -> LabelSpec {
        self.outcome = Some(Outcome { atom, value });
        self
    }
}

/// A hyperlabel over labels of one decision (or one definition): the conjunction of its
/// members (`l1.l2`), or their disjunction (`l1+l2`), under a guard over their bindings, in
/// LTest's `.hyperlabels` grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperSpec {
    /// Indices into the decision's labels of this criterion.
    pub members: Vec<usize>,
    pub guard: String,
    pub disjunction: bool,
}

impl HyperSpec {
    /// Its `.hyperlabels` text over the members' ids: `<l1.l2|;guard;>`.
    pub fn text(&self, ids: &[u64]) -> String {
        let members: Vec<String> = self
            .members
            .iter()
            .map(|&m| format!("l{}", ids[m]))
            .collect();
        let join = if self.disjunction { "+" } else { "." };
        format!("<{}|;{};>", members.join(join), self.guard)
    }
}

/// `!(p)`, as a predicate text.
fn not(p: &str) -> String {
    format!("!({p})")
}

/// A C expression's truth value, 0 or 1, as a binding records it: the text itself when its
/// value already is (its outermost operator a comparison, `&&`, `||` or `!`), else `!!(e)`,
/// so that two runs that both find an atom true bind the same value.
pub(crate) fn truth_value(e: &str) -> String {
    if is_truth_valued(e) {
        e.to_string()
    } else {
        format!("!!({e})")
    }
}

/// The outermost operator of `e` (the binary one of lowest precedence outside parentheses, or
/// a leading `!` when there is none) yields 0 or 1. Errs on the side of no: an operator it
/// cannot place makes the answer no.
fn is_truth_valued(e: &str) -> bool {
    let b = e.trim().as_bytes();
    let (mut depth, mut lowest, mut operand_before) = (0i32, u8::MAX, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let two = b.get(i..i + 2).unwrap_or_default();
        let (prec, len) = match c {
            b'(' | b'[' => {
                depth += 1;
                operand_before = false;
                i += 1;
                continue;
            }
            b')' | b']' => {
                depth -= 1;
                operand_before = true;
                i += 1;
                continue;
            }
            b'"' | b'\'' | b'{' | b'}' | b'?' | b',' | b';' => return false,
            _ if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' => {
                operand_before = true;
                i += 1;
                continue;
            }
            _ if two == b"->" => {
                i += 2;
                continue;
            }
            _ if two == b"||" => (4, 2),
            _ if two == b"&&" => (5, 2),
            _ if two == b"==" || two == b"!=" => (9, 2),
            _ if two == b"<=" || two == b">=" => (10, 2),
            _ if two == b"<<" || two == b">>" => (11, 2),
            _ if two == b"++" || two == b"--" => return false,
            b'=' => return false,
            b'<' | b'>' => (10, 1),
            b'|' => (6, 1),
            b'^' => (7, 1),
            b'&' if operand_before => (8, 1),
            b'+' | b'-' if operand_before => (12, 1),
            b'*' | b'/' | b'%' if operand_before => (13, 1),
            b'&' | b'+' | b'-' | b'*' | b'!' | b'~' => {
                // A unary operator.
                i += 1;
                continue;
            }
            _ => return false,
        };
        if b.get(i + len) == Some(&b'=') && !matches!(prec, 9 | 10) {
            return false; // a compound assignment
        }
        if depth == 0 {
            lowest = lowest.min(prec);
        }
        operand_before = false;
        i += len;
    }
    match lowest {
        4 | 5 | 9 | 10 => true,
        u8::MAX => e.trim_start().starts_with('!') && !e.trim_start().starts_with("!="),
        _ => false,
    }
}

/// Every combination of truth values of `atoms`, each a right-nested conjunction, positive
/// literals first (LAnnotate's order for MCC and NCC).
fn combinations(atoms: &[&str]) -> Vec<String> {
    let n = atoms.len();
    (0..1usize << n)
        .map(|mask| {
            // Bit n-1-i clear means atom i is positive, so positives come first.
            let lits: Vec<String> = atoms
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if mask >> (n - 1 - i) & 1 == 0 {
                        format!("({a})")
                    } else {
                        not(a)
                    }
                })
                .collect();
            let mut pred = lits[n - 1].clone();
            for lit in lits[..n - 1].iter().rev() {
                pred = format!("{lit} && ({pred})");
            }
            pred
        })
        .collect()
}

/// Bounds and options of criteria.
#[derive(Clone, Debug)]
pub struct Limits {
    /// MCC: decisions with more atoms than this get no labels (2^n would be too many).
    pub mcc_max_atoms: usize,
    /// NCC: the number of atoms combined.
    pub ncc_n: usize,
    /// PCT: predicates of a function taken into account (the first ones in source order).
    pub pct_max_predicates: usize,
    /// WM, WM-S: the mutation operator groups applied.
    pub mutators: Vec<Mutator>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            mcc_max_atoms: 10,
            ncc_n: 2,
            pct_max_predicates: 4,
            mutators: Mutator::ALL.to_vec(),
        }
    }
}

/// Parses LAnnotate's mutator selection: `AOR,ROR` keeps those groups; `-ABS,-AOR` removes
/// groups from all of them.
pub fn parse_mutators(list: &[String]) -> Result<Vec<Mutator>, String> {
    let mut keep: Vec<Mutator> = Vec::new();
    let mut drop: Vec<Mutator> = Vec::new();
    for item in list.iter().flat_map(|s| s.split(',')).map(str::trim) {
        if item.is_empty() {
            continue;
        }
        let (neg, name) = match item.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, item),
        };
        let m = Mutator::from_name(name).ok_or_else(|| {
            let valid: Vec<&str> = Mutator::ALL.iter().map(|m| m.name()).collect();
            format!("unknown mutator `{name}` (valid: {})", valid.join(", "))
        })?;
        if neg {
            drop.push(m);
        } else {
            keep.push(m);
        }
    }
    let base = if keep.is_empty() {
        Mutator::ALL.to_vec()
    } else {
        keep
    };
    Ok(base.into_iter().filter(|m| !drop.contains(m)).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn truth_values_wrap_what_is_not_already_zero_or_one() {
        use super::truth_value as t;
        for kept in [
            "a < b",
            "x == 3 && y",
            "!(p)",
            "!x",
            "a || b",
            "(a + 1) >= b",
            "p->n != 0",
        ] {
            assert_eq!(t(kept), kept);
        }
        for wrapped in [
            "b",
            "x & 4",
            "(a < b) | c",
            "a < b ? 1 : 2",
            "n - 1",
            "*p",
            "(int)(a < b)",
            "!x + 1",
            "f(a < b)",
        ] {
            assert_eq!(t(wrapped), format!("!!({wrapped})"), "{wrapped}");
        }
    }

    use super::*;

    pub(crate) fn abc() -> Decision {
        // (a <= 0 || b <= 0) || c <= 0
        let atom = |s: &str| Box::new(Cond::Atom(s.to_string()));
        Decision::new(Cond::Or(
            Box::new(Cond::Or(atom("a <= 0"), atom("b <= 0"))),
            atom("c <= 0"),
        ))
    }

    #[test]
    fn names_round_trip() {
        for c in Criterion::ALL {
            assert_eq!(Criterion::from_name(c.name()), Some(*c));
        }
        assert_eq!(Criterion::from_name("mcc"), Some(Criterion::Mcc));
        assert_eq!(Criterion::from_name("XYZ"), None);
    }

    pub(crate) fn and2() -> Decision {
        // a + b <= c && b + c <= a
        let atom = |s: &str| Box::new(Cond::Atom(s.to_string()));
        Decision::new(Cond::And(atom("a + b <= c"), atom("b + c <= a")))
    }

    #[test]
    fn substituting_an_atom_simplifies() {
        let d = abc();
        assert_eq!(d.cond.with_atom(0, true), Err(true));
        assert_eq!(
            d.cond.with_atom(0, false).map(|c| c.to_c()),
            Ok("(b <= 0) || (c <= 0)".into())
        );
        assert_eq!(and2().cond.with_atom(1, false), Err(false));
    }

    #[test]
    fn mutator_selection_follows_lannotate() {
        let m = parse_mutators(&["-ABS,-AOR".to_string()]).unwrap();
        assert!(!m.contains(&Mutator::Abs) && m.contains(&Mutator::Ror));
        assert_eq!(parse_mutators(&["ROR".into()]).unwrap(), vec![Mutator::Ror]);
        assert!(parse_mutators(&["XYZ".into()])
            .unwrap_err()
            .contains("valid: AOR"));
    }

    #[test]
    fn atoms_are_listed_left_to_right() {
        assert_eq!(abc().cond.atoms(), vec!["a <= 0", "b <= 0", "c <= 0"]);
    }
}
