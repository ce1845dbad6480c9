//! The values a label can bind, asked of the prover: for a label whose bindings are all
//! conditions (0 or 1), each combination of their values is a step-1 question, `reach(l) ∧
//! p_l ∧ b_1 = v_1 ∧ …`, asked of a copy of the program whose only labels are these
//! questions. A combination is impossible only when its question is proved unsatisfiable;
//! an unknown answer keeps it. Each label is asked alone: the labels of a hyperlabel's
//! conjunction may come from different runs, and each run is one copy of the encoding.

use std::collections::{BTreeMap, BTreeSet};

use super::{Hyperlabel, Item};
use crate::ir::{BinOp, CType, Expr, ExprKind, Program, Stmt, StmtKind, UnOp};
use crate::prune::{PruneConfig, Status};
use crate::report::ledger::Claim;

/// At most this many bindings per label are enumerated (2^4 questions).
const MAX_BINDINGS: usize = 4;

/// What the prover says of one label's bindings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// The label binds nothing.
    Free,
    /// Its names, and the combinations of their values not proved impossible.
    Tuples(Vec<String>, BTreeSet<Vec<i64>>),
    /// Not enumerated (values that are not conditions, too many names, not in the program).
    Unknown,
}

/// The labels whose values a guarded disjunct needs (those of guarded disjuncts with no label
/// claimed infeasible), and the sequences of disjuncts with no label claimed infeasible.
pub fn wanted(
    hyperlabels: &[Hyperlabel],
    claims: &BTreeMap<u64, Claim>,
) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let mut sequences = BTreeSet::new();
    let mut out = BTreeSet::new();
    for h in hyperlabels {
        for d in h.dnf() {
            let dead = d
                .items
                .iter()
                .any(|i| matches!(i, Item::Label(id) if matches!(claims.get(id), Some(Claim::Infeasible))));
            if dead {
                continue;
            }
            sequences.extend(d.items.iter().filter_map(|i| match i {
                Item::Sequence(id) => Some(*id),
                Item::Label(_) => None,
            }));
            if d.guards.is_empty() {
                continue;
            }
            out.extend(d.items.iter().filter_map(|i| match i {
                Item::Label(id) => Some(*id),
                Item::Sequence(_) => None,
            }));
        }
    }
    (out, sequences)
}

/// The values each label of `wanted` can bind, by step-1 questions under `config`.
pub fn bound_values(
    program: &Program,
    wanted: &BTreeSet<u64>,
    config: &PruneConfig,
) -> BTreeMap<u64, Values> {
    // What each label's statements bind: nothing, the same enumerable names, or otherwise.
    let mut kinds: BTreeMap<u64, Option<Vec<String>>> = BTreeMap::new();
    let mut mixed: BTreeSet<u64> = BTreeSet::new();
    for f in &program.functions {
        for (_, s) in f.labels() {
            if let StmtKind::Label { id, bindings, .. } = &s.kind {
                if !wanted.contains(id) {
                    continue;
                }
                let these = enumerable(bindings);
                if kinds.insert(*id, these.clone()).is_some_and(|k| k != these)
                    || (!bindings.is_empty() && these.is_none())
                {
                    mixed.insert(*id);
                }
            }
        }
    }
    let mut out: BTreeMap<u64, Values> = wanted.iter().map(|id| (*id, Values::Unknown)).collect();
    let mut names: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (id, kind) in &kinds {
        match kind {
            _ if mixed.contains(id) => {}
            Some(n) if n.is_empty() => {
                out.insert(*id, Values::Free);
            }
            Some(n) if id.checked_mul(1 << MAX_BINDINGS).is_some() => {
                names.insert(*id, n.clone());
            }
            _ => {}
        }
    }
    if names.is_empty() {
        return out;
    }
    let mut questions = program.clone();
    for f in &mut questions.functions {
        for b in &mut f.blocks {
            let stmts = std::mem::take(&mut b.stmts);
            for s in stmts {
                let StmtKind::Label {
                    id, pred, bindings, ..
                } = &s.kind
                else {
                    b.stmts.push(s);
                    continue;
                };
                if !names.contains_key(id) {
                    continue;
                }
                for tuple in 0..1u64 << bindings.len() {
                    let mut p = pred.clone();
                    for (k, (_, e)) in bindings.iter().enumerate() {
                        let v = if tuple >> k & 1 == 1 {
                            e.clone()
                        } else {
                            Expr::new(
                                ExprKind::Unary(UnOp::LogNot, Box::new(e.clone())),
                                CType::INT,
                            )
                        };
                        p = Expr::new(
                            ExprKind::Binary(BinOp::LogAnd, Box::new(p), Box::new(v)),
                            CType::INT,
                        );
                    }
                    b.stmts.push(Stmt {
                        kind: StmtKind::Label {
                            id: (id << MAX_BINDINGS) + tuple,
                            tag: String::new(),
                            pred: p,
                            text: String::new(),
                            bindings: Vec::new(),
                        },
                        loc: s.loc,
                    });
                }
            }
        }
    }
    let mut possible: BTreeMap<u64, BTreeSet<Vec<i64>>> = BTreeMap::new();
    for v in super::ask(&questions, config) {
        let (id, tuple) = (v.id >> MAX_BINDINGS, v.id & ((1 << MAX_BINDINGS) - 1));
        let Some(n) = names.get(&id) else { continue };
        let set = possible.entry(id).or_default();
        if v.status != Status::Infeasible {
            set.insert((0..n.len()).map(|k| (tuple >> k & 1) as i64).collect());
        }
    }
    for (id, n) in names {
        let tuples = possible.remove(&id).unwrap_or_default();
        out.insert(id, Values::Tuples(n, tuples));
    }
    out
}

/// The names of bindings whose values are all conditions (0 or 1), at most
/// [`MAX_BINDINGS`] of them and each once; None otherwise.
fn enumerable(bindings: &[(String, Expr)]) -> Option<Vec<String>> {
    let names: Vec<String> = bindings.iter().map(|(n, _)| n.clone()).collect();
    let distinct: BTreeSet<&String> = names.iter().collect();
    (names.len() <= MAX_BINDINGS
        && distinct.len() == names.len()
        && bindings.iter().all(|(_, e)| is_condition(e)))
    .then_some(names)
}

/// An expression whose value is 0 or 1.
fn is_condition(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary(op, ..) => {
            op.is_comparison() || matches!(op, BinOp::LogAnd | BinOp::LogOr)
        }
        ExprKind::Unary(UnOp::LogNot, _) => true,
        _ => false,
    }
}
