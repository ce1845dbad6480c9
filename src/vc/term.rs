//! Formulas as our own hash-consed terms (booleans, bitvectors, byte-addressed memories), with
//! smart constructors that fold constants as terms are built. Only `smt` translates them to Z3.

use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct T(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sort {
    Bool,
    Bv(u32),
    /// An array from 64-bit addresses to bytes.
    Mem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BvOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Ult,
    Ule,
    Slt,
    Sle,
}

/// IEEE-754 binary operations on floating-point bit patterns, rounding to nearest, ties to
/// even (see [`crate::vc::fp`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// IEEE-754 operations of one operand: the correctly rounded square root, and rounding to an
/// integral value downwards, upwards, towards zero, or to nearest with ties away from zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpUnOp {
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    Round,
}

/// IEEE-754 comparisons (false when an operand is NaN; `-0 == +0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpCmpOp {
    Lt,
    Le,
    Eq,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    True,
    False,
    Bv {
        width: u32,
        value: u128,
    },
    /// A free symbol; the name is only a hint for dumps.
    Var {
        id: u32,
        sort: Sort,
    },
    Not(T),
    And(Vec<T>),
    Or(Vec<T>),
    Ite(T, T, T),
    Eq(T, T),
    BvBin(BvOp, T, T),
    BvNot(T),
    BvNeg(T),
    Cmp(CmpOp, T, T),
    Extract {
        hi: u32,
        lo: u32,
        arg: T,
    },
    ZeroExt {
        by: u32,
        arg: T,
    },
    SignExt {
        by: u32,
        arg: T,
    },
    Concat(T, T),
    Select {
        mem: T,
        addr: T,
    },
    Store {
        mem: T,
        addr: T,
        byte: T,
    },
    /// Floating-point terms read and give bit patterns (32 bits: binary32, 64: binary64); a
    /// NaN result is one fixed NaN pattern (see [`crate::vc::fp`]).
    FpBin(FpOp, T, T),
    FpUn(FpUnOp, T),
    FpCmp(FpCmpOp, T, T),
    /// The integer `arg` (signed or not) rounded to the floating-point format of `width` bits.
    FpOfInt {
        signed: bool,
        width: u32,
        arg: T,
    },
    /// The floating-point `arg` rounded towards zero to an integer of `width` bits (meaningful
    /// only where it fits: the encoder guards it).
    FpToInt {
        signed: bool,
        width: u32,
        arg: T,
    },
    /// The floating-point `arg` rounded to the format of `width` bits.
    FpResize {
        width: u32,
        arg: T,
    },
}

impl Node {
    /// Pushes the operands of a term, in order, onto `out` (none for constants and variables):
    /// the one walk over term shapes, allocation-free for the cone's hot loop.
    pub fn push_operands(&self, out: &mut Vec<T>) {
        match self {
            Node::True | Node::False | Node::Bv { .. } | Node::Var { .. } => {}
            Node::Not(a) | Node::BvNot(a) | Node::BvNeg(a) | Node::FpUn(_, a) => out.push(*a),
            Node::Extract { arg, .. }
            | Node::ZeroExt { arg, .. }
            | Node::SignExt { arg, .. }
            | Node::FpOfInt { arg, .. }
            | Node::FpToInt { arg, .. }
            | Node::FpResize { arg, .. } => out.push(*arg),
            Node::And(xs) | Node::Or(xs) => out.extend(xs.iter().copied()),
            Node::Ite(a, b, c) => out.extend([*a, *b, *c]),
            Node::Eq(a, b)
            | Node::BvBin(_, a, b)
            | Node::Cmp(_, a, b)
            | Node::Concat(a, b)
            | Node::FpBin(_, a, b)
            | Node::FpCmp(_, a, b) => out.extend([*a, *b]),
            Node::Select { mem, addr } => out.extend([*mem, *addr]),
            Node::Store { mem, addr, byte } => out.extend([*mem, *addr, *byte]),
        }
    }

    /// Is this a floating-point operation?
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Node::FpBin(..)
                | Node::FpUn(..)
                | Node::FpCmp(..)
                | Node::FpOfInt { .. }
                | Node::FpToInt { .. }
                | Node::FpResize { .. }
        )
    }

    /// The operands of a term, in order.
    pub fn operands(&self) -> Vec<T> {
        let mut out = Vec::new();
        self.push_operands(&mut out);
        out
    }
}

/// A read passes over at most this many writes to other cells before it is left to the solver.
const MAX_SKIPPED_WRITES: usize = 65_536;

/// The term arena of one function encoding.
#[derive(Default)]
pub struct Terms {
    nodes: Vec<Node>,
    sorts: Vec<Sort>,
    dedup: HashMap<Node, T>,
    n_vars: u32,
    /// Name hints of variables, by variable id.
    pub var_names: Vec<String>,
    /// The base addresses of distinct C objects (variables, not string literals, which may
    /// share storage), with their sizes in bytes: see [`Terms::same_cell`].
    objects: HashMap<T, u64>,
    /// By term: does it, or a term below it, use a floating-point operation?
    floats_below: Vec<bool>,
    /// Operands of the term being interned (kept to avoid an allocation per term).
    scratch: Vec<T>,
}

fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

pub(super) fn to_signed(v: u128, width: u32) -> i128 {
    if width >= 128 {
        return v as i128;
    }
    if v >> (width - 1) & 1 == 1 {
        (v as i128) - (1i128 << width)
    } else {
        v as i128
    }
}

impl Terms {
    /// Records `base` as the address of an object of `size` bytes that no other recorded
    /// object overlaps (C objects alive together never do; the encoder states the same as
    /// layout facts).
    pub fn register_object(&mut self, base: T, size: u64) {
        self.objects.insert(base, size);
    }

    /// `t` as a term plus a constant offset (`(x + 4) + 1` is `x` and 5), at 64 bits; a
    /// constant has no term.
    fn base_and_offset(&self, mut t: T) -> (Option<T>, i128) {
        let mut off: i128 = 0;
        loop {
            match *self.node(t) {
                Node::Bv { value, .. } => return (None, off + to_signed(value, 64)),
                Node::BvBin(BvOp::Add, a, b) if self.width(t) == 64 => {
                    if let Some(c) = self.as_const(b) {
                        off += to_signed(c, 64);
                        t = a;
                    } else if let Some(c) = self.as_const(a) {
                        off += to_signed(c, 64);
                        t = b;
                    } else {
                        return (Some(t), off);
                    }
                }
                Node::BvBin(BvOp::Sub, a, b) if self.width(t) == 64 => match self.as_const(b) {
                    Some(c) => {
                        off -= to_signed(c, 64);
                        t = a;
                    }
                    None => return (Some(t), off),
                },
                _ => return (Some(t), off),
            }
        }
    }

    /// Are the 64-bit addresses `a` and `b` equal in every execution (`Some(true)`), different
    /// in every one (`Some(false)`), or is that not known from their form (`None`)? The same
    /// term (or none, for constants) plus two constants is equal exactly when the constants
    /// are (modulo 2^64); two addresses inside two different recorded objects
    /// ([`Terms::register_object`]), at constant offsets within their sizes, differ.
    pub fn same_cell(&self, a: T, b: T) -> Option<bool> {
        if a == b {
            return Some(true);
        }
        self.same_split_cell(self.base_and_offset(a), b)
    }

    /// [`Terms::same_cell`] with `a` already split by [`Terms::base_and_offset`] (a read
    /// compared with every write before it is split once).
    fn same_split_cell(&self, (x, i): (Option<T>, i128), b: T) -> Option<bool> {
        let (y, j) = self.base_and_offset(b);
        if x == y {
            return Some(i.rem_euclid(1 << 64) == j.rem_euclid(1 << 64));
        }
        let inside = |base: Option<T>, off: i128| {
            base.and_then(|t| self.objects.get(&t))
                .is_some_and(|&size| off >= 0 && off < i128::from(size))
        };
        (inside(x, i) && inside(y, j)).then_some(false)
    }

    /// Does `t`, or a term below it, use floating-point operations (which a solver must then
    /// know)?
    pub fn uses_floats(&self, t: T) -> bool {
        self.floats_below[t.0 as usize]
    }

    pub fn node(&self, t: T) -> &Node {
        &self.nodes[t.0 as usize]
    }
    pub fn sort(&self, t: T) -> Sort {
        self.sorts[t.0 as usize]
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    pub fn width(&self, t: T) -> u32 {
        match self.sort(t) {
            Sort::Bv(w) => w,
            _ => 0,
        }
    }

    pub(super) fn intern(&mut self, node: Node, sort: Sort) -> T {
        if let Some(&t) = self.dedup.get(&node) {
            return t;
        }
        let t = T(self.nodes.len() as u32);
        let mut operands = std::mem::take(&mut self.scratch);
        operands.clear();
        node.push_operands(&mut operands);
        let floats = node.is_float() || operands.iter().any(|c| self.uses_floats(*c));
        self.scratch = operands;
        self.floats_below.push(floats);
        self.nodes.push(node.clone());
        self.sorts.push(sort);
        self.dedup.insert(node, t);
        t
    }

    // ----- leaves -------------------------------------------------------------------------

    pub fn tru(&mut self) -> T {
        self.intern(Node::True, Sort::Bool)
    }
    pub fn fls(&mut self) -> T {
        self.intern(Node::False, Sort::Bool)
    }
    pub fn bool_const(&mut self, b: bool) -> T {
        if b {
            self.tru()
        } else {
            self.fls()
        }
    }
    pub fn bv(&mut self, width: u32, value: u128) -> T {
        self.intern(
            Node::Bv {
                width,
                value: value & mask(width),
            },
            Sort::Bv(width),
        )
    }
    pub fn bv_i(&mut self, width: u32, value: i128) -> T {
        self.bv(width, value as u128)
    }
    /// A fresh, unconstrained symbol.
    pub fn var(&mut self, sort: Sort, hint: &str) -> T {
        let id = self.n_vars;
        self.n_vars += 1;
        self.var_names.push(hint.to_string());
        self.intern(Node::Var { id, sort }, sort)
    }
    pub fn as_const(&self, t: T) -> Option<u128> {
        match self.node(t) {
            Node::Bv { value, .. } => Some(*value),
            _ => None,
        }
    }
    pub fn as_bool(&self, t: T) -> Option<bool> {
        match self.node(t) {
            Node::True => Some(true),
            Node::False => Some(false),
            _ => None,
        }
    }

    // ----- booleans -----------------------------------------------------------------------

    pub fn not(&mut self, a: T) -> T {
        match self.node(a).clone() {
            Node::True => self.fls(),
            Node::False => self.tru(),
            Node::Not(x) => x,
            _ => self.intern(Node::Not(a), Sort::Bool),
        }
    }

    /// `true ∧ A = A`, `false ∧ A = false`, nested conjunctions flattened.
    pub fn and(&mut self, items: &[T]) -> T {
        let mut out = Vec::with_capacity(items.len());
        for &x in items {
            match self.node(x) {
                Node::True => {}
                Node::False => return self.fls(),
                Node::And(inner) => out.extend(inner.iter().copied()),
                _ => out.push(x),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => self.tru(),
            1 => out[0],
            _ => self.intern(Node::And(out), Sort::Bool),
        }
    }
    pub fn and2(&mut self, a: T, b: T) -> T {
        self.and(&[a, b])
    }

    pub fn or(&mut self, items: &[T]) -> T {
        let mut out = Vec::with_capacity(items.len());
        for &x in items {
            match self.node(x) {
                Node::False => {}
                Node::True => return self.tru(),
                Node::Or(inner) => out.extend(inner.iter().copied()),
                _ => out.push(x),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => self.fls(),
            1 => out[0],
            _ => self.intern(Node::Or(out), Sort::Bool),
        }
    }
    pub fn or2(&mut self, a: T, b: T) -> T {
        self.or(&[a, b])
    }
    pub fn implies(&mut self, a: T, b: T) -> T {
        let na = self.not(a);
        self.or2(na, b)
    }

    pub fn ite(&mut self, c: T, a: T, b: T) -> T {
        if a == b {
            return a;
        }
        match self.as_bool(c) {
            Some(true) => return a,
            Some(false) => return b,
            None => {}
        }
        if self.sort(a) == Sort::Bool {
            match (self.as_bool(a), self.as_bool(b)) {
                (Some(true), Some(false)) => return c,
                (Some(false), Some(true)) => return self.not(c),
                _ => {}
            }
        }
        let sort = self.sort(a);
        self.intern(Node::Ite(c, a, b), sort)
    }

    pub fn eq(&mut self, a: T, b: T) -> T {
        if a == b {
            return self.tru();
        }
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            return self.bool_const(x == y);
        }
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        self.intern(Node::Eq(a, b), Sort::Bool)
    }

    // ----- bitvectors ---------------------------------------------------------------------

    pub fn bin(&mut self, op: BvOp, a: T, b: T) -> T {
        let w = self.width(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            if let Some(v) = fold_bin(op, x, y, w) {
                return self.bv(w, v);
            }
        }
        // Neutral elements keep the formulas small.
        match (op, self.as_const(a), self.as_const(b)) {
            (
                BvOp::Add | BvOp::Sub | BvOp::Or | BvOp::Xor | BvOp::Shl | BvOp::LShr | BvOp::AShr,
                _,
                Some(0),
            ) => return a,
            (BvOp::Add | BvOp::Or | BvOp::Xor, Some(0), _) => return b,
            (BvOp::Mul, _, Some(1)) => return a,
            (BvOp::Mul, Some(1), _) => return b,
            _ => {}
        }
        self.intern(Node::BvBin(op, a, b), Sort::Bv(w))
    }

    pub fn bvnot(&mut self, a: T) -> T {
        let w = self.width(a);
        if let Some(x) = self.as_const(a) {
            return self.bv(w, !x);
        }
        self.intern(Node::BvNot(a), Sort::Bv(w))
    }

    pub fn neg(&mut self, a: T) -> T {
        let w = self.width(a);
        if let Some(x) = self.as_const(a) {
            return self.bv(w, x.wrapping_neg());
        }
        self.intern(Node::BvNeg(a), Sort::Bv(w))
    }

    pub fn cmp(&mut self, op: CmpOp, a: T, b: T) -> T {
        let w = self.width(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let r = match op {
                CmpOp::Ult => x < y,
                CmpOp::Ule => x <= y,
                CmpOp::Slt => to_signed(x, w) < to_signed(y, w),
                CmpOp::Sle => to_signed(x, w) <= to_signed(y, w),
            };
            return self.bool_const(r);
        }
        if a == b {
            return self.bool_const(matches!(op, CmpOp::Ule | CmpOp::Sle));
        }
        self.intern(Node::Cmp(op, a, b), Sort::Bool)
    }

    pub fn extract(&mut self, hi: u32, lo: u32, a: T) -> T {
        let w = self.width(a);
        if lo == 0 && hi + 1 == w {
            return a;
        }
        if let Some(x) = self.as_const(a) {
            return self.bv(hi - lo + 1, x >> lo);
        }
        // extract of an extension that only reads the original bits
        if let Node::ZeroExt { arg, .. } | Node::SignExt { arg, .. } = *self.node(a) {
            let aw = self.width(arg);
            if hi < aw {
                return self.extract(hi, lo, arg);
            }
        }
        self.intern(Node::Extract { hi, lo, arg: a }, Sort::Bv(hi - lo + 1))
    }

    pub fn zext(&mut self, by: u32, a: T) -> T {
        if by == 0 {
            return a;
        }
        let w = self.width(a);
        if let Some(x) = self.as_const(a) {
            return self.bv(w + by, x);
        }
        self.intern(Node::ZeroExt { by, arg: a }, Sort::Bv(w + by))
    }

    pub fn sext(&mut self, by: u32, a: T) -> T {
        if by == 0 {
            return a;
        }
        let w = self.width(a);
        if let Some(x) = self.as_const(a) {
            return self.bv_i(w + by, to_signed(x, w));
        }
        self.intern(Node::SignExt { by, arg: a }, Sort::Bv(w + by))
    }

    /// `hi ++ lo` (the first argument is the most significant part).
    pub fn concat(&mut self, hi: T, lo: T) -> T {
        let (wh, wl) = (self.width(hi), self.width(lo));
        if let (Some(x), Some(y)) = (self.as_const(hi), self.as_const(lo)) {
            if wh + wl <= 128 {
                return self.bv(wh + wl, (x << wl) | y);
            }
        }
        self.intern(Node::Concat(hi, lo), Sort::Bv(wh + wl))
    }

    /// Resizes a bitvector to `width`, extending by sign or zero, or truncating.
    pub fn resize(&mut self, a: T, width: u32, signed: bool) -> T {
        let w = self.width(a);
        match w.cmp(&width) {
            std::cmp::Ordering::Equal => a,
            std::cmp::Ordering::Greater => self.extract(width - 1, 0, a),
            std::cmp::Ordering::Less => {
                if signed {
                    self.sext(width - w, a)
                } else {
                    self.zext(width - w, a)
                }
            }
        }
    }

    // ----- memory -------------------------------------------------------------------------

    pub fn select(&mut self, mem: T, addr: T) -> T {
        match self.read_past_writes(mem, addr) {
            Ok(byte) => byte,
            Err(mem) => self.intern(Node::Select { mem, addr }, Sort::Bv(8)),
        }
    }

    /// Reads the byte at `addr` of `mem` over the writes before it: the byte written at the
    /// same cell (`Ok`), skipping writes at cells that differ from the one read by their form
    /// ([`Terms::same_cell`]); else the memory left once those are skipped (`Err`), for the
    /// solver. Bounded: a read after a long run of writes elsewhere keeps the rest.
    pub fn read_past_writes(&self, mut mem: T, addr: T) -> Result<T, T> {
        let read = self.base_and_offset(addr);
        for _ in 0..MAX_SKIPPED_WRITES {
            let Node::Store {
                mem: m,
                addr: a,
                byte,
            } = *self.node(mem)
            else {
                break;
            };
            let same = if a == addr {
                Some(true)
            } else {
                self.same_split_cell(read, a)
            };
            match same {
                Some(true) => return Ok(byte),
                Some(false) => mem = m,
                None => break,
            }
        }
        Err(mem)
    }

    /// Does `t` read memory (contain a `Select`)? `memo` keeps the answers of the terms walked,
    /// so that a session asks about each subterm once.
    pub fn reads_memory(&self, t: T, memo: &mut HashMap<T, bool>) -> bool {
        let mut stack = vec![(t, false)];
        let mut operands = Vec::new();
        while let Some((u, children_done)) = stack.pop() {
            if memo.contains_key(&u) {
                continue;
            }
            let node = self.node(u);
            if matches!(node, Node::Select { .. }) {
                memo.insert(u, true);
                continue;
            }
            operands.clear();
            node.push_operands(&mut operands);
            if children_done {
                let any = operands.iter().any(|c| memo[c]);
                memo.insert(u, any);
            } else {
                stack.push((u, true));
                stack.extend(operands.iter().map(|&c| (c, false)));
            }
        }
        memo[&t]
    }

    pub fn store(&mut self, mem: T, addr: T, byte: T) -> T {
        self.intern(Node::Store { mem, addr, byte }, Sort::Mem)
    }

    /// Reads `bytes` bytes at `addr`, little-endian.
    pub fn load(&mut self, mem: T, addr: T, bytes: u32) -> T {
        let mut acc: Option<T> = None;
        for k in 0..bytes {
            let off = self.bv(64, u128::from(k));
            let a = self.bin(BvOp::Add, addr, off);
            let b = self.select(mem, a);
            acc = Some(match acc {
                None => b,
                Some(lo) => self.concat(b, lo),
            });
        }
        acc.unwrap_or_else(|| self.bv(8, 0))
    }

    /// Writes the bitvector `value` (a whole number of bytes) at `addr`, little-endian.
    pub fn store_value(&mut self, mem: T, addr: T, value: T) -> T {
        let bytes = self.width(value) / 8;
        let mut m = mem;
        for k in 0..bytes {
            let off = self.bv(64, u128::from(k));
            let a = self.bin(BvOp::Add, addr, off);
            let b = self.extract(8 * k + 7, 8 * k, value);
            m = self.store(m, a, b);
        }
        m
    }
}

fn fold_bin(op: BvOp, x: u128, y: u128, w: u32) -> Option<u128> {
    let m = mask(w);
    let (sx, sy) = (to_signed(x, w), to_signed(y, w));
    Some(
        match op {
            BvOp::Add => x.wrapping_add(y),
            BvOp::Sub => x.wrapping_sub(y),
            BvOp::Mul => x.wrapping_mul(y),
            BvOp::And => x & y,
            BvOp::Or => x | y,
            BvOp::Xor => x ^ y,
            BvOp::UDiv if y != 0 => x / y,
            BvOp::URem if y != 0 => x % y,
            BvOp::SDiv if y != 0 => sx.checked_div(sy)? as u128,
            BvOp::SRem if y != 0 => sx.checked_rem(sy)? as u128,
            BvOp::Shl if y < u128::from(w) => x << y,
            BvOp::LShr if y < u128::from(w) => x >> y,
            BvOp::AShr if y < u128::from(w) => (sx >> y) as u128,
            _ => return None,
        } & m,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_constructors_fold() {
        let mut t = Terms::default();
        let x = t.var(Sort::Bool, "x");
        let tr = t.tru();
        assert_eq!(t.and(&[tr, x]), x);
        let a = t.bv(8, 250);
        let b = t.bv(8, 10);
        let s = t.bin(BvOp::Add, a, b);
        assert_eq!(t.as_const(s), Some(4));
        let m1 = t.bv(8, 0xff);
        let one = t.bv(8, 1);
        let lt = t.cmp(CmpOp::Slt, m1, one);
        assert_eq!(t.as_bool(lt), Some(true));
        let e = t.sext(8, m1);
        assert_eq!(t.as_const(e), Some(0xffff));
    }

    #[test]
    fn loads_read_back_stores() {
        let mut t = Terms::default();
        let mem = t.var(Sort::Mem, "m");
        let addr = t.var(Sort::Bv(64), "a");
        let v = t.bv(32, 0x1122_3344);
        let m2 = t.store_value(mem, addr, v);
        let r = t.load(m2, addr, 4);
        // Byte 0 folds directly; the others go through address arithmetic the solver decides.
        assert_eq!(t.width(r), 32);
    }

    #[test]
    fn cells_differ_by_offset_or_by_object() {
        let mut t = Terms::default();
        let x = t.var(Sort::Bv(64), "&x");
        let y = t.var(Sort::Bv(64), "&y");
        let p = t.var(Sort::Bv(64), "p");
        t.register_object(x, 4);
        t.register_object(y, 16);
        let at = |t: &mut Terms, base: T, k: u128| {
            let c = t.bv(64, k);
            t.bin(BvOp::Add, base, c)
        };
        let x1 = at(&mut t, x, 1);
        let x1_again = {
            let one = t.bv(64, 1);
            let zero_then_one = at(&mut t, x, 0);
            t.bin(BvOp::Add, zero_then_one, one)
        };
        let x3 = at(&mut t, x, 3);
        let y15 = at(&mut t, y, 15);
        let x4 = at(&mut t, x, 4);
        let p2 = at(&mut t, p, 2);
        let p2_and_more = at(&mut t, p2, 1);
        assert_eq!(t.same_cell(x1, x1_again), Some(true));
        assert_eq!(t.same_cell(x1, x3), Some(false));
        // Inside two objects: never the same byte.
        assert_eq!(t.same_cell(x3, y15), Some(false));
        // One past the end of x may be the start of y.
        assert_eq!(t.same_cell(x4, y), None);
        // An address of unknown origin may be any object's.
        assert_eq!(t.same_cell(p2, x1), None);
        assert_eq!(t.same_cell(p2, p2_and_more), Some(false));
        // A write to y is passed over by a read of x; the read of y's byte is the write.
        let mem = t.var(Sort::Mem, "m");
        let byte = t.bv(8, 7);
        let m1 = t.store(mem, x1, byte);
        let m2 = t.store(m1, y15, byte);
        let r = t.select(m2, x1_again);
        assert_eq!(r, byte);
        let r = t.select(m2, x3);
        assert_eq!(*t.node(r), Node::Select { mem, addr: x3 });
    }
}
