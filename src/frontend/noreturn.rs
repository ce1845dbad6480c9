//! Finds program functions that can never return (every path ends in `exit`, `abort`, ... or in
//! another such function) and ends the blocks of their callers at each call to them.

use std::collections::HashSet;

use crate::ir::{BlockId, Callee, Program, StmtKind, Terminator};

/// Marks never-returning functions and cuts every block at a call to one (fixpoint over the
/// call graph, since "never returns" spreads from callee to caller).
pub fn propagate(program: &mut Program) {
    let mut never: HashSet<String> = HashSet::new();
    loop {
        let mut changed = false;
        for f in &program.functions {
            if never.contains(&f.name) {
                continue;
            }
            if !can_return(f, &never) {
                never.insert(f.name.clone());
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if never.is_empty() {
        return;
    }
    for f in &mut program.functions {
        if never.contains(&f.name) {
            f.ty.noreturn = true;
        }
        let mut unreachable = Vec::new();
        for b in &mut f.blocks {
            if let Some(cut) = b.stmts.iter().position(|s| calls_any(&s.kind, &never)) {
                let rest = b.stmts.split_off(cut + 1);
                let term = std::mem::replace(&mut b.term, Terminator::NoReturn);
                // Labels after the call stay in the program, in a block nothing reaches, so
                // that they get a verdict (infeasible) instead of vanishing.
                if rest
                    .iter()
                    .any(|s| matches!(s.kind, StmtKind::Label { .. }))
                {
                    unreachable.push(crate::ir::Block {
                        loc: rest[0].loc,
                        stmts: rest,
                        term,
                        loop_head: false,
                    });
                }
            }
        }
        f.blocks.extend(unreachable);
    }
}

fn calls_any(kind: &StmtKind, names: &HashSet<String>) -> bool {
    matches!(kind, StmtKind::Call { callee: Callee::Direct(n), .. } if names.contains(n))
}

/// True when some `return` is reachable from the entry, counting calls to `never` as ends.
fn can_return(f: &crate::ir::Function, never: &HashSet<String>) -> bool {
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = vec![f.entry];
    while let Some(b) = stack.pop() {
        let i = b.0 as usize;
        if i >= seen.len() || seen[i] {
            continue;
        }
        seen[i] = true;
        let blk = f.block(b);
        if blk.stmts.iter().any(|s| calls_any(&s.kind, never)) {
            continue;
        }
        if matches!(blk.term, Terminator::Return(_)) {
            return true;
        }
        stack.extend(f.successors(BlockId(b.0)));
    }
    false
}
