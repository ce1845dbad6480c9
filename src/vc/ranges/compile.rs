//! A question's terms compiled into the steps of its evaluation over a box: the floating-point
//! operations and comparisons the ranges read, every other term a free value.

use super::*;

/// The keys of a question's constants and their negations in each format (those the format
/// holds exactly), computed once for every split of its boxes.
pub(super) struct Landmarks {
    binary32: Vec<u64>,
    binary64: Vec<u64>,
}

impl Landmarks {
    pub(super) fn of(values: &[f64]) -> Landmarks {
        let keys = |width: u32| -> Vec<u64> {
            let mut ks: Vec<u64> = values
                .iter()
                .filter(|&&v| round(width, v) == v)
                .map(|&v| key(width, v))
                .collect();
            ks.sort_unstable();
            ks.dedup();
            ks
        };
        Landmarks {
            binary32: keys(32),
            binary64: keys(64),
        }
    }

    pub(super) fn keys(&self, width: u32) -> &[u64] {
        if width == 32 {
            &self.binary32
        } else {
            &self.binary64
        }
    }
}

pub(super) struct Compiler<'a> {
    pub(super) terms: &'a Terms,
    pub(super) defs: HashMap<T, T>,
    /// Symbols defined by cases ([`Step::Join`]).
    pub(super) joins: HashMap<T, Vec<(Vec<T>, T)>>,
    /// Boolean symbols the question fixes.
    pub(super) fixed: HashMap<T, bool>,
    pub(super) floats: HashMap<T, usize>,
    pub(super) bools: HashMap<T, usize>,
    pub(super) ints: HashMap<T, usize>,
    pub(super) defining: Vec<T>,
    pub(super) steps: Vec<Step>,
    pub(super) free: Vec<u32>,
    pub(super) free_of: HashMap<T, usize>,
}

impl Compiler<'_> {
    pub(super) fn push(&mut self, s: Step) -> usize {
        self.steps.push(s);
        self.steps.len() - 1
    }

    /// The free value of the box that `t` is (a float of `width` bits, or [`BOOL`]).
    pub(super) fn free_index(&mut self, t: T, width: u32) -> usize {
        *self.free_of.entry(t).or_insert_with(|| {
            self.free.push(width);
            self.free.len() - 1
        })
    }

    pub(super) fn free(&mut self, t: T, width: u32) -> usize {
        let i = self.free_index(t, width);
        self.push(Step::Free(i))
    }

    pub(super) fn const_of(&self, t: T) -> Option<u128> {
        self.terms.as_const(t)
    }

    /// Is `t` the pattern of a NaN of any sign and payload (`Terms::fp_any_nan`)?
    pub(super) fn any_nan(&self, t: T, width: u32) -> bool {
        let (e, s) = format(width);
        let Node::Concat(high, frac) = *self.terms.node(t) else {
            return false;
        };
        let Node::Concat(_, ones) = *self.terms.node(high) else {
            return false;
        };
        let ones_ok = self.terms.width(ones) == e && self.const_of(ones) == Some((1 << e) - 1);
        // The significand is `f`, or 1 where `f` is zero: never zero.
        let frac_ok = match *self.terms.node(frac) {
            Node::Ite(c, one, f) => {
                self.const_of(one) == Some(1)
                    && matches!(*self.terms.node(c), Node::Eq(a, b)
                        if (a == f && self.const_of(b) == Some(0))
                            || (b == f && self.const_of(a) == Some(0)))
            }
            _ => false,
        };
        ones_ok && frac_ok && self.terms.width(frac) == s - 1
    }

    /// The bits of `t` when the facts fix them: a constant, bytes read at constant addresses
    /// of a memory defined by stores of constants (a static's initialiser), or their
    /// concatenation. `through` holds the symbols whose definitions are being followed.
    pub(super) fn known_bits(&self, t: T, through: &mut Vec<T>) -> Option<u128> {
        if let Some(c) = self.const_of(t) {
            return Some(c);
        }
        match *self.terms.node(t) {
            Node::Concat(a, b) => {
                let low = self.terms.width(b);
                let high = self.known_bits(a, through)?;
                Some(high << low | self.known_bits(b, through)?)
            }
            Node::Select { mem, addr } => {
                let addr = self.const_of(addr)?;
                let mut m = mem;
                let mut seen = Vec::new();
                loop {
                    match *self.terms.node(m) {
                        Node::Store { mem, addr: a, byte } => {
                            if self.const_of(a)? == addr {
                                return self.known_bits(byte, through);
                            }
                            m = mem;
                        }
                        Node::Var { .. } if !seen.contains(&m) => {
                            seen.push(m);
                            m = *self.defs.get(&m)?;
                        }
                        _ => return None,
                    }
                }
            }
            Node::Var { .. } if !through.contains(&t) => {
                let d = *self.defs.get(&t)?;
                through.push(t);
                let bits = self.known_bits(d, through);
                through.pop();
                bits
            }
            _ => None,
        }
    }

    pub(super) fn float(&mut self, t: T) -> usize {
        if let Some(&i) = self.floats.get(&t) {
            return i;
        }
        let width = self.terms.width(t);
        let i = self.float_uncached(t, width);
        self.floats.insert(t, i);
        i
    }

    pub(super) fn float_uncached(&mut self, t: T, width: u32) -> usize {
        if width != 32 && width != 64 {
            return self.push(Step::Const(Range::ANY));
        }
        if let Some(c) = self.const_of(t) {
            return self.push(Step::Const(Range::point(value(width, c))));
        }
        let sign = 1u128 << (width - 1);
        match self.terms.node(t).clone() {
            Node::Var { .. } => match self.defs.get(&t).copied() {
                Some(d) if !self.defining.contains(&t) => {
                    self.defining.push(t);
                    let i = self.float(d);
                    self.defining.pop();
                    i
                }
                _ => match self.joins.get(&t).cloned() {
                    Some(cases) if !self.defining.contains(&t) => {
                        self.defining.push(t);
                        let cases = cases
                            .into_iter()
                            .map(|(others, e)| {
                                let others = others.iter().map(|&d| self.boolean(d)).collect();
                                let any = self.push(Step::Or(others));
                                let holds = self.push(Step::Not(any));
                                (holds, self.float(e))
                            })
                            .collect();
                        self.defining.pop();
                        self.push(Step::Join(cases))
                    }
                    _ => self.free(t, width),
                },
            },
            Node::FpBin(op, a, b) => {
                let (a, b) = (self.float(a), self.float(b));
                self.push(Step::Bin(width, op, a, b))
            }
            Node::FpUn(op, a) => {
                let a = self.float(a);
                self.push(Step::Un(width, op, a))
            }
            Node::FpResize { arg, .. } => {
                let a = self.float(arg);
                self.push(Step::Resize(width, a))
            }
            Node::FpOfInt { signed, arg, .. } => {
                let (lo, hi) = int_range(self.terms, signed, arg);
                let (lo, hi) = match width {
                    32 => (f64::from(lo as f32), f64::from(hi as f32)),
                    _ => (lo as f64, hi as f64),
                };
                self.push(Step::Const(Range {
                    num: Some((lo, hi)),
                    nan: false,
                }))
            }
            Node::Ite(c, a, b) => {
                let c = self.boolean(c);
                let (a, b) = (self.float(a), self.float(b));
                self.push(Step::Choose(c, a, b))
            }
            Node::BvBin(BvOp::Xor, a, m) if self.const_of(m) == Some(sign) => {
                let a = self.float(a);
                self.push(Step::Neg(a))
            }
            Node::BvBin(BvOp::And, a, m) if self.const_of(m) == Some(sign - 1) => {
                let a = self.float(a);
                self.push(Step::Abs(a))
            }
            _ if self.any_nan(t, width) => self.push(Step::Const(Range::NAN)),
            _ => match self.known_bits(t, &mut Vec::new()) {
                Some(bits) => self.push(Step::Const(Range::point(value(width, bits)))),
                None => self.free(t, width),
            },
        }
    }

    pub(super) fn boolean(&mut self, t: T) -> usize {
        if let Some(&i) = self.bools.get(&t) {
            return i;
        }
        let step = match self.terms.node(t).clone() {
            Node::True => Step::Bool(Tri::True),
            Node::False => Step::Bool(Tri::False),
            Node::Not(a) => Step::Not(self.boolean(a)),
            Node::And(xs) => match self.is_nan_of(t) {
                Some(a) => Step::IsNan(self.float(a)),
                None => Step::And(xs.iter().map(|&x| self.boolean(x)).collect()),
            },
            Node::Or(xs) => Step::Or(xs.iter().map(|&x| self.boolean(x)).collect()),
            Node::Ite(c, a, b) if self.terms.sort(a) == Sort::Bool => {
                // (c and a) or (not c and b)
                let (c, a, b) = (self.boolean(c), self.boolean(a), self.boolean(b));
                let nc = self.push(Step::Not(c));
                let l = self.push(Step::And(vec![c, a]));
                let r = self.push(Step::And(vec![nc, b]));
                Step::Or(vec![l, r])
            }
            Node::Var { .. } => match self.fixed.get(&t) {
                Some(&v) => Step::Bool(if v { Tri::True } else { Tri::False }),
                None => Step::Free(self.free_index(t, BOOL)),
            },
            Node::FpCmp(op, a, b) => Step::Cmp(op, self.float(a), self.float(b)),
            Node::Eq(a, b) if matches!(self.terms.sort(a), Sort::Bv(_)) => {
                Step::IntEq(self.int(a), self.int(b))
            }
            _ => Step::Bool(Tri::Unknown),
        };
        let i = self.push(step);
        self.bools.insert(t, i);
        i
    }

    /// The pattern `a` when `t` is the test that `a` is a NaN ([`Terms::fp_is_nan`]: its
    /// exponent all ones and its significand not zero).
    pub(super) fn is_nan_of(&self, t: T) -> Option<T> {
        let Node::And(xs) = self.terms.node(t) else {
            return None;
        };
        let [x, y] = xs[..] else { return None };
        // `p = c` with `c` the constant `value`, in either order: `p`.
        let against = |e: T, value: u128| -> Option<T> {
            let Node::Eq(p, q) = *self.terms.node(e) else {
                return None;
            };
            match (self.const_of(p), self.const_of(q)) {
                (Some(c), None) if c == value => Some(q),
                (None, Some(c)) if c == value => Some(p),
                _ => None,
            }
        };
        let extract = |e: T| match *self.terms.node(e) {
            Node::Extract { hi, lo, arg } => Some((hi, lo, arg)),
            _ => None,
        };
        for (ones, frac) in [(x, y), (y, x)] {
            let Node::Not(frac_zero) = *self.terms.node(frac) else {
                continue;
            };
            let Some((fhi, flo, a)) = against(frac_zero, 0).and_then(extract) else {
                continue;
            };
            let w = self.terms.width(a);
            if w != 32 && w != 64 {
                continue;
            }
            let (e, s) = format(w);
            let Some((ehi, elo, b)) = against(ones, (1 << e) - 1).and_then(extract) else {
                continue;
            };
            if b == a && (ehi, elo) == (w - 2, s - 1) && (fhi, flo) == (s - 2, 0) {
                return Some(a);
            }
        }
        None
    }

    /// An integer the ranges know only where it is a constant or chosen between constants
    /// by a condition they tell (a comparison's truth as 0 or 1).
    pub(super) fn int(&mut self, t: T) -> usize {
        if let Some(&i) = self.ints.get(&t) {
            return i;
        }
        let step = match self.terms.node(t).clone() {
            _ if self.const_of(t).is_some() => Step::Int(self.const_of(t)),
            Node::Ite(c, a, b) => Step::IntIte(self.boolean(c), self.int(a), self.int(b)),
            Node::ZeroExt { arg, .. } => {
                let width = self.terms.width(arg);
                Step::IntBits {
                    arg: self.int(arg),
                    lo: 0,
                    width,
                }
            }
            Node::SignExt { by, arg } => {
                let from = self.terms.width(arg);
                Step::IntSignExt {
                    arg: self.int(arg),
                    from,
                    to: from + by,
                }
            }
            Node::Extract { hi, lo, arg } => Step::IntBits {
                arg: self.int(arg),
                lo,
                width: hi - lo + 1,
            },
            _ => Step::Int(None),
        };
        let i = self.push(step);
        self.ints.insert(t, i);
        i
    }
}
