//! The formulas' terms as Z3 terms, each translated once per session (shared subterms
//! included), memory reads byte by byte.

use z3::ast::{Array, Bool, Dynamic, BV};

use z3::Sort as ZSort;

use super::{bv_const, float, Session, MAX_READ_CASES};
use crate::vc::term::{BvOp, CmpOp, Node, Sort, Terms, T};

impl Session {
    pub(super) fn boolean(&mut self, terms: &Terms, t: T) -> Bool {
        self.translate(terms, t)
            .as_bool()
            .expect("the encoding only asks boolean terms as formulas")
    }

    pub(super) fn bv(&mut self, terms: &Terms, t: T) -> BV {
        self.translate(terms, t)
            .as_bv()
            .expect("the encoding is well-sorted: bitvector operands")
    }

    pub(super) fn array(&mut self, terms: &Terms, t: T) -> Array {
        self.translate(terms, t)
            .as_array()
            .expect("the encoding is well-sorted: memory operands")
    }

    /// Translates a term (iteratively over its not-yet-translated operands, so that deep
    /// formulas cannot overflow the stack).
    pub(super) fn translate(&mut self, terms: &Terms, root: T) -> Dynamic {
        if let Some(d) = self.cache.get(&root) {
            return d.clone();
        }
        let mut stack = vec![(root, false)];
        while let Some((t, children_done)) = stack.pop() {
            if self.cache.contains_key(&t) {
                continue;
            }
            if !children_done {
                stack.push((t, true));
                if let Node::Select { addr, .. } = *terms.node(t) {
                    if self.abstract_mode {
                        continue; // a fresh byte: its operands are not needed
                    }
                    // The memory is walked by `read_byte`, not translated as an array.
                    if !self.cache.contains_key(&addr) {
                        stack.push((addr, false));
                    }
                    continue;
                }
                for c in terms.node(t).operands() {
                    if !self.cache.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let d = self.build(terms, t);
            self.cache.insert(t, d);
        }
        self.cache[&root].clone()
    }

    /// The byte at `addr` (translated: `a`) of memory `mem`, as the cases of the writes and
    /// joins before the read: `select(store(m, w, b), a)` is `ite(a = w, b, select(m, a))` and
    /// `select(ite(c, m1, m2), a)` is `ite(c, select(m1, a), select(m2, a))`, the array axioms
    /// themselves, so the formula is the same; only free memories (at entry, after a havoc)
    /// are read as arrays. Z3 then finds models of memory-heavy questions sooner (Siemens,
    /// 2026-11-24: half the timeouts). After `steps` cases the rest is read as an array.
    pub(super) fn read_byte(
        &mut self,
        terms: &Terms,
        mem: T,
        addr: T,
        a: &BV,
        steps: &mut usize,
    ) -> BV {
        if let Some(v) = self.reads.get(&(mem, addr)) {
            return v.clone();
        }
        // Writes whose address the read's differs from by their form alone are passed over,
        // and one at the very same cell is the value read: no case for the solver to split on.
        match terms.read_past_writes(mem, addr) {
            Ok(byte) => {
                let v = self.bv(terms, byte);
                self.reads.insert((mem, addr), v.clone());
                return v;
            }
            Err(rest) if rest != mem => {
                let v = self.read_byte(terms, rest, addr, a, steps);
                self.reads.insert((mem, addr), v.clone());
                return v;
            }
            Err(_) => {}
        }
        let v = match *terms.node(mem) {
            Node::Store {
                mem: rest,
                addr: w,
                byte,
            } if *steps > 0 => {
                *steps -= 1;
                let below = self.read_byte(terms, rest, addr, a, steps);
                let w = self.bv(terms, w);
                let b = self.bv(terms, byte);
                a.eq(&w).ite(&b, &below)
            }
            Node::Ite(c, m1, m2) if *steps > 0 => {
                *steps -= 1;
                let x = self.read_byte(terms, m1, addr, a, steps);
                let y = self.read_byte(terms, m2, addr, a, steps);
                let c = self.boolean(terms, c);
                c.ite(&x, &y)
            }
            _ => {
                let m = self.array(terms, mem);
                m.select(a)
                    .as_bv()
                    .expect("the encoding is well-sorted: memories hold bytes")
            }
        };
        self.reads.insert((mem, addr), v.clone());
        v
    }

    /// Builds the Z3 term of `t`, whose operands are already translated.
    pub(super) fn build(&mut self, terms: &Terms, t: T) -> Dynamic {
        let byte_sort = ZSort::bitvector(8);
        let addr_sort = ZSort::bitvector(64);
        match terms.node(t).clone() {
            Node::True => Dynamic::from_ast(&Bool::from_bool(true)),
            Node::False => Dynamic::from_ast(&Bool::from_bool(false)),
            Node::Bv { width, value } => Dynamic::from_ast(&bv_const(width, value)),
            Node::Var { id, sort } => {
                let name = format!(
                    "v{id}_{}",
                    terms.var_names.get(id as usize).map_or("", |s| s.as_str())
                );
                match sort {
                    Sort::Bool => Dynamic::from_ast(&Bool::new_const(name)),
                    Sort::Bv(w) => Dynamic::from_ast(&BV::new_const(name, w)),
                    Sort::Mem => Dynamic::from_ast(&Array::new_const(name, &addr_sort, &byte_sort)),
                }
            }
            Node::Not(a) => Dynamic::from_ast(&self.boolean(terms, a).not()),
            Node::And(xs) => {
                let bs: Vec<Bool> = xs.iter().map(|x| self.boolean(terms, *x)).collect();
                Dynamic::from_ast(&Bool::and(&bs))
            }
            Node::Or(xs) => {
                let bs: Vec<Bool> = xs.iter().map(|x| self.boolean(terms, *x)).collect();
                Dynamic::from_ast(&Bool::or(&bs))
            }
            Node::Ite(c, a, b) => {
                let c = self.boolean(terms, c);
                let a = self.translate(terms, a);
                let b = self.translate(terms, b);
                c.ite(&a, &b)
            }
            Node::Eq(a, b) => {
                let a = self.translate(terms, a);
                let b = self.translate(terms, b);
                Dynamic::from_ast(&a.eq(&b))
            }
            Node::BvBin(op, a, b) => {
                let a = self.bv(terms, a);
                let b = self.bv(terms, b);
                let r = match op {
                    BvOp::Add => a.bvadd(&b),
                    BvOp::Sub => a.bvsub(&b),
                    BvOp::Mul => a.bvmul(&b),
                    BvOp::UDiv => a.bvudiv(&b),
                    BvOp::SDiv => a.bvsdiv(&b),
                    BvOp::URem => a.bvurem(&b),
                    BvOp::SRem => a.bvsrem(&b),
                    BvOp::Shl => a.bvshl(&b),
                    BvOp::LShr => a.bvlshr(&b),
                    BvOp::AShr => a.bvashr(&b),
                    BvOp::And => a.bvand(&b),
                    BvOp::Or => a.bvor(&b),
                    BvOp::Xor => a.bvxor(&b),
                };
                Dynamic::from_ast(&r)
            }
            Node::BvNot(a) => Dynamic::from_ast(&self.bv(terms, a).bvnot()),
            Node::BvNeg(a) => Dynamic::from_ast(&self.bv(terms, a).bvneg()),
            Node::Cmp(op, a, b) => {
                let a = self.bv(terms, a);
                let b = self.bv(terms, b);
                let r = match op {
                    CmpOp::Ult => a.bvult(&b),
                    CmpOp::Ule => a.bvule(&b),
                    CmpOp::Slt => a.bvslt(&b),
                    CmpOp::Sle => a.bvsle(&b),
                };
                Dynamic::from_ast(&r)
            }
            Node::Extract { hi, lo, arg } => {
                Dynamic::from_ast(&self.bv(terms, arg).extract(hi, lo))
            }
            Node::ZeroExt { by, arg } => Dynamic::from_ast(&self.bv(terms, arg).zero_ext(by)),
            Node::SignExt { by, arg } => Dynamic::from_ast(&self.bv(terms, arg).sign_ext(by)),
            Node::Concat(a, b) => {
                let a = self.bv(terms, a);
                let b = self.bv(terms, b);
                Dynamic::from_ast(&a.concat(&b))
            }
            Node::Select { .. } if self.abstract_mode => {
                Dynamic::from_ast(&BV::fresh_const("mem_read", 8))
            }
            Node::Select { mem, addr } => {
                let a = self.bv(terms, addr);
                // A read at an address that itself reads memory is left to the solver's
                // arrays: cases over its writes compare that address, already cases of its
                // own, with each write's, and Z3 took minutes to take in such facts (SQLite's
                // `exprCodeBetween`, whose zeroed structs hold the pointers it follows).
                let mut steps = if terms.reads_memory(addr, &mut self.reading_addresses) {
                    0
                } else {
                    MAX_READ_CASES
                };
                Dynamic::from_ast(&self.read_byte(terms, mem, addr, &a, &mut steps))
            }
            Node::Store { mem, addr, byte } => {
                let m = self.array(terms, mem);
                let a = self.bv(terms, addr);
                let b = self.bv(terms, byte);
                Dynamic::from_ast(&m.store(&a, &b))
            }
            node @ (Node::FpBin(..)
            | Node::FpUn(..)
            | Node::FpCmp(..)
            | Node::FpOfInt { .. }
            | Node::FpToInt { .. }
            | Node::FpResize { .. }) => float::build(&node, |x| self.bv(terms, x)),
        }
    }
}
