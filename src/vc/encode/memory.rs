//! Memory in the encoding: objects' addresses and layout, the shared memory and the memories
//! of objects reached by name only, addresses, reads and writes (bit-fields, byte by byte),
//! copies, havocs and zeroing, and the joins of states where paths meet.

use super::*;
use crate::libc::ByteWrite;

impl Enc<'_> {
    /// The address of an object, made at its first use, with its size and alignment kept for
    /// [`Enc::layout_constraints`].
    pub(super) fn base(&mut self, obj: MemObj) -> T {
        if let Some(&b) = self.bases.get(&obj) {
            return b;
        }
        let (ty, hint) = match obj {
            MemObj::Local(_, l) => (
                Some(self.f.local(l).ty.clone()),
                self.f.local(l).name.clone(),
            ),
            MemObj::Global(g) => {
                let g = &self.prog.globals[g.0 as usize];
                (Some(g.ty.clone()), g.name.clone())
            }
            MemObj::Str(i) => (None, format!("str{i}")),
            MemObj::Region(r) => (None, format!("region{r}")),
        };
        let layout = self.prog.layout();
        let (size, align) = match (&ty, obj) {
            (_, MemObj::Str(i)) => (self.prog.strings[i as usize].len() as u64, 1),
            (Some(ty), _) => (
                layout.size_of(ty).unwrap_or(1).max(1),
                layout.align_of(ty).unwrap_or(1).max(1),
            ),
            (None, _) => (1, 1),
        };
        let b = self.t.var(Sort::Bv(64), &format!("&{hint}"));
        // String literals may share storage (equal ones, or one the tail of another).
        if !matches!(obj, MemObj::Str(_) | MemObj::Region(_)) {
            self.t.register_object(b, size);
        }
        self.exactness.entry.insert(b);
        self.objects.push((b, size, align));
        self.bases.insert(obj, b);
        b
    }

    /// Objects are non-null, do not wrap around, are aligned and do not overlap.
    pub(super) fn layout_constraints(&mut self) {
        let objects = self.objects.clone();
        for &(b, size, align) in &objects {
            let zero = self.t.bv(64, 0);
            let is_null = self.t.eq(b, zero);
            let non_null = self.t.not(is_null);
            let limit = self.t.bv(64, u128::from(u64::MAX - size));
            let no_wrap = self.t.cmp(CmpOp::Ule, b, limit);
            self.fact(&[b], non_null);
            self.fact(&[b], no_wrap);
            if align > 1 && align.is_power_of_two() {
                let m = self.t.bv(64, u128::from(align - 1));
                let low = self.t.bin(BvOp::And, b, m);
                let aligned = self.t.eq(low, zero);
                self.fact(&[b], aligned);
            }
        }
        let n = objects.len().min(MAX_DISJOINT_OBJECTS);
        for i in 0..n {
            for j in i + 1..n {
                let (bi, si, _) = objects[i];
                let (bj, sj, _) = objects[j];
                let si_t = self.t.bv(64, u128::from(si));
                let sj_t = self.t.bv(64, u128::from(sj));
                let end_i = self.t.bin(BvOp::Add, bi, si_t);
                let end_j = self.t.bin(BvOp::Add, bj, sj_t);
                let before = self.t.cmp(CmpOp::Ule, end_i, bj);
                let after = self.t.cmp(CmpOp::Ule, end_j, bi);
                let disjoint = self.t.or2(before, after);
                self.facts.push(Fact {
                    about: vec![bi, bj],
                    needs_all: true,
                    fact: disjoint,
                    work: 0,
                });
            }
        }
    }

    /// Joins the states of the incoming edges: one reachability symbol and one φ symbol per
    /// differing value, defined by implications from each edge (passive form).
    pub(super) fn merge(&mut self, b: BlockId, ins: Vec<(T, State)>) -> (T, State) {
        if ins.len() == 1 {
            let (c, s) = ins.into_iter().next().expect("one incoming edge");
            return (c, s);
        }
        let conds: Vec<T> = ins.iter().map(|(c, _)| *c).collect();
        let reach = self.reached_by(&conds, &format!("reach_bb{}", b.0));
        let n_vars = ins[0].1.vars.len();
        let mut out = ins[0].1.clone();
        for v in 0..n_vars {
            // Locals in memory have no SSA value, in every state alike.
            let vals: Vec<(T, T)> = ins
                .iter()
                .filter_map(|(c, s)| s.vars[v].map(|val| (*c, val)))
                .collect();
            if vals.is_empty() {
                continue;
            }
            let w = self.local_width(LocalId(v as u32));
            out.vars[v] = Some(self.join(&vals, Sort::Bv(w), "phi"));
        }
        let refs: Vec<(T, &State)> = ins.iter().map(|(c, s)| (*c, s)).collect();
        (out.mem, out.errno, out.own) = self.join_memories(&refs, "mem_phi");
        (reach, out)
    }

    /// Joins the memories of several states, each reached under its condition: one φ term
    /// per memory that differs between them (an object a state has not written holds its
    /// initial memory there), and `errno` apart if it is in one of them.
    pub(super) fn join_memories(
        &mut self,
        ins: &[(T, &State)],
        hint: &str,
    ) -> (T, Option<T>, BTreeMap<MemObj, T>) {
        let mems: Vec<(T, T)> = ins.iter().map(|(c, s)| (*c, s.mem)).collect();
        let mem = self.join(&mems, Sort::Mem, hint);
        let errno = self.join_errno(ins);
        let keys: BTreeSet<MemObj> = ins
            .iter()
            .flat_map(|(_, s)| s.own.keys().copied())
            .collect();
        let mut own = BTreeMap::new();
        for k in keys {
            let vals: Vec<(T, T)> = ins
                .iter()
                .map(|(c, s)| {
                    (
                        *c,
                        s.own
                            .get(&k)
                            .copied()
                            .unwrap_or_else(|| self.own_initial(k)),
                    )
                })
                .collect();
            let m = self.join(&vals, Sort::Mem, "own_phi");
            own.insert(k, m);
        }
        (mem, errno, own)
    }

    /// The value that is each `(condition, value)`'s value under its condition: that value
    /// when all are the same, else an `ite` term for memories and a φ symbol defined by
    /// implications (passive form) for the rest.
    pub(super) fn join(&mut self, vals: &[(T, T)], sort: Sort, hint: &str) -> T {
        if vals.iter().all(|(_, v)| *v == vals[0].1) {
            return vals[0].1;
        }
        if sort == Sort::Mem {
            // Memories join as `ite` terms, so that a read through the join is cases over
            // the writes on each way in (`smt::Session::read_byte`), with no array equality.
            // The conditions of the edges into a block exclude each other (one path runs),
            // so the term is the φ; where the block is not reached its value is unused.
            let mut acc = vals[vals.len() - 1].1;
            for (c, v) in vals[..vals.len() - 1].iter().rev() {
                acc = self.t.ite(*c, *v, acc);
            }
            return acc;
        }
        let phi = self.t.var(sort, hint);
        let mut definition = Vec::with_capacity(vals.len());
        for (c, v) in vals {
            let eq = self.t.eq(phi, *v);
            let imp = self.t.implies(*c, eq);
            self.fact(&[phi], imp);
            definition.push(imp);
        }
        self.exactness.defined.insert(phi, definition);
        phi
    }

    /// A symbol true exactly when one of `conds` holds.
    pub(super) fn reached_by(&mut self, conds: &[T], hint: &str) -> T {
        let any = self.t.or(conds);
        let r = self.t.var(Sort::Bool, hint);
        let a = self.t.implies(r, any);
        let b = self.t.implies(any, r);
        self.fact(&[r], a);
        self.fact(&[r], b);
        self.exactness.defined.insert(r, vec![a, b]);
        r
    }

    /// The memory an object reached by name only holds before any write of this encoding.
    pub(super) fn own_initial(&mut self, o: MemObj) -> T {
        if let Some(&m) = self.own_init.get(&o) {
            return m;
        }
        let m = self.t.var(Sort::Mem, "own_init");
        self.exactness.entry.insert(m);
        self.own_init.insert(o, m);
        if let MemObj::Global(g) = o {
            self.constrain_static(g, m);
        }
        m
    }

    /// What the whole file says of static `g`'s memory `m`, at entry or after code not encoded
    /// here may have written it (every write to it is one of the file's): a static no code
    /// writes holds its initialiser (`m` is a fixpoint of the initialiser's stores, so the
    /// bytes they write hold their values), and each element of a static whose stores are
    /// all constants holds one of them.
    pub(super) fn constrain_static(&mut self, g: GlobalId, m: T) {
        let o = MemObj::Global(g);
        let mut st = State {
            vars: vec![None; self.f.locals.len()],
            mem: self.t.var(Sort::Mem, "init_mem"),
            errno: None,
            own: BTreeMap::from([(o, m)]),
        };
        if self.initialised.contains(&g) {
            let init = self.prog.globals[g.0 as usize].init.clone();
            let tru = self.t.tru();
            for s in &init {
                self.stmt(s, &mut st, tru);
            }
            if let Some(&after) = st.own.get(&o) {
                let same = self.t.eq(m, after);
                self.fact(&[m], same);
            }
            st.own.insert(o, m);
        }
        let Some(v) = self.static_values.get(&g).cloned() else {
            return;
        };
        let var = LValue::Var(VarRef::Global(g));
        let places: Vec<LValue> = match v.elements {
            None => vec![var],
            Some(n) => (0..n)
                .map(|k| {
                    LValue::Index(
                        Box::new(var.clone()),
                        Box::new(Expr::int_const(i128::from(k), IntKind::Long)),
                    )
                })
                .collect(),
        };
        let ty = CType::Int(v.kind);
        for place in places {
            let one_of = v
                .values
                .iter()
                .map(|c| {
                    Expr::new(
                        ExprKind::Binary(
                            BinOp::Eq,
                            Box::new(Expr::read(place.clone(), ty.clone())),
                            Box::new(Expr::int_const(*c, v.kind)),
                        ),
                        CType::INT,
                    )
                })
                .reduce(|a, b| {
                    Expr::new(
                        ExprKind::Binary(BinOp::LogOr, Box::new(a), Box::new(b)),
                        CType::INT,
                    )
                });
            if let Some(e) = one_of {
                let holds = self.eval_bool(&e, &mut st);
                self.fact(&[m], holds);
            }
        }
    }

    /// The object with a memory of its own that a place belongs to, if any.
    pub(super) fn home(&mut self, lv: &LValue) -> Option<MemObj> {
        match lv {
            LValue::Var(VarRef::Local(l)) if self.own_memory[l.0 as usize] => {
                Some(MemObj::Local(self.instance, *l))
            }
            LValue::Var(VarRef::Local(l)) => self
                .pts
                .region_of_local(&self.f.name, *l)
                .map(MemObj::Region),
            LValue::Var(VarRef::Global(g)) => {
                self.named_globals.contains(g).then_some(MemObj::Global(*g))
            }
            LValue::Deref(e) => self
                .pts
                .region_of_pointer(&self.f.name, e)
                .map(MemObj::Region),
            LValue::Field(b, _, _) | LValue::Index(b, _) => self.home(b),
        }
    }

    /// Is `lv` an object alone in its memory (not a region's object, which has a base)?
    pub(super) fn has_own_memory(&mut self, lv: &LValue) -> bool {
        matches!(self.home(lv), Some(MemObj::Local(..) | MemObj::Global(_)))
    }

    /// The memory holding a place (the shared memory with `errno` written back).
    pub(super) fn memory_of(&mut self, home: Option<MemObj>, st: &State) -> T {
        match home {
            None => self.shared_memory(st),
            Some(o) => match st.own.get(&o) {
                Some(&m) => m,
                None => self.own_initial(o),
            },
        }
    }

    /// The memory a read or write of type `ty` of a place sees: the shared memory without
    /// `errno`'s bytes when `ty` cannot access them ([`errno`]).
    pub(super) fn memory_for(&mut self, home: Option<MemObj>, ty: &CType, st: &State) -> T {
        match home {
            None if !errno::may_be_errno(ty) || self.plants.errno_never_read => st.mem,
            _ => self.memory_of(home, st),
        }
    }

    /// Sets the memory holding a place to `m`, made from what [`Enc::memory_for`] gave for
    /// type `ty`.
    fn set_memory_for(&mut self, home: Option<MemObj>, ty: &CType, st: &mut State, m: T) {
        match home {
            None if !errno::may_be_errno(ty) || self.plants.errno_never_read => st.mem = m,
            _ => self.set_memory(home, st, m),
        }
    }

    /// Sets the memory holding a place to `m`, made from what [`Enc::memory_of`] gave.
    pub(super) fn set_memory(&mut self, home: Option<MemObj>, st: &mut State, m: T) {
        match home {
            None => {
                st.mem = m;
                st.errno = None;
            }
            Some(o) => {
                self.own_seen.insert(o);
                st.own.insert(o, m);
            }
        }
    }

    pub(super) fn copy_object(&mut self, dst: &LValue, src: &LValue, ty: &CType, st: &mut State) {
        let size = self.prog.layout().size_of(ty);
        match size {
            Some(n) if n <= MAX_BYTEWISE => {
                let da = self.addr(dst, st);
                let sa = self.addr(src, st);
                let (dh, sh) = (self.home(dst), self.home(src));
                let src_mem = self.memory_of(sh, st);
                let mut m = self.memory_of(dh, st);
                for k in 0..n {
                    let from = self.byte_at(sa, k);
                    let byte = self.t.select(src_mem, from);
                    let to = self.byte_at(da, k);
                    m = self.t.store(m, to, byte);
                }
                self.set_memory(dh, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_copy");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    /// A call of a library function that writes bytes ([`ByteWrite`]) with a constant count
    /// up to [`MAX_BYTEWISE`]: each byte stored in the memory the destination points into,
    /// and the destination returned. A copy reads every byte from the memories before the
    /// call. None for any other count: the caller havocs what the call may write.
    pub(super) fn byte_write_call(
        &mut self,
        op: ByteWrite,
        args: &[Expr],
        st: &mut State,
    ) -> Option<T> {
        let [dst, src, count] = args else {
            return None;
        };
        let n = self.eval(count, st);
        let n = u64::try_from(self.t.as_const(n)?).ok()?;
        if n > MAX_BYTEWISE {
            return None;
        }
        let da = self.eval(dst, st);
        let bytes: Vec<T> = match op {
            ByteWrite::Set => {
                let c = self.eval(src, st);
                let byte = self.t.resize(c, 8, false);
                vec![byte; n as usize]
            }
            ByteWrite::Copy => {
                let sa = self.eval(src, st);
                let home = self.home(&LValue::Deref(Box::new(src.clone())));
                let from = self.memory_of(home, st);
                (0..n)
                    .map(|k| {
                        let at = self.byte_at(sa, k);
                        self.t.select(from, at)
                    })
                    .collect()
            }
        };
        let home = self.home(&LValue::Deref(Box::new(dst.clone())));
        let mut m = self.memory_of(home, st);
        for (k, byte) in (0..n).zip(bytes) {
            let at = self.byte_at(da, k);
            m = self.t.store(m, at, byte);
        }
        self.set_memory(home, st, m);
        Some(da)
    }

    /// The address of byte `k` of the object at `base`.
    pub(super) fn byte_at(&mut self, base: T, k: u64) -> T {
        let off = self.t.bv(64, u128::from(k));
        self.t.bin(BvOp::Add, base, off)
    }

    /// An uninitialised declaration of a local in memory that runs at most once per run of the
    /// root needs no havoc: the memory it reads at the object's address already holds
    /// arbitrary bytes. Why: the object's address is a symbol of its activation alone, so in a
    /// real run no write before the declaration is at that address (the object did not exist
    /// yet, and the declaration runs once, so no earlier iteration wrote it either); every
    /// byte there in the memory at the declaration comes from the memory at the root's entry
    /// (or after a havoc), which is free. A model takes the run's indeterminate bytes there.
    /// Writing fresh bytes one by one instead gives the same runs, at one case per byte in
    /// every later read of that memory. Locals with a memory of their own keep the fresh
    /// memory (it costs nothing), and so do scalars kept as SSA values.
    pub(super) fn declare_uninitialised(&self, dst: &LValue) -> bool {
        let LValue::Var(VarRef::Local(l)) = dst else {
            return false;
        };
        self.cur_once
            && self.in_memory[l.0 as usize]
            && !self.own_memory[l.0 as usize]
            && !self.alias_blind
            && !self.reference
    }

    pub(super) fn havoc_object(&mut self, dst: &LValue, ty: &CType, st: &mut State) {
        if !ty.is_aggregate() {
            let v = self.fresh_of(ty, "havoc");
            self.write(dst, ty, v, st);
            return;
        }
        // A whole object with a memory of its own: that memory is all it holds.
        if let (LValue::Var(_), Some(home @ (MemObj::Local(..) | MemObj::Global(_)))) =
            (dst, self.home(dst))
        {
            let m = self.t.var(Sort::Mem, "own_havoc");
            self.set_memory(Some(home), st, m);
            return;
        }
        match self.prog.layout().size_of(ty) {
            Some(n) if n <= MAX_BYTEWISE => {
                let a = self.addr(dst, st);
                let home = self.home(dst);
                let mut m = self.memory_of(home, st);
                for k in 0..n {
                    let to = self.byte_at(a, k);
                    let byte = self.fresh(8, "havoc_byte");
                    m = self.t.store(m, to, byte);
                }
                self.set_memory(home, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_havoc_obj");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    pub(super) fn zero_object(&mut self, dst: &LValue, ty: &CType, st: &mut State) {
        if !ty.is_aggregate() {
            let w = width_of(ty);
            let z = self.t.bv(w, 0);
            self.write(dst, ty, z, st);
            return;
        }
        match self.prog.layout().size_of(ty) {
            Some(n) if n <= MAX_ZERO_INIT => {
                let a = self.addr(dst, st);
                let home = self.home(dst);
                let mut m = self.memory_of(home, st);
                let zero = self.t.bv(8, 0);
                for k in 0..n {
                    let to = self.byte_at(a, k);
                    m = self.t.store(m, to, zero);
                }
                self.set_memory(home, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_zero_big");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    pub(super) fn lvalue_type(&self, lv: &LValue) -> CType {
        match lv {
            LValue::Var(VarRef::Local(l)) => self.f.local(*l).ty.clone(),
            LValue::Var(VarRef::Global(g)) => self.prog.globals[g.0 as usize].ty.clone(),
            LValue::Deref(e) => e.ty.pointee().cloned().unwrap_or(CType::Unknown),
            LValue::Field(_, r, i) => self
                .prog
                .records
                .get(r.0 as usize)
                .and_then(|r| r.fields.get(*i as usize))
                .map_or(CType::Unknown, |f| f.ty.clone()),
            LValue::Index(b, _) => match self.lvalue_type(b) {
                CType::Array(e, _) => *e,
                _ => CType::Unknown,
            },
        }
    }

    pub(super) fn is_ssa(&self, lv: &LValue) -> Option<LocalId> {
        match lv {
            LValue::Var(VarRef::Local(l)) if !self.in_memory[l.0 as usize] => Some(*l),
            _ => None,
        }
    }

    /// The address of a place in memory.
    pub(super) fn addr(&mut self, lv: &LValue, st: &mut State) -> T {
        match lv {
            // An object with a memory of its own starts at offset 0 of it.
            LValue::Var(_) if self.has_own_memory(lv) => self.t.bv(64, 0),
            LValue::Var(VarRef::Local(l)) => self.base(MemObj::Local(self.instance, *l)),
            LValue::Var(VarRef::Global(g)) => self.base(MemObj::Global(*g)),
            LValue::Deref(e) => self.eval(e, st),
            LValue::Field(b, r, i) => {
                let base = self.addr(b, st);
                let off = self
                    .prog
                    .records
                    .get(r.0 as usize)
                    .and_then(|r| r.fields.get(*i as usize))
                    .map_or(0, |f| f.offset);
                let o = self.t.bv(64, u128::from(off));
                self.t.bin(BvOp::Add, base, o)
            }
            LValue::Index(b, i) => {
                let base = self.addr(b, st);
                let elem = match self.lvalue_type(b) {
                    CType::Array(e, _) => *e,
                    _ => CType::Unknown,
                };
                let Some(size) = self.prog.layout().size_of(&elem) else {
                    return self.fresh(64, "addr_unknown_elem");
                };
                let iv = self.eval(i, st);
                let signed = is_signed(&i.ty);
                let i64v = self.t.resize(iv, 64, signed);
                let s = self.t.bv(64, u128::from(size));
                let off = self.t.bin(BvOp::Mul, i64v, s);
                self.t.bin(BvOp::Add, base, off)
            }
        }
    }

    pub(super) fn bitfield(&self, lv: &LValue) -> Option<(u32, u32)> {
        match lv {
            LValue::Field(_, r, i) => self
                .prog
                .records
                .get(r.0 as usize)
                .and_then(|r| r.fields.get(*i as usize))
                .and_then(|f| f.bits),
            _ => None,
        }
    }

    pub(super) fn read(&mut self, lv: &LValue, ty: &CType, st: &mut State) -> T {
        if let Some(l) = self.is_ssa(lv) {
            let w = width_of(ty);
            return match st.vars[l.0 as usize] {
                Some(v) => self.t.resize(v, w, is_signed(ty)),
                None => self.fresh(w, "read"),
            };
        }
        if ty.is_aggregate() || matches!(ty, CType::Unknown | CType::Function(_)) {
            // An aggregate as a value (passed or returned by value): not modelled.
            return self.fresh(64, "aggregate");
        }
        let addr = self.addr(lv, st);
        let home = self.home(lv);
        let mem = self.memory_for(home, ty, st);
        let w = width_of(ty);
        if let Some((bit, width)) = self.bitfield(lv) {
            let unit = self.t.load(mem, addr, w / 8);
            let hi = (bit + width - 1).min(w - 1);
            let raw = self.t.extract(hi, bit.min(hi), unit);
            return self.t.resize(raw, w, is_signed(ty));
        }
        self.t.load(mem, addr, w / 8)
    }

    pub(super) fn write(&mut self, lv: &LValue, ty: &CType, v: T, st: &mut State) {
        if let Some(l) = self.is_ssa(lv) {
            let w = self.local_width(l);
            let v = self.t.resize(v, w, is_signed(ty));
            st.vars[l.0 as usize] = Some(v);
            return;
        }
        let home = self.home(lv);
        if ty.is_aggregate() || matches!(ty, CType::Unknown | CType::Function(_)) {
            let m = self.t.var(Sort::Mem, "mem_unknown_write");
            self.set_memory(home, st, m);
            return;
        }
        let addr = self.addr(lv, st);
        let mem = self.memory_for(home, ty, st);
        let w = width_of(ty);
        let v = self.t.resize(v, w, is_signed(ty));
        if let Some((bit, width)) = self.bitfield(lv) {
            if bit + width > w {
                let m = self.t.var(Sort::Mem, "mem_bitfield");
                self.set_memory(home, st, m);
                return;
            }
            let unit = self.t.load(mem, addr, w / 8);
            let field_mask = (if width >= 128 {
                u128::MAX
            } else {
                (1u128 << width) - 1
            }) << bit;
            let keep = self.t.bv(w, !field_mask);
            let kept = self.t.bin(BvOp::And, unit, keep);
            let sh = self.t.bv(w, u128::from(bit));
            let shifted = self.t.bin(BvOp::Shl, v, sh);
            let fm = self.t.bv(w, field_mask);
            let placed = self.t.bin(BvOp::And, shifted, fm);
            let merged = self.t.bin(BvOp::Or, kept, placed);
            let m = self.t.store_value(mem, addr, merged);
            self.set_memory(home, st, m);
            return;
        }
        let m = self.t.store_value(mem, addr, v);
        self.set_memory_for(home, ty, st, m);
    }
}
