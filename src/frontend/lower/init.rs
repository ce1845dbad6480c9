//! Lowering of initializers (scalars, braced lists with designators and brace elision, string
//! literals for char arrays) to assignments, and of static initializers to global init code.

use tree_sitter::Node;

use super::{FnState, Lowerer};
use crate::ir::*;

/// Above this many elements a designated range is not unrolled; the array is havocked instead.
const MAX_RANGE_UNROLL: i128 = 4096;

impl<'s> Lowerer<'s> {
    /// Initializes the object `lv` of type `ty` from an initializer node.
    pub(super) fn initialize(&mut self, lv: LValue, ty: &CType, value: Node) {
        let loc = self.loc(value);
        match value.kind() {
            "initializer_list" => {
                if ty.is_aggregate() {
                    self.emit(StmtKind::ZeroInit { dst: lv.clone() }, loc);
                    self.init_list(&lv, ty, value);
                } else {
                    // `int x = {5};`
                    match value.named_child(0) {
                        Some(first) => self.initialize(lv, ty, first),
                        None => self.emit(
                            StmtKind::Assign {
                                dst: lv,
                                src: zero_of(ty),
                            },
                            loc,
                        ),
                    }
                }
            }
            "string_literal" | "concatenated_string" if matches!(ty, CType::Array(..)) => {
                self.emit(StmtKind::ZeroInit { dst: lv.clone() }, loc);
                self.init_string(&lv, ty, value);
            }
            _ => {
                let e = self.expr(value);
                let src = if ty.is_aggregate() && e.ty == *ty {
                    e
                } else if ty.is_aggregate() {
                    // An aggregate from something else (a mistyped value): unknown contents.
                    self.fallback(
                        value,
                        FallbackKind::NonConstInit,
                        "aggregate initializer not understood",
                    );
                    self.emit(
                        StmtKind::Havoc {
                            dst: lv,
                            reason: Some(FallbackKind::NonConstInit),
                        },
                        loc,
                    );
                    return;
                } else {
                    self.convert(e, ty)
                };
                self.emit(StmtKind::Assign { dst: lv, src }, loc);
            }
        }
    }

    fn init_string(&mut self, lv: &LValue, ty: &CType, value: Node) {
        let CType::Array(elem, len) = ty else { return };
        let e = self.expr_raw(value);
        let ExprKind::Str(idx) = e.kind else { return };
        let bytes = self.prog.strings[idx as usize].clone();
        let n = len.map_or(bytes.len(), |l| (l as usize).min(bytes.len()));
        let loc = self.loc(value);
        let elem_kind = elem.int_kind().unwrap_or(IntKind::Char);
        for (i, b) in bytes.iter().take(n).enumerate() {
            if *b == 0 {
                continue; // already zeroed
            }
            let v = i128::from(*b as i8);
            self.emit(
                StmtKind::Assign {
                    dst: LValue::Index(
                        Box::new(lv.clone()),
                        Box::new(Expr::int_const(i as i128, IntKind::Long)),
                    ),
                    src: Expr::int_const(v, elem_kind),
                },
                loc,
            );
        }
    }

    fn init_list(&mut self, lv: &LValue, ty: &CType, list: Node) {
        let mut c = list.walk();
        let items: Vec<Node> = list
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect();
        let mut pos = 0;
        self.init_aggregate(lv, ty, &items, &mut pos, true);
    }

    /// The member `idx` of an aggregate: its place and type, or `None` past the end.
    fn member(&self, lv: &LValue, ty: &CType, idx: usize) -> Option<(LValue, CType)> {
        match ty {
            CType::Array(elem, len) => {
                if len.is_some_and(|n| idx as u64 >= n) {
                    return None;
                }
                Some((
                    LValue::Index(
                        Box::new(lv.clone()),
                        Box::new(Expr::int_const(idx as i128, IntKind::Long)),
                    ),
                    (**elem).clone(),
                ))
            }
            CType::Record(rid) => {
                let rec = self.prog.records.get(rid.0 as usize)?;
                // Unnamed bit-fields are padding and take no initializer.
                let (fi, f) = rec
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| !(f.name.is_empty() && f.bits.is_some()))
                    .nth(idx)?;
                if rec.is_union && idx > 0 {
                    return None;
                }
                Some((
                    LValue::Field(Box::new(lv.clone()), *rid, fi as u32),
                    f.ty.clone(),
                ))
            }
            _ => None,
        }
    }

    /// Fills aggregate `lv` from `items[*pos..]`. `braced` is true when the items are this
    /// aggregate's own braces (all belong to it); false under brace elision (take what fits).
    fn init_aggregate(
        &mut self,
        lv: &LValue,
        ty: &CType,
        items: &[Node],
        pos: &mut usize,
        braced: bool,
    ) {
        let mut idx = 0usize;
        while *pos < items.len() {
            let item = items[*pos];
            if item.kind() == "initializer_pair" {
                if !braced {
                    return; // a designator of the enclosing list
                }
                *pos += 1;
                idx = self.designated(lv, ty, item).unwrap_or(idx);
                continue;
            }
            let Some((mlv, mty)) = self.member(lv, ty, idx) else {
                if braced {
                    *pos += 1; // excess initializers: GCC warns and ignores them
                    continue;
                }
                return;
            };
            if item.kind() == "initializer_list" {
                *pos += 1;
                if mty.is_aggregate() {
                    self.init_list(&mlv, &mty, item);
                } else {
                    self.initialize(mlv, &mty, item);
                }
            } else if mty.is_aggregate() && !self.initializes_whole(&mty, item) {
                self.init_aggregate(&mlv, &mty, items, pos, false);
            } else {
                *pos += 1;
                if matches!(item.kind(), "string_literal" | "concatenated_string")
                    && matches!(mty, CType::Array(..))
                {
                    self.init_string(&mlv, &mty, item);
                } else {
                    self.initialize(mlv, &mty, item);
                }
            }
            idx += 1;
        }
    }

    /// True when the expression `item` initializes the whole aggregate member (a string for a
    /// char array, or a value of the member's own type) rather than its first scalar.
    fn initializes_whole(&mut self, mty: &CType, item: Node) -> bool {
        if matches!(item.kind(), "string_literal" | "concatenated_string") {
            return matches!(mty, CType::Array(e, _) if e.is_integer());
        }
        let ty = self.speculative(|l| l.expr_raw(item).ty);
        &ty == mty
    }

    /// Lowers `designators = value`; returns the index after the first designator's member.
    fn designated(&mut self, lv: &LValue, ty: &CType, pair: Node) -> Option<usize> {
        let value = pair.child_by_field_name("value")?;
        let mut c = pair.walk();
        let designators: Vec<Node> = pair.children_by_field_name("designator", &mut c).collect();
        let loc = self.loc(pair);
        let mut cur_lv = lv.clone();
        let mut cur_ty = ty.clone();
        let mut next_idx = None;
        for (k, d) in designators.iter().enumerate() {
            match d.kind() {
                "field_designator" | "field_identifier" => {
                    let name_node = if d.kind() == "field_identifier" {
                        *d
                    } else {
                        d.named_child(0)?
                    };
                    let name = self.node_text(name_node).to_string();
                    let CType::Record(rid) = cur_ty else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    let rec = &self.prog.records[rid.0 as usize];
                    let Some(fi) = rec.fields.iter().position(|f| f.name == name) else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    if k == 0 {
                        let ordinal = rec
                            .fields
                            .iter()
                            .take(fi)
                            .filter(|f| !(f.name.is_empty() && f.bits.is_some()))
                            .count();
                        next_idx = Some(ordinal + 1);
                    }
                    cur_ty = rec.fields[fi].ty.clone();
                    cur_lv = LValue::Field(Box::new(cur_lv), rid, fi as u32);
                }
                "subscript_designator" => {
                    let e = self.lower_const_expr(d.named_child(0)?);
                    let Some(i) = crate::ir::consteval::eval(&e) else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    let CType::Array(elem, _) = &cur_ty else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    if k == 0 {
                        next_idx = usize::try_from(i + 1).ok();
                    }
                    cur_ty = (**elem).clone();
                    cur_lv = LValue::Index(
                        Box::new(cur_lv),
                        Box::new(Expr::int_const(i, IntKind::Long)),
                    );
                }
                "subscript_range_designator" => {
                    let lo = d
                        .child_by_field_name("start")
                        .map(|n| self.lower_const_expr(n));
                    let hi = d
                        .child_by_field_name("end")
                        .map(|n| self.lower_const_expr(n));
                    let (Some(lo), Some(hi)) = (
                        lo.and_then(|e| crate::ir::consteval::eval(&e)),
                        hi.and_then(|e| crate::ir::consteval::eval(&e)),
                    ) else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    let CType::Array(elem, _) = &cur_ty else {
                        self.fatal_init(lv, pair);
                        return None;
                    };
                    if k + 1 != designators.len() || hi - lo > MAX_RANGE_UNROLL {
                        self.fatal_init(lv, pair);
                        return None;
                    }
                    let elem = (**elem).clone();
                    for i in lo..=hi {
                        let elv = LValue::Index(
                            Box::new(cur_lv.clone()),
                            Box::new(Expr::int_const(i, IntKind::Long)),
                        );
                        self.init_member(elv, &elem, value, loc);
                    }
                    return if k == 0 {
                        usize::try_from(hi + 1).ok()
                    } else {
                        next_idx
                    };
                }
                _ => {
                    self.fatal_init(lv, pair);
                    return None;
                }
            }
        }
        self.init_member(cur_lv, &cur_ty, value, loc);
        next_idx
    }

    fn init_member(&mut self, lv: LValue, ty: &CType, value: Node, _loc: Loc) {
        if value.kind() == "initializer_list" && ty.is_aggregate() {
            self.init_list(&lv, ty, value);
        } else {
            self.initialize(lv, ty, value);
        }
    }

    /// An initializer we cannot follow: the whole object gets an unconstrained value.
    fn fatal_init(&mut self, lv: &LValue, node: Node) {
        self.fallback(
            node,
            FallbackKind::NonConstInit,
            "initializer not understood",
        );
        let loc = self.loc(node);
        self.emit(
            StmtKind::Havoc {
                dst: lv.clone(),
                reason: Some(FallbackKind::NonConstInit),
            },
            loc,
        );
    }

    /// The length of `T a[] = init`.
    pub(super) fn initializer_length(&mut self, elem: &CType, value: Node) -> Option<u64> {
        match value.kind() {
            "string_literal" | "concatenated_string" => {
                let e = self.speculative(|l| l.expr_raw(value));
                match e.ty {
                    CType::Array(_, n) => n,
                    _ => None,
                }
            }
            "initializer_list" => {
                let mut c = value.walk();
                let items: Vec<Node> = value
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "comment")
                    .collect();
                let scalar_items_for_aggregate = elem.is_aggregate()
                    && items.iter().any(|i| {
                        !matches!(i.kind(), "initializer_list" | "initializer_pair")
                            && !matches!(i.kind(), "string_literal" | "concatenated_string")
                    });
                if scalar_items_for_aggregate {
                    return None; // brace elision over an unsized array: rare, not counted
                }
                let mut idx: i128 = 0;
                let mut max: i128 = 0;
                for it in items {
                    if it.kind() == "initializer_pair" {
                        let mut c2 = it.walk();
                        let first = it.children_by_field_name("designator", &mut c2).next();
                        match first.map(|d| (d.kind(), d)) {
                            Some(("subscript_designator", d)) => {
                                let e = self.lower_const_expr(d.named_child(0)?);
                                idx = crate::ir::consteval::eval(&e)?;
                            }
                            Some(("subscript_range_designator", d)) => {
                                let e = self.lower_const_expr(d.child_by_field_name("end")?);
                                idx = crate::ir::consteval::eval(&e)?;
                            }
                            _ => return None,
                        }
                    }
                    idx += 1;
                    max = max.max(idx);
                }
                u64::try_from(max).ok()
            }
            _ => None,
        }
    }

    /// Lowers the initializer of a global (or static local) into its init statements.
    pub(super) fn global_initializer(&mut self, id: GlobalId, value: Node) {
        let ty = self.prog.globals[id.0 as usize].ty.clone();
        let ty = match (&ty, value.kind()) {
            (CType::Array(elem, None), _) => {
                let n = self.initializer_length(elem, value);
                let t = CType::Array(elem.clone(), n);
                self.prog.globals[id.0 as usize].ty = t.clone();
                if let Some(super::Symbol::Var(_, sty)) = self
                    .scopes
                    .first_mut()
                    .and_then(|s| s.get_mut(&self.prog.globals[id.0 as usize].name))
                {
                    *sty = t.clone();
                }
                t
            }
            _ => ty,
        };
        let loc = self.loc(value);
        let saved = self.fs.take();
        self.fs = Some(FnState::scratch(
            saved.as_ref().map_or_else(String::new, |f| f.name.clone()),
        ));
        let b = self.new_block(loc);
        self.start_block(b);
        self.initialize(LValue::Var(VarRef::Global(id)), &ty, value);
        let scratch = std::mem::replace(&mut self.fs, saved);
        let mut stmts = Vec::new();
        if let Some(mut fs) = scratch {
            if fs.blocks.len() == 1 && fs.locals.is_empty() {
                stmts = std::mem::take(&mut fs.blocks[0].stmts);
            } else {
                stmts.push(Stmt {
                    kind: StmtKind::Havoc {
                        dst: LValue::Var(VarRef::Global(id)),
                        reason: Some(FallbackKind::NonConstInit),
                    },
                    loc,
                });
            }
        }
        let g = &mut self.prog.globals[id.0 as usize];
        g.init = stmts;
        g.is_extern_decl = false;
    }
}

fn zero_of(ty: &CType) -> Expr {
    match ty {
        CType::Float(_) => Expr::new(ExprKind::FloatConst(0.0), ty.clone()),
        _ => Expr::new(ExprKind::Const(0), ty.clone()),
    }
}
