//! LTest's sequences asked of the prover. A chain is covered by a run that reaches its
//! positions in order, the condition true at each, with no break of its variable between
//! (as the recording runtime decides it). In a copy of the program whose only labels are these
//! questions, each chain whose positions all lie in one function gets a ghost local of that
//! function holding the last position reached, updated where its marks are; its question is
//! its last position reached with the ghost one below. The copy over-approximates the run's
//! chain state, so an unsatisfiable question proves the chain infeasible:
//! - at entry the ghost is unconstrained (the state is global: earlier calls may have left it
//!   anywhere);
//! - after a call that may reach the chain's function again the ghost is unconstrained: an
//!   indirect call, a direct call whose callees include it, and any call at all when code
//!   outside the program can lead to it (through a function of external linkage or whose
//!   address is taken);
//! - a break is applied only where the function itself marks it (one elsewhere can only
//!   reset the state, which is a loss of runs, never a gain).
//!
//! A mark whose numbers are not constants leaves every chain of the program unproved.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{
    BinOp, CType, Callee, Expr, ExprKind, FallbackKind, LValue, Local, LocalId, Program,
    SequenceMark, Stmt, StmtKind, VarRef,
};
use crate::prune::{PruneConfig, Status};

/// One chain, as its marks describe it.
#[derive(Default)]
struct Chain {
    functions: BTreeSet<usize>,
    lens: BTreeSet<u64>,
    vars: BTreeSet<String>,
    positions: BTreeSet<u64>,
}

/// The chains of `wanted` proved infeasible under `config`.
pub fn infeasible(
    program: &Program,
    wanted: &BTreeSet<u64>,
    config: &PruneConfig,
) -> BTreeSet<u64> {
    let Some(asked) = asked_chains(program, wanted) else {
        return BTreeSet::new();
    };
    if asked.is_empty() {
        return BTreeSet::new();
    }
    let reaches = reaching(program);
    let mut questions = program.clone();
    for (k, f) in questions.functions.iter_mut().enumerate() {
        instrument(program, k, f, &asked, &reaches);
    }
    super::ask(&questions, config)
        .into_iter()
        .filter(|v| v.status == Status::Infeasible && asked.contains_key(&v.id))
        .map(|v| v.id)
        .collect()
}

/// The chains of `wanted` with every position, each in one function: (function, len, var).
/// None when some chain could not be numbered.
fn asked_chains(
    program: &Program,
    wanted: &BTreeSet<u64>,
) -> Option<BTreeMap<u64, (usize, u64, String)>> {
    let mut chains: BTreeMap<u64, Chain> = BTreeMap::new();
    for (k, f) in program.functions.iter().enumerate() {
        for b in &f.blocks {
            for s in &b.stmts {
                if let StmtKind::Sequence(SequenceMark::Position {
                    id, pos, len, var, ..
                }) = &s.kind
                {
                    if *id == u64::MAX {
                        return None;
                    }
                    let c = chains.entry(*id).or_default();
                    c.functions.insert(k);
                    c.lens.insert(*len);
                    c.vars.insert(var.clone());
                    c.positions.insert(*pos);
                }
            }
        }
    }
    let asked: BTreeMap<u64, (usize, u64, String)> = chains
        .into_iter()
        .filter(|(id, _)| wanted.contains(id))
        .filter_map(|(id, c)| {
            let ([f], [len], [var]) = (
                &c.functions.into_iter().collect::<Vec<_>>()[..],
                &c.lens.into_iter().collect::<Vec<_>>()[..],
                &c.vars.into_iter().collect::<Vec<_>>()[..],
            ) else {
                return None;
            };
            (*len >= 1 && (1..=*len).all(|p| c.positions.contains(&p)))
                .then(|| (id, (*f, *len, var.clone())))
        })
        .collect();
    Some(asked)
}

/// Function `k` of `program`, as `f` (its copy), with a ghost local per chain of `asked` it
/// holds: set as the chain's positions are reached in order, reset where the chain breaks,
/// havocked by any call that may come back here; the chain's label at its last position.
fn instrument(
    program: &Program,
    k: usize,
    f: &mut crate::ir::Function,
    asked: &BTreeMap<u64, (usize, u64, String)>,
    reaches: &BTreeMap<String, BTreeSet<String>>,
) {
    let mine: Vec<(u64, u64, String)> = asked
        .iter()
        .filter(|(_, (g, _, _))| *g == k)
        .map(|(id, (_, len, var))| (*id, *len, var.clone()))
        .collect();
    // Code outside the program may call back into it, through any function it can name
    // or was given: does any such function lead here? (Asked only where chains are.)
    let from_outside = !mine.is_empty()
        && program.functions.iter().any(|h| {
            let callable = h.linkage != crate::ir::Linkage::Internal
                || program
                    .function_uses
                    .get(&h.name)
                    .is_none_or(|u| u.referenced);
            callable && reaches.get(&h.name).is_some_and(|r| r.contains(&f.name))
        });
    // One ghost local per chain of the function.
    let mut ghost: BTreeMap<u64, LocalId> = BTreeMap::new();
    for (id, _, _) in &mine {
        ghost.insert(*id, LocalId(f.locals.len() as u32));
        f.locals.push(Local {
            name: format!("__cp_chain{id}"),
            ty: CType::INT,
            is_param: false,
            address_taken: false,
            volatile: false,
            is_static: false,
        });
    }
    let read = |g: LocalId| Expr::read(LValue::Var(VarRef::Local(g)), CType::INT);
    let int = |v: u64| Expr::int_const(i128::from(v), crate::ir::IntKind::Int);
    let bin = |op: BinOp, a: Expr, b: Expr| {
        Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), CType::INT)
    };
    let set = |g: LocalId, e: Expr, loc| Stmt {
        kind: StmtKind::Assign {
            dst: LValue::Var(VarRef::Local(g)),
            src: e,
        },
        loc,
    };
    let name = f.name.clone();
    for b in &mut f.blocks {
        let stmts = std::mem::take(&mut b.stmts);
        for s in stmts {
            match &s.kind {
                StmtKind::Label { .. } => {}
                StmtKind::Sequence(SequenceMark::Position {
                    id, pos, len, cond, ..
                }) => {
                    let Some(&g) = ghost.get(id) else { continue };
                    // Reached in order: the condition, and the position before it last.
                    let advance = if *pos == 1 {
                        cond.clone()
                    } else {
                        bin(
                            BinOp::LogAnd,
                            cond.clone(),
                            bin(BinOp::Eq, read(g), int(pos - 1)),
                        )
                    };
                    if pos == len {
                        b.stmts.push(Stmt {
                            kind: StmtKind::Label {
                                id: *id,
                                tag: String::new(),
                                pred: advance.clone(),
                                text: String::new(),
                                bindings: Vec::new(),
                            },
                            loc: s.loc,
                        });
                    }
                    let next = Expr::new(
                        ExprKind::Cond(Box::new(advance), Box::new(int(*pos)), Box::new(read(g))),
                        CType::INT,
                    );
                    b.stmts.push(set(g, next, s.loc));
                }
                StmtKind::Sequence(SequenceMark::Break { var }) => {
                    // A chain under way starts over; a completed one stays so.
                    for (id, len, v) in &mine {
                        if v == var {
                            let g = ghost[id];
                            let next = Expr::new(
                                ExprKind::Cond(
                                    Box::new(bin(BinOp::Eq, read(g), int(*len))),
                                    Box::new(int(*len)),
                                    Box::new(int(0)),
                                ),
                                CType::INT,
                            );
                            b.stmts.push(set(g, next, s.loc));
                        }
                    }
                }
                StmtKind::Call { callee, .. } => {
                    let again = from_outside
                        || match callee {
                            Callee::Indirect(_) => true,
                            Callee::Direct(c) => reaches.get(c).is_some_and(|r| r.contains(&name)),
                        };
                    b.stmts.push(s.clone());
                    if again {
                        for &g in ghost.values() {
                            let any = Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                            b.stmts.push(set(g, any, s.loc));
                        }
                    }
                }
                _ => b.stmts.push(s),
            }
        }
    }
}

/// Per function of the program, the functions of the program it may call directly or through
/// direct calls, itself included.
fn reaching(program: &Program) -> BTreeMap<String, BTreeSet<String>> {
    let own = program
        .functions
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                (
                    BTreeSet::from([f.name.clone()]),
                    crate::ir::direct_callees(f),
                ),
            )
        })
        .collect();
    crate::cfg::callgraph::close_over_calls(own, |a, b| a.extend(b.iter().cloned()), |_| None)
}
