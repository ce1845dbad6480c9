//! Calls in the encoding: small callees inlined in place of their call (each activation an
//! instance of its own), the others opaque, with what they may write havocked.

use super::*;

impl<'a> Enc<'a> {
    /// The callee to inline at a direct call, if it is small, lowered and not recursive here.
    pub(super) fn inlinable(&self, name: &str) -> Option<&'a Function> {
        let callee = *self.functions.get(name)?;
        let size: usize = callee.blocks.iter().map(|b| b.stmts.len() + 1).sum();
        let max_blocks = if self.context_functions.contains(name) {
            MAX_CONTEXT_INLINE_BLOCKS
        } else {
            MAX_INLINE_BLOCKS
        };
        if self.reference {
            let ok = self.inline_stack.len() <= MAX_INLINE_DEPTH
                && !self.inline_stack.contains(&name)
                && size <= self.inline_budget;
            return ok.then_some(callee);
        }
        let ok = self.inline_stack.len() <= MAX_INLINE_DEPTH
            && self.pts.may_inline(name)
            && !self.inline_stack.contains(&name)
            && callee.blocks.len() <= max_blocks
            && size <= self.inline_budget;
        ok.then_some(callee)
    }

    /// Encodes `callee` in place of a call: returns the path condition after the call (false
    /// if it never returns) and sets `dst` to its returned value.
    pub(super) fn inline_call(
        &mut self,
        callee: &'a Function,
        args: &[Expr],
        dst: Option<&LValue>,
        st: &mut State,
        pc: T,
    ) -> T {
        let size: usize = callee.blocks.iter().map(|b| b.stmts.len() + 1).sum();
        self.inline_budget = self.inline_budget.saturating_sub(size);
        let arg_values: Vec<(T, CType)> = args
            .iter()
            .map(|a| (self.eval(a, st), a.ty.clone()))
            .collect();
        // Switch to the callee's frame.
        let in_memory = memory_locals(callee);
        let own_memory = own_memory_locals(callee, &in_memory, (self.alias_blind, self.reference));
        let saved = (
            self.f,
            std::mem::replace(&mut self.in_memory, in_memory),
            self.instance,
            self.record_labels,
            self.cur_block,
            std::mem::replace(&mut self.own_memory, own_memory),
            (self.cur_stmt, self.in_called_once_copy, self.copy),
            (self.cur_once, self.outer_once),
        );
        self.outer_once = self.cur_once;
        self.call_path.push(CallSite {
            caller: self.f.name.clone(),
            block: self.cur_block.0,
            stmt: self.cur_stmt,
        });
        self.f = callee;
        self.instance = self.n_instances;
        self.n_instances += 1;
        self.instance_fns.push(callee);
        self.in_called_once_copy =
            self.instance_is_root(saved.2) && self.context_callees.contains(&callee.name);
        self.copy = self.context_functions.contains(&callee.name).then(|| {
            self.copies.push(InlinedCopy {
                path: self.call_path.clone(),
                function: callee.name.clone(),
                labels: Vec::new(),
            });
            self.copies.len() - 1
        });
        self.record_labels = self.in_called_once_copy || self.copy.is_some();
        self.inline_stack.push(callee.name.as_str());
        let mut init = self.initial_state(st.mem, st.own.clone());
        init.errno = st.errno;
        for (k, pid) in callee.params.iter().enumerate() {
            let pty = callee.local(*pid).ty.clone();
            let value = match arg_values.get(k) {
                Some((v, aty)) => self.convert(*v, aty, &pty),
                None => self.fresh_of(&pty, "missing_arg"),
            };
            let lv = LValue::Var(VarRef::Local(*pid));
            self.write(&lv, &pty, value, &mut init);
        }
        let returns = self.encode_body(init, pc);
        let callee_instance = self.instance;
        let ret_ty = callee.ty.ret.clone();
        self.inline_stack.pop();
        self.f = saved.0;
        self.in_memory = saved.1;
        self.instance = saved.2;
        self.record_labels = saved.3;
        self.cur_block = saved.4;
        self.own_memory = saved.5;
        (self.cur_stmt, self.in_called_once_copy, self.copy) = saved.6;
        (self.cur_once, self.outer_once) = saved.7;
        self.call_path.pop();
        if returns.is_empty() {
            return self.t.fls();
        }
        let w = width_of(&ret_ty);
        // The callee's own locals die with its activation.
        let mut returns = returns;
        for (_, s, _) in &mut returns {
            s.own
                .retain(|o, _| !matches!(o, MemObj::Local(i, _) if *i == callee_instance));
        }
        let values: Vec<(T, T)> = returns
            .iter()
            .map(|(c, _, v)| {
                let v = match v {
                    Some(v) => self.t.resize(*v, w, is_signed(&ret_ty)),
                    None => self.fresh(w, "no_return_value"),
                };
                (*c, v)
            })
            .collect();
        let (after, value) = if values.len() == 1 {
            values[0]
        } else {
            let conds: Vec<T> = values.iter().map(|x| x.0).collect();
            let after = self.reached_by(&conds, "returned");
            (after, self.join(&values, Sort::Bv(w), "ret"))
        };
        let ins: Vec<(T, &State)> = returns.iter().map(|(c, s, _)| (*c, s)).collect();
        (st.mem, st.errno, st.own) = self.join_memories(&ins, "mem_ret");
        if let Some(d) = dst {
            let dty = self.lvalue_type(d);
            if dty.is_aggregate() || ret_ty.is_aggregate() {
                self.havoc_object(d, &dty, st);
            } else {
                let v = self.convert(value, &ret_ty, &dty);
                self.write(d, &dty, v, st);
            }
        }
        after
    }

    /// What a call not encoded in place does to the state, its result aside: `errno` and
    /// new blocks' regions for a call that writes only them ([`Enc::writes_errno_only`]),
    /// else everything it may write havocked (and a new block's region).
    pub(super) fn call_effects(
        &mut self,
        callee: &Callee,
        args: &[Expr],
        dst: Option<&LValue>,
        st: &mut State,
    ) {
        if let Some(blocks) = self.writes_errno_only(callee, dst) {
            if !self.plants.allocation_keeps_errno || blocks.is_empty() {
                self.write_errno(st);
            }
            for r in blocks {
                let m = self.t.var(Sort::Mem, "region_block");
                st.own.insert(MemObj::Region(r), m);
            }
            return;
        }
        let writes = self.call_writes(callee, args);
        if writes.external {
            st.mem = self.memory_after_outside_call(st.mem, callee, args);
            st.errno = None;
        }
        for r in writes.regions {
            let m = self.t.var(Sort::Mem, "region_call");
            st.own.insert(MemObj::Region(r), m);
        }
        let w = self.callee_global_writes(callee);
        self.havoc_globals(&w, st);
        // A new block in a region of its own: its bytes are any.
        if let (Callee::Direct(n), Some(d)) = (callee, dst) {
            if let Some(r) = self.pts.allocated_region(&self.f.name, n, d) {
                let m = self.t.var(Sort::Mem, "region_block");
                st.own.insert(MemObj::Region(r), m);
            }
        }
    }

    /// The globals with a memory of their own in `w` get fresh memories.
    pub(super) fn havoc_globals(&mut self, w: &GlobalWrites, st: &mut State) {
        let gs: Vec<GlobalId> = self
            .named_globals
            .iter()
            .copied()
            .filter(|g| w.contains(*g))
            .collect();
        for g in gs {
            let m = self.t.var(Sort::Mem, "own_call");
            self.constrain_static(g, m);
            st.own.insert(MemObj::Global(g), m);
        }
    }

    pub(super) fn callee_writes_memory(&self, callee: &Callee) -> bool {
        if self.reference {
            return true;
        }
        match callee {
            Callee::Direct(n) => self.sums.writes_memory(n),
            Callee::Indirect(_) => true,
        }
    }

    /// The memories a call not encoded in place may write: the shared one, and regions. Both
    /// the program's summary and the region analysis bound it; each is sound alone.
    pub(super) fn call_writes(&mut self, callee: &Callee, args: &[Expr]) -> Writes {
        if !self.callee_writes_memory(callee) {
            return Writes::default();
        }
        self.pts.call_writes(&self.f.name, callee, args)
    }

    pub(super) fn callee_global_writes(&self, callee: &Callee) -> GlobalWrites {
        match callee {
            Callee::Direct(n) => self.sums.global_writes(n),
            Callee::Indirect(_) => GlobalWrites::All,
        }
    }

    /// An allocator's result ([`crate::libc::Allocator`]), from its arguments before the call:
    /// a fresh pointer, null when the size asked is more than `PTRDIFF_MAX` bytes.
    pub(super) fn allocation_call(
        &mut self,
        name: &str,
        args: &[Expr],
        dst_ty: &CType,
        st: &mut State,
    ) -> Option<T> {
        use crate::libc::Allocator;
        let which = crate::libc::allocator(name)
            .filter(|_| self.sums.is_library(name) && !self.reference)?;
        if !matches!(dst_ty, CType::Pointer(_)) || width_of(dst_ty) != 64 {
            return None;
        }
        // Each size argument, as a 128-bit unsigned number.
        let mut size = |k: usize, st: &mut State| -> Option<T> {
            let a = args.get(k)?;
            if !matches!(a.ty, CType::Int(_)) {
                return None;
            }
            let v = self.eval(a, st);
            Some(self.t.resize(v, 128, is_signed(&a.ty)))
        };
        let asked = match which {
            Allocator::Malloc => size(0, st)?,
            Allocator::Realloc => size(1, st)?,
            Allocator::Calloc => {
                let n = size(0, st)?;
                let m = size(1, st)?;
                // Both are below 2^64: the product does not overflow 128 bits.
                self.t.bin(BvOp::Mul, n, m)
            }
        };
        let r = self.fresh(64, "allocation");
        let max = self.t.bv(128, i64::MAX as u128);
        let too_big = self.t.cmp(CmpOp::Ult, max, asked);
        let zero = self.t.bv(64, 0);
        let null = self.t.eq(r, zero);
        let fact = self.t.implies(too_big, null);
        self.fact(&[r], fact);
        Some(r)
    }
}
