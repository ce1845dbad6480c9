//! Lowering of C statements to basic blocks: structured control flow, `switch`, `goto`, local
//! declarations and `pc_label` test objectives.

use tree_sitter::Node;

use super::{Lowerer, SwitchState, Symbol};
use crate::frontend::syntax::has_effects;
use crate::ir::*;

impl<'s> Lowerer<'s> {
    // ----- block building -----------------------------------------------------------------

    pub(super) fn new_block(&mut self, loc: Loc) -> BlockId {
        let fs = self
            .fs
            .as_mut()
            .expect("blocks exist only inside a function");
        fs.blocks.push(Block {
            stmts: Vec::new(),
            term: Terminator::Unreachable,
            loc,
            loop_head: false,
        });
        BlockId(fs.blocks.len() as u32 - 1)
    }

    pub(super) fn start_block(&mut self, b: BlockId) {
        if let Some(fs) = self.fs.as_mut() {
            fs.cur = Some(b);
        }
    }

    /// The block receiving statements, opening an unreachable one after a jump.
    fn current_block(&mut self, loc: Loc) -> Option<BlockId> {
        let cur = self.fs.as_ref()?.cur;
        match cur {
            Some(b) => Some(b),
            None => {
                let b = self.new_block(loc);
                self.start_block(b);
                Some(b)
            }
        }
    }

    pub(super) fn emit(&mut self, kind: StmtKind, loc: Loc) {
        // Outside a function (file-scope constants) there is nowhere to put effects; callers
        // only reach here with effect-free expressions there.
        if !self.can_emit() {
            return;
        }
        if let Some(b) = self.current_block(loc) {
            if let Some(fs) = self.fs.as_mut() {
                fs.blocks[b.0 as usize].stmts.push(Stmt { kind, loc });
            }
        }
    }

    /// `local = src;`, the assignment every temporary and declared local starts with.
    pub(super) fn assign_local(&mut self, local: LocalId, src: Expr, loc: Loc) {
        self.emit(
            StmtKind::Assign {
                dst: LValue::Var(VarRef::Local(local)),
                src,
            },
            loc,
        );
    }

    fn can_emit(&self) -> bool {
        self.fs.as_ref().is_some_and(|f| !f.blocks.is_empty())
    }

    /// Ends the current block with `term`; following code is unreachable until a new block.
    pub(super) fn terminate(&mut self, term: Terminator) {
        if !self.can_emit() {
            return;
        }
        let loc = Loc::default();
        if let Some(b) = self.current_block(loc) {
            if let Some(fs) = self.fs.as_mut() {
                fs.blocks[b.0 as usize].term = term;
                fs.cur = None;
            }
        }
    }

    pub(super) fn jump(&mut self, target: BlockId) {
        if self.fs.as_ref().is_some_and(|f| f.cur.is_some()) {
            self.terminate(Terminator::Goto(target));
        }
    }

    pub(super) fn branch(&mut self, cond: Expr, then_bb: BlockId, else_bb: BlockId) {
        match cond.as_const() {
            Some(v) => self.terminate(Terminator::Goto(if v != 0 { then_bb } else { else_bb })),
            None => self.terminate(Terminator::Branch {
                cond,
                then_bb,
                else_bb,
            }),
        }
    }

    /// Lowers a condition as short-circuit jumps to `t` (true) or `f` (false).
    pub(super) fn cond(&mut self, node: Node, t: BlockId, f: BlockId) {
        match node.kind() {
            "parenthesized_expression" => {
                if let Some(inner) = node.named_child(0) {
                    if inner.kind() != "compound_statement" {
                        return self.cond(inner, t, f);
                    }
                }
            }
            "binary_expression" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.node_text(o))
                    .unwrap_or("");
                if let (Some(l), Some(r), "&&" | "||") = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    op,
                ) {
                    self.typed(node, &CType::INT);
                    let loc = self.loc(r);
                    let mid = self.new_block(loc);
                    if op == "&&" {
                        self.cond(l, mid, f);
                    } else {
                        self.cond(l, t, mid);
                    }
                    self.start_block(mid);
                    return self.cond(r, t, f);
                }
            }
            "unary_expression" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.node_text(o))
                    .unwrap_or("");
                if op == "!" {
                    if let Some(a) = node.child_by_field_name("argument") {
                        self.typed(node, &CType::INT);
                        return self.cond(a, f, t);
                    }
                }
            }
            _ => {}
        }
        let e = self.expr(node);
        let c = self.as_condition(e);
        self.branch(c, t, f);
    }

    // ----- statements ---------------------------------------------------------------------

    /// The items of a compound statement, in a new scope.
    pub(super) fn compound_items(&mut self, node: Node) {
        let mut c = node.walk();
        let items: Vec<Node> = node.named_children(&mut c).collect();
        for item in items {
            self.block_item(item);
        }
    }

    pub(super) fn block_item(&mut self, node: Node) {
        match node.kind() {
            "declaration" => self.local_declaration(node),
            "type_definition" => self.type_definition(node),
            "comment" => {}
            "function_definition" => self.nested_function(node),
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let _ = self.type_specifier(node);
            }
            _ => self.statement(node),
        }
    }

    /// A GNU nested function (`int add(int v) { return v + k; }` inside a function): not
    /// analysed, like a function the front end skips, so that a call of it is unknown code
    /// that may write anything. It is named `outer.add` (no other function can have that
    /// name), and every local of the enclosing function that a nested function names reads
    /// as an unknown value (see [`FnState::nested_names`]): a call through a pointer to it, at
    /// any time, may have changed them. A nested function that jumps out (`goto`) makes the
    /// enclosing function impossible to model: it is skipped.
    fn nested_function(&mut self, node: Node) {
        if has_kind(node, "goto_statement") {
            return self.fatal(node, "nested function with a goto");
        }
        let outer = self.fs.as_ref().map(|f| f.name.clone()).unwrap_or_default();
        let Some(name) = node
            .child_by_field_name("declarator")
            .and_then(|d| self.declarator_name(d))
        else {
            return self.fatal(node, "nested function definition");
        };
        let specs = self.specs(node);
        let base = specs.ty.clone().unwrap_or(CType::INT);
        let declared = self.declarator(node.child_by_field_name("declarator"), base);
        let CType::Function(ft) = &declared.ty else {
            return self.fatal(node, "nested function definition");
        };
        let unique = format!("{outer}.{name}");
        self.declare_function(&unique, ft, &specs, declared.noreturn);
        if let Some(f) = self.funcs.get_mut(&unique) {
            f.linkage = Linkage::Internal;
        }
        self.declare(&name, Symbol::Func(unique.clone()));
        let loc = self.loc(node);
        self.prog.skipped.push(SkippedFunction {
            name: unique.clone(),
            loc,
            reason: format!("nested in `{outer}`, its calls are unknown code"),
            mentions: self.identifiers_in(node),
        });
        self.diag(
            node,
            DiagnosticKind::SkippedFunction,
            format!("function `{unique}` skipped: a nested function, not analysed"),
        );
    }

    /// Whether `name` is named by a nested function of the function being lowered.
    pub(super) fn nested_functions_name(&self, name: &str) -> bool {
        self.fs
            .as_ref()
            .is_some_and(|f| f.nested_names.contains(name))
    }

    pub(super) fn statement(&mut self, node: Node) {
        let loc = self.loc(node);
        match node.kind() {
            "compound_statement" => {
                self.push_scope();
                self.compound_items(node);
                self.pop_scope();
            }
            "expression_statement" => {
                if let Some(e) = node.named_child(0) {
                    self.discard(e);
                }
            }
            "if_statement" => {
                let (tb, fb, join) = (
                    self.new_block(loc),
                    self.new_block(loc),
                    self.new_block(loc),
                );
                if let Some(c) = node.child_by_field_name("condition") {
                    self.cond(c, tb, fb);
                }
                self.start_block(tb);
                if let Some(s) = node.child_by_field_name("consequence") {
                    self.statement(s);
                }
                self.jump(join);
                self.start_block(fb);
                if let Some(alt) = node.child_by_field_name("alternative") {
                    if let Some(s) = alt.named_child(0) {
                        self.statement(s);
                    }
                }
                self.jump(join);
                self.start_block(join);
            }
            "while_statement" => self.while_loop(node, loc),
            "do_statement" => self.do_loop(node, loc),
            "for_statement" => self.for_loop(node, loc),
            "switch_statement" => self.switch(node),
            "case_statement" => self.case(node),
            "break_statement" => match self
                .fs
                .as_ref()
                .and_then(|f| f.break_targets.last().copied())
            {
                Some(t) => self.terminate(Terminator::Goto(t)),
                None => self.fatal(node, "break outside a loop or switch"),
            },
            "continue_statement" => {
                match self
                    .fs
                    .as_ref()
                    .and_then(|f| f.continue_targets.last().copied())
                {
                    Some(t) => self.terminate(Terminator::Goto(t)),
                    None => self.fatal(node, "continue outside a loop"),
                }
            }
            "return_statement" => {
                let value = node.named_child(0).map(|e| self.expr(e));
                let ret = self.fs.as_ref().map_or(CType::Void, |f| f.ret.clone());
                let value = match value {
                    Some(v) if ret == CType::Void => {
                        // `return f();` in a void function: keep the effects, drop the value.
                        let _ = v;
                        None
                    }
                    Some(v) if ret.is_aggregate() && v.ty == ret => Some(v),
                    Some(v) => Some(self.convert(v, &ret)),
                    None => None,
                };
                self.terminate(Terminator::Return(value));
            }
            "goto_statement" => {
                let Some(label) = node.child_by_field_name("label") else {
                    return;
                };
                let name = self.node_text(label).to_string();
                let target = self.c_label_block(&name, loc);
                self.terminate(Terminator::Goto(target));
            }
            "labeled_statement" => {
                if let Some(label) = node.child_by_field_name("label") {
                    let name = self.node_text(label).to_string();
                    let b = self.c_label_block(&name, loc);
                    self.jump(b);
                    self.start_block(b);
                }
                let mut c = node.walk();
                let inner: Vec<Node> = node
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "statement_identifier")
                    .collect();
                for s in inner {
                    self.block_item(s);
                }
            }
            "attributed_statement" => {
                let mut c = node.walk();
                let inner: Vec<Node> = node
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "attribute_declaration")
                    .collect();
                for s in inner {
                    self.statement(s);
                }
            }
            "declaration" | "type_definition" => self.block_item(node),
            ";" => {}
            // A statement we do not know may jump anywhere: no sound model of the function.
            _ => self.fatal(node, &format!("unsupported statement `{}`", node.kind())),
        }
    }

    fn c_label_block(&mut self, name: &str, loc: Loc) -> BlockId {
        if let Some(b) = self.fs.as_ref().and_then(|f| f.c_labels.get(name).copied()) {
            return b;
        }
        let b = self.new_block(loc);
        if let Some(fs) = self.fs.as_mut() {
            fs.c_labels.insert(name.to_string(), b);
        }
        b
    }

    fn switch(&mut self, node: Node) {
        let loc = self.loc(node);
        let scrutinee = match node.child_by_field_name("condition") {
            Some(c) => self.expr(c),
            None => Expr::fresh(FallbackKind::UnsupportedStmt, CType::INT),
        };
        let kind = match scrutinee.ty {
            CType::Int(k) => crate::ir::types::promote(k),
            _ => IntKind::Int,
        };
        let scrutinee = self.convert(scrutinee, &CType::Int(kind));
        let Some(dispatch) = self.current_block(loc) else {
            return;
        };
        let exit = self.new_block(loc);
        if let Some(fs) = self.fs.as_mut() {
            fs.cur = None; // code before the first case is unreachable
            fs.break_targets.push(exit);
            fs.switches.push(SwitchState {
                kind,
                cases: Vec::new(),
                default: None,
            });
        }
        if let Some(body) = node.child_by_field_name("body") {
            self.statement(body);
        }
        self.jump(exit);
        let Some(fs) = self.fs.as_mut() else { return };
        fs.break_targets.pop();
        let Some(sw) = fs.switches.pop() else { return };
        fs.blocks[dispatch.0 as usize].term = Terminator::Switch {
            scrutinee,
            cases: sw.cases,
            default: sw.default.unwrap_or(exit),
        };
        fs.cur = Some(exit);
    }

    fn case(&mut self, node: Node) {
        let loc = self.loc(node);
        let b = self.new_block(loc);
        self.jump(b); // fall-through from the previous case
        self.start_block(b);
        let value = node.child_by_field_name("value");
        let in_switch = self.fs.as_ref().is_some_and(|f| !f.switches.is_empty());
        if !in_switch {
            self.fatal(node, "case outside a switch");
        }
        match value {
            None => {
                if let Some(sw) = self.fs.as_mut().and_then(|f| f.switches.last_mut()) {
                    sw.default = Some(b);
                }
            }
            Some(v) => {
                // A GNU case range parses as the value plus an ERROR node holding the other
                // bound: before the value for `'a' ... 'z'`, after it for `1 ... 5`.
                let value_pos = v.start_byte();
                let mut c = node.walk();
                let other = node
                    .children(&mut c)
                    .find(|n| n.is_error())
                    .and_then(|err| {
                        err.named_child(0)
                            .map(|b| (err.start_byte() < value_pos, b))
                    });
                let value = self.case_value(v);
                let (lo, hi) = match other {
                    Some((true, b)) => (self.case_value(b), value),
                    Some((false, b)) => (value, self.case_value(b)),
                    None => (value, value),
                };
                match (lo, hi) {
                    (Some(lo), Some(hi)) => {
                        if let Some(sw) = self.fs.as_mut().and_then(|f| f.switches.last_mut()) {
                            let (lo, hi) = (sw.kind.wrap(lo), sw.kind.wrap(hi));
                            sw.cases.push(SwitchCase { lo, hi, target: b });
                        }
                    }
                    // Without the value we cannot say which inputs reach this case or the others.
                    _ => self.fatal(v, "case value is not a constant"),
                }
            }
        }
        let mut c = node.walk();
        let body: Vec<Node> = node
            .named_children(&mut c)
            .filter(|n| Some(*n) != value && !n.is_error())
            .collect();
        for s in body {
            self.block_item(s);
        }
    }

    fn case_value(&mut self, node: Node) -> Option<i128> {
        let e = self.lower_const_expr(node);
        crate::ir::consteval::eval(&e)
    }

    /// `pc_label(pred, id, "TAG")`: a test objective with a pure predicate.
    pub(super) fn label_call(&mut self, node: Node, args: &[Node]) {
        let loc = self.loc(node);
        let (Some(pred_node), Some(id_node)) = (args.first(), args.get(1)) else {
            self.fallback(
                node,
                FallbackKind::UnsupportedStmt,
                "pc_label needs a predicate and an id",
            );
            return;
        };
        let Some(id) = self.const_u64(*id_node) else {
            self.fallback(
                *id_node,
                FallbackKind::UnsupportedStmt,
                "pc_label id is not a constant",
            );
            return;
        };
        let tag = args
            .get(2)
            .map(|t| self.literal_text(*t))
            .unwrap_or_default();
        let text = one_line(self.node_text(*pred_node));
        let pred = if has_effects(*pred_node) {
            self.fallback(
                *pred_node,
                FallbackKind::ImpurePredicate,
                "label predicate has side effects",
            );
            Expr::fresh(FallbackKind::ImpurePredicate, CType::INT)
        } else {
            let e = self.pure_expr(*pred_node);
            self.as_condition(e)
        };
        let bindings = self.label_bindings(args);
        self.emit(
            StmtKind::Label {
                id,
                tag,
                pred,
                text,
                bindings,
            },
            loc,
        );
    }

    /// A string literal's text (a label's tag, a binding's name).
    fn literal_text(&self, node: Node) -> String {
        let bytes = crate::frontend::literals::decode_literal(&self.text[node.byte_range()]);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// A constant expression's non-negative value (a label's id, a sequence's numbers).
    fn const_u64(&mut self, node: Node) -> Option<u64> {
        let e = self.lower_const_expr(node);
        crate::ir::consteval::eval(&e).and_then(|v| u64::try_from(v).ok())
    }

    /// LTest's `pc_label_sequence(cond, id, pos, len, var, n, ...)` (a position of a chain) and
    /// `pc_label_sequence_condition(0, var)` (a break of `var`'s chains), kept as marks for the
    /// hyperlabel questions. A position whose numbers are not constants is marked with id
    /// `u64::MAX`, which makes every sequence question of the program unanswered.
    pub(super) fn sequence_call(&mut self, node: Node, position: bool, args: &[Node]) {
        let loc = self.loc(node);
        let number = |this: &mut Self, k: usize| args.get(k).and_then(|n| this.const_u64(*n));
        let var_at = if position { 4 } else { 1 };
        let var = args
            .get(var_at)
            .map(|n| one_line(self.node_text(*n)))
            .unwrap_or_default();
        let mark = if position {
            let cond = match args.first() {
                Some(c) if !has_effects(*c) => {
                    let e = self.pure_expr(*c);
                    self.as_condition(e)
                }
                _ => Expr::fresh(FallbackKind::ImpurePredicate, CType::INT),
            };
            match (number(self, 1), number(self, 2), number(self, 3)) {
                (Some(id), Some(pos), Some(len)) => SequenceMark::Position {
                    id,
                    pos,
                    len,
                    var,
                    cond,
                },
                _ => {
                    self.fallback(
                        node,
                        FallbackKind::UnsupportedStmt,
                        "pc_label_sequence numbers are not constants",
                    );
                    SequenceMark::Position {
                        id: u64::MAX,
                        pos: 0,
                        len: 0,
                        var,
                        cond,
                    }
                }
            }
        } else {
            SequenceMark::Break { var }
        };
        self.emit(StmtKind::Sequence(mark), loc);
    }

    /// `pc_label_bindings(pred, id, tag, hyperlabel, n, "name", value, ...)`: the named
    /// values (none for `pc_label`). A value with side effects is left out: its name stays
    /// unconstrained for the hyperlabel questions.
    fn label_bindings(&mut self, args: &[Node]) -> Vec<(String, Expr)> {
        let mut out = Vec::new();
        for pair in args.get(5..).unwrap_or_default().chunks(2) {
            let [name, value] = pair else { break };
            if name.kind() != "string_literal" || has_effects(*value) {
                continue;
            }
            let name = self.literal_text(*name);
            let e = self.pure_expr(*value);
            out.push((name, e));
        }
        out
    }

    // ----- local declarations -------------------------------------------------------------

    /// `__auto_type x = e;` (GNU C; `annotate` declares the temporaries of hoisted calls so):
    /// `x` takes the type of `e`.
    fn auto_type_declaration(&mut self, node: Node) {
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let target = d.child_by_field_name("declarator");
            let value = d.child_by_field_name("value");
            let (Some(t), Some(v)) = (target, value) else {
                self.fallback(
                    d,
                    FallbackKind::UnsupportedStmt,
                    "__auto_type without a value",
                );
                continue;
            };
            if t.kind() != "identifier" || v.kind() == "initializer_list" {
                self.fallback(d, FallbackKind::UnsupportedStmt, "unsupported __auto_type");
                continue;
            }
            let name = self.node_text(t).to_string();
            let e = self.expr(v);
            let id = self.new_local(&name, e.ty.clone(), false);
            self.declare(&name, Symbol::Var(VarRef::Local(id), e.ty.clone()));
            let loc = self.loc(d);
            self.assign_local(id, e, loc);
        }
    }

    pub(super) fn local_declaration(&mut self, node: Node) {
        if node
            .child_by_field_name("type")
            .is_some_and(|t| self.node_text(t) == "__auto_type")
        {
            self.auto_type_declaration(node);
            return;
        }
        let specs = self.specs(node);
        let base = specs.ty.clone().unwrap_or(CType::INT);
        // `a * b;` parses as a declaration when `a` is unknown as a type; if `a` is a variable
        // it was a multiplication without effect.
        if let Some(t) = node.child_by_field_name("type") {
            if t.kind() == "type_identifier" {
                if let Some(Symbol::Var(..)) = self.lookup(self.node_text(t)) {
                    return;
                }
            }
        }
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (decl_node, value) = if d.kind() == "init_declarator" {
                (
                    d.child_by_field_name("declarator"),
                    d.child_by_field_name("value"),
                )
            } else {
                (Some(d), None)
            };
            let declared = self.declarator(decl_node, base.clone());
            let Some(name) = declared.name.clone() else {
                continue;
            };
            let loc = self.loc(d);
            if let CType::Function(ft) = &declared.ty {
                self.declare_function(&name, ft, &specs, declared.noreturn);
                continue;
            }
            let mut ty = declared.ty.clone();
            // `int a[] = {1, 2}`: the length comes from the initializer.
            if let (CType::Array(elem, None), Some(v)) = (&ty, value) {
                let n = self.initializer_length(elem, v);
                ty = CType::Array(elem.clone(), n);
            }
            if specs.is_extern {
                let id = self.global_var(&name, ty.clone(), Linkage::External, &specs, node);
                self.declare(&name, Symbol::Var(VarRef::Global(id), ty));
                continue;
            }
            if specs.is_static {
                // A static local is a global with internal linkage and a unique name.
                let fname = self.fs.as_ref().map(|f| f.name.clone()).unwrap_or_default();
                let gname = static_local_name(&fname, &name);
                let gid = GlobalId(self.prog.globals.len() as u32);
                self.prog.globals.push(Global {
                    name: gname,
                    ty: ty.clone(),
                    linkage: Linkage::Internal,
                    is_extern_decl: false,
                    volatile: specs.volatile || self.nested_functions_name(&name),
                    is_const: specs.is_const,
                    init: Vec::new(),
                    loc,
                });
                self.declare(&name, Symbol::Var(VarRef::Global(gid), ty));
                match value {
                    Some(v) => self.global_initializer(gid, v),
                    None => self.prog.globals[gid.0 as usize].init.push(Stmt {
                        kind: StmtKind::ZeroInit {
                            dst: LValue::Var(VarRef::Global(gid)),
                        },
                        loc,
                    }),
                }
                continue;
            }
            let id = self.new_local(&name, ty.clone(), false);
            if let Some(fs) = self.fs.as_mut() {
                fs.locals[id.0 as usize].volatile |= specs.volatile;
            }
            self.declare(&name, Symbol::Var(VarRef::Local(id), ty.clone()));
            let lv = LValue::Var(VarRef::Local(id));
            match value {
                Some(v) => self.initialize(lv, &ty, v),
                // An uninitialised local holds an arbitrary value (and a fresh one in each
                // iteration of a loop around the declaration).
                None => self.emit(
                    StmtKind::Havoc {
                        dst: lv,
                        reason: None,
                    },
                    loc,
                ),
            }
        }
    }
}

/// A predicate's text for reports, on one line: every run of whitespace outside string and
/// character literals becomes one space. The preprocessor pads macro expansions with newlines
/// and spaces that depend on how it was invoked (`Z_NULL` expanded from another file), which
/// would make the same label read differently from run to run.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut pending_space = false;
    for c in text.trim().chars() {
        if let Some(q) = quote {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
        }
        out.push(c);
    }
    out
}

/// Whether the subtree at `node` holds a node of `kind`.
fn has_kind(node: Node, kind: &str) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == kind {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    false
}

#[cfg(test)]
mod one_line_tests {
    use super::one_line;

    #[test]
    fn whitespace_runs_become_one_space_outside_literals() {
        assert_eq!(
            one_line("source == \n      \n   ((void *)0) "),
            "source == ((void *)0)"
        );
        assert_eq!(
            one_line("s[0] == '  ' || t == \"a  \\\" b\""),
            "s[0] == '  ' || t == \"a  \\\" b\""
        );
    }
}
