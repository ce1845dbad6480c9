//! SMT-LIB 2 text of a question, written from our own terms (no solver involved), so that a
//! user can replay any question with any solver: one `define-fun` per shared term, in
//! dependency order, then the context and the goal as assertions and `(check-sat)`.
//! Floating-point terms turn floats back into bit patterns with `fp.to_ieee_bv`, an extension
//! of Z3's (SMT-LIB has no such function).

use std::collections::HashSet;
use std::fmt::Write;

use super::{Memory, Query};
use crate::vc::fp::{canonical_nan, format};
use crate::vc::term::{BvOp, CmpOp, FpCmpOp, FpOp, FpUnOp, Node, Sort, Terms, T};

fn sort(s: Sort) -> String {
    match s {
        Sort::Bool => "Bool".into(),
        Sort::Bv(w) => format!("(_ BitVec {w})"),
        Sort::Mem => "(Array (_ BitVec 64) (_ BitVec 8))".into(),
    }
}

/// A variable's symbol: its id and name hint, quoted (hints come from C names and paths).
fn var_symbol(terms: &Terms, id: u32) -> String {
    let hint: String = terms
        .var_names
        .get(id as usize)
        .map_or("", String::as_str)
        .chars()
        .filter(|c| *c != '|' && *c != '\\' && !c.is_control())
        .collect();
    format!("|v{id}_{hint}|")
}

fn bv_op(op: BvOp) -> &'static str {
    match op {
        BvOp::Add => "bvadd",
        BvOp::Sub => "bvsub",
        BvOp::Mul => "bvmul",
        BvOp::UDiv => "bvudiv",
        BvOp::SDiv => "bvsdiv",
        BvOp::URem => "bvurem",
        BvOp::SRem => "bvsrem",
        BvOp::Shl => "bvshl",
        BvOp::LShr => "bvlshr",
        BvOp::AShr => "bvashr",
        BvOp::And => "bvand",
        BvOp::Or => "bvor",
        BvOp::Xor => "bvxor",
    }
}

fn cmp_op(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Ult => "bvult",
        CmpOp::Ule => "bvule",
        CmpOp::Slt => "bvslt",
        CmpOp::Sle => "bvsle",
    }
}

/// How a term is referred to: a literal or symbol for leaves, `tN` for the others.
fn name(terms: &Terms, t: T, abstract_memory: bool) -> String {
    match terms.node(t) {
        Node::True => "true".into(),
        Node::False => "false".into(),
        Node::Bv { width, value } => format!("(_ bv{value} {width})"),
        Node::Var { id, .. } => var_symbol(terms, *id),
        Node::Select { .. } if abstract_memory => format!("|read{}|", t.0),
        _ => format!("t{}", t.0),
    }
}

fn join(terms: &Terms, xs: &[T], abstract_memory: bool) -> String {
    xs.iter()
        .map(|x| name(terms, *x, abstract_memory))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The body of a non-leaf term's definition.
fn body(terms: &Terms, t: T, abstract_memory: bool) -> String {
    let n = |x: &T| name(terms, *x, abstract_memory);
    match terms.node(t) {
        Node::Not(a) => format!("(not {})", n(a)),
        Node::And(xs) if xs.is_empty() => "true".into(),
        Node::Or(xs) if xs.is_empty() => "false".into(),
        Node::And(xs) => format!("(and {})", join(terms, xs, abstract_memory)),
        Node::Or(xs) => format!("(or {})", join(terms, xs, abstract_memory)),
        Node::Ite(c, a, b) => format!("(ite {} {} {})", n(c), n(a), n(b)),
        Node::Eq(a, b) => format!("(= {} {})", n(a), n(b)),
        Node::BvBin(op, a, b) => format!("({} {} {})", bv_op(*op), n(a), n(b)),
        Node::BvNot(a) => format!("(bvnot {})", n(a)),
        Node::BvNeg(a) => format!("(bvneg {})", n(a)),
        Node::Cmp(op, a, b) => format!("({} {} {})", cmp_op(*op), n(a), n(b)),
        Node::Extract { hi, lo, arg } => format!("((_ extract {hi} {lo}) {})", n(arg)),
        Node::ZeroExt { by, arg } => format!("((_ zero_extend {by}) {})", n(arg)),
        Node::SignExt { by, arg } => format!("((_ sign_extend {by}) {})", n(arg)),
        Node::Concat(a, b) => format!("(concat {} {})", n(a), n(b)),
        Node::Select { mem, addr } => format!("(select {} {})", n(mem), n(addr)),
        Node::Store { mem, addr, byte } => {
            format!("(store {} {} {})", n(mem), n(addr), n(byte))
        }
        Node::FpBin(op, a, b) => {
            let op = match op {
                FpOp::Add => "fp.add",
                FpOp::Sub => "fp.sub",
                FpOp::Mul => "fp.mul",
                FpOp::Div => "fp.div",
            };
            let w = terms.width(t);
            let r = format!("({op} RNE {} {})", float(w, &n(a)), float(w, &n(b)));
            pattern(w, &r)
        }
        Node::FpUn(op, a) => {
            let op = match op {
                FpUnOp::Sqrt => "fp.sqrt RNE",
                FpUnOp::Floor => "fp.roundToIntegral RTN",
                FpUnOp::Ceil => "fp.roundToIntegral RTP",
                FpUnOp::Trunc => "fp.roundToIntegral RTZ",
                FpUnOp::Round => "fp.roundToIntegral RNA",
            };
            let w = terms.width(t);
            pattern(w, &format!("({op} {})", float(w, &n(a))))
        }
        Node::FpCmp(op, a, b) => {
            let op = match op {
                FpCmpOp::Lt => "fp.lt",
                FpCmpOp::Le => "fp.leq",
                FpCmpOp::Eq => "fp.eq",
            };
            let w = terms.width(*a);
            format!("({op} {} {})", float(w, &n(a)), float(w, &n(b)))
        }
        Node::FpOfInt { signed, width, arg } => {
            let (e, s) = format(*width);
            let to = if *signed { "to_fp" } else { "to_fp_unsigned" };
            pattern(*width, &format!("((_ {to} {e} {s}) RNE {})", n(arg)))
        }
        Node::FpToInt { signed, width, arg } => {
            let to = if *signed { "fp.to_sbv" } else { "fp.to_ubv" };
            let f = float(terms.width(*arg), &n(arg));
            format!("((_ {to} {width}) RTZ {f})")
        }
        Node::FpResize { width, arg } => {
            let (e, s) = format(*width);
            let f = float(terms.width(*arg), &n(arg));
            pattern(*width, &format!("((_ to_fp {e} {s}) RNE {f})"))
        }
        Node::True | Node::False | Node::Bv { .. } | Node::Var { .. } => name(terms, t, false),
    }
}

/// The float whose pattern of `width` bits is the term `bits`.
fn float(width: u32, bits: &str) -> String {
    let (e, s) = format(width);
    format!("((_ to_fp {e} {s}) {bits})")
}

/// The pattern of the float term `f`, every NaN as the canonical one.
fn pattern(width: u32, f: &str) -> String {
    let nan = canonical_nan(width);
    format!("(ite (fp.isNaN {f}) (_ bv{nan} {width}) (fp.to_ieee_bv {f}))")
}

/// The SMT-LIB 2 script of a question; `answer` (covprune's) goes in a comment at the top.
pub fn query(q: &Query, answer: &str) -> String {
    let terms = q.terms;
    let abstract_memory = q.memory == Memory::Abstract;
    // Terms in dependency order (operands first), iteratively: formulas nest deeply.
    let mut order: Vec<T> = Vec::new();
    let mut done: HashSet<T> = HashSet::new();
    let roots: Vec<T> = q.context.iter().copied().chain([q.goal]).collect();
    for &root in &roots {
        let mut stack = vec![(root, false)];
        while let Some((t, expanded)) = stack.pop() {
            if done.contains(&t) {
                continue;
            }
            let node = terms.node(t);
            let leaf = abstract_memory && matches!(node, Node::Select { .. });
            if expanded || leaf {
                done.insert(t);
                order.push(t);
                continue;
            }
            stack.push((t, true));
            for c in node.operands().into_iter().rev() {
                if !done.contains(&c) {
                    stack.push((c, false));
                }
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "; covprune question; covprune's answer: {answer}");
    if abstract_memory {
        let _ = writeln!(
            out,
            "; memory reads are unconstrained bytes (abstract memory)"
        );
    }
    // With floats, a logic that has them (SMT-LIB names none with arrays, bit-vectors and
    // floats together).
    let logic = if roots.iter().any(|&t| terms.uses_floats(t)) {
        "ALL"
    } else {
        "QF_AUFBV"
    };
    let _ = writeln!(out, "(set-logic {logic})");
    for &t in &order {
        let node = terms.node(t);
        match node {
            Node::True | Node::False | Node::Bv { .. } => {}
            Node::Var { id, sort: s } => {
                let _ = writeln!(
                    out,
                    "(declare-const {} {})",
                    var_symbol(terms, *id),
                    sort(*s)
                );
            }
            Node::Select { .. } if abstract_memory => {
                let _ = writeln!(out, "(declare-const |read{}| (_ BitVec 8))", t.0);
            }
            _ => {
                let _ = writeln!(
                    out,
                    "(define-fun t{} () {} {})",
                    t.0,
                    sort(terms.sort(t)),
                    body(terms, t, abstract_memory)
                );
            }
        }
    }
    for &c in q.context {
        let _ = writeln!(out, "(assert {})", name(terms, c, abstract_memory));
    }
    let _ = writeln!(out, "(assert {})", name(terms, q.goal, abstract_memory));
    out.push_str("(check-sat)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask<'a>(terms: &'a Terms, context: &'a [T], goal: T, memory: Memory) -> Query<'a> {
        Query {
            terms,
            context,
            goal,
            observe: &[],
            memory,
            units_scale: 1,
            units_cap: None,
        }
    }

    #[test]
    fn a_bitvector_question_prints_as_smtlib() {
        let mut t = Terms::default();
        let x = t.var(Sort::Bv(8), "x");
        let one = t.bv(8, 1);
        let y = t.bin(BvOp::Add, x, one);
        let wrap = t.cmp(CmpOp::Ult, y, x);
        let signed = t.cmp(CmpOp::Slt, x, one);
        let text = query(&ask(&t, &[signed], wrap, Memory::Bytes), "sat");
        assert_eq!(
            text,
            "; covprune question; covprune's answer: sat\n\
             (set-logic QF_AUFBV)\n\
             (declare-const |v0_x| (_ BitVec 8))\n\
             (define-fun t4 () Bool (bvslt |v0_x| (_ bv1 8)))\n\
             (define-fun t2 () (_ BitVec 8) (bvadd |v0_x| (_ bv1 8)))\n\
             (define-fun t3 () Bool (bvult t2 |v0_x|))\n\
             (assert t4)\n\
             (assert t3)\n\
             (check-sat)\n"
        );
    }

    #[test]
    fn abstract_memory_reads_are_declared_bytes() {
        let mut t = Terms::default();
        let mem = t.var(Sort::Mem, "m");
        let a = t.var(Sort::Bv(64), "p/q|r");
        let v = t.bv(8, 7);
        let m2 = t.store(mem, a, v);
        let r = t.select(m2, a);
        let stored = t.var(Sort::Bv(8), "b");
        let other = t.select(mem, a);
        let eq = t.eq(other, stored);
        let bytes = query(&ask(&t, &[], eq, Memory::Bytes), "sat");
        assert!(bytes.contains("(declare-const |v0_m| (Array (_ BitVec 64) (_ BitVec 8)))"));
        assert!(bytes.contains("(declare-const |v1_p/qr| (_ BitVec 64))"));
        assert!(bytes.contains("(select |v0_m| |v1_p/qr|)"));
        let abs = query(&ask(&t, &[], eq, Memory::Abstract), "unknown (timeout)");
        assert!(abs.contains("(declare-const |read"), "{abs}");
        assert!(!abs.contains("select"), "{abs}");
        // A select of a store folds to the stored byte: no read left at all.
        assert_eq!(t.node(r), &Node::Bv { width: 8, value: 7 });
    }
}
