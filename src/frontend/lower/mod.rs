//! Lowering from the tree-sitter-c parse tree to the IR: scopes, declarations, types, functions.
//!
//! Expressions live in `expr.rs`, statements and control flow in `stmt.rs`, initializers in
//! `init.rs`. Every node the lowering does not understand becomes a fallback with a diagnostic.

mod expr;
mod init;
mod loops;
mod stmt;
mod types;
mod uses;

use std::collections::HashMap;

use tree_sitter::Node;

use super::source::PreparedSource;
use crate::ir::*;

#[derive(Clone, Debug)]
enum Symbol {
    Var(VarRef, CType),
    Typedef(CType),
    EnumConst(i128, CType),
    Func(String),
}

#[derive(Clone, Copy, Debug)]
enum Tag {
    Record(RecordId),
    Enum(IntKind),
}

/// What we know of a function name: its type, linkage and whether it never returns.
#[derive(Clone, Debug)]
struct FuncSym {
    ty: FuncType,
    linkage: Linkage,
    defined: bool,
}

/// Per-function lowering state: locals, blocks under construction and jump targets.
struct FnState {
    name: String,
    locals: Vec<Local>,
    blocks: Vec<Block>,
    /// The block receiving statements; `None` after a jump (code there is unreachable until
    /// a label or case starts a new block).
    cur: Option<BlockId>,
    break_targets: Vec<BlockId>,
    continue_targets: Vec<BlockId>,
    switches: Vec<SwitchState>,
    c_labels: HashMap<String, BlockId>,
    ret: CType,
    has_fallbacks: bool,
    /// Set when something makes the whole function impossible to model soundly.
    fatal: Option<String>,
    /// Lowering a static initializer: `&&`, `||` and `?:` stay operators, no branches.
    const_context: bool,
    /// The identifiers the function's nested functions (GNU C) mention: the locals of those
    /// names are volatile, for a nested function, called through a pointer at any time, may
    /// read and write them.
    nested_names: std::collections::HashSet<String>,
}

impl FnState {
    /// State for lowering code that is not a function body (static initializers, constant
    /// expressions): no branches, effects collected in one block.
    fn scratch(name: String) -> FnState {
        FnState::new(name, CType::Void, true)
    }

    fn new(name: String, ret: CType, const_context: bool) -> FnState {
        FnState {
            name,
            locals: Vec::new(),
            blocks: Vec::new(),
            cur: None,
            break_targets: Vec::new(),
            continue_targets: Vec::new(),
            switches: Vec::new(),
            c_labels: HashMap::new(),
            ret,
            has_fallbacks: false,
            fatal: None,
            const_context,
            nested_names: Default::default(),
        }
    }
}

struct SwitchState {
    /// Type of the promoted controlling expression; case values convert to it.
    kind: IntKind,
    cases: Vec<SwitchCase>,
    default: Option<BlockId>,
}

/// Declaration specifiers, gathered from a declaration's children.
#[derive(Clone, Debug, Default)]
struct Specs {
    ty: Option<CType>,
    is_static: bool,
    is_extern: bool,
    is_typedef: bool,
    volatile: bool,
    is_const: bool,
    noreturn: bool,
}

/// A declarator resolved against a base type.
struct Declared {
    name: Option<String>,
    ty: CType,
    /// Parameters of the function declarator applied directly to the name.
    params: Option<Vec<Param>>,
    noreturn: bool,
}

#[derive(Clone)]
struct Param {
    name: Option<String>,
    ty: CType,
}

pub(super) struct Lowerer<'s> {
    src: &'s PreparedSource,
    text: &'s [u8],
    prog: Program,
    scopes: Vec<HashMap<String, Symbol>>,
    tags: Vec<HashMap<String, Tag>>,
    globals_by_name: HashMap<String, GlobalId>,
    funcs: HashMap<String, FuncSym>,
    fs: Option<FnState>,
    /// The type of each expression lowered and the tokens of each body (see `ir::spans`).
    types: crate::ir::spans::SourceTypes,
}

/// Lowers a whole translation unit; never fails (what cannot be lowered is reported inside).
pub(super) fn lower_translation_unit(src: &PreparedSource, root: Node) -> Program {
    let mut l = Lowerer {
        src,
        text: &src.text,
        prog: Program {
            files: src.line_map.files.clone(),
            ..Program::default()
        },
        scopes: vec![HashMap::new()],
        tags: vec![HashMap::new()],
        globals_by_name: HashMap::new(),
        funcs: HashMap::new(),
        fs: None,
        types: Default::default(),
    };
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        l.top_level(item);
    }
    let functions = l.funcs.keys().cloned().collect();
    l.prog.function_uses = uses::function_uses(l.text, root, &functions);
    l.finish()
}

impl<'s> Lowerer<'s> {
    // ----- small helpers -------------------------------------------------------------------

    fn loc(&self, node: Node) -> Loc {
        self.src.loc_of_byte(node.start_byte())
    }

    /// Every identifier a subtree mentions: what a function that could not be lowered may
    /// call or take the address of.
    fn identifiers_in(&self, node: Node) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "identifier" {
                out.insert(self.node_text(n).to_string());
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        out
    }

    /// Every identifier the nested function definitions (GNU C) inside `body` mention.
    fn nested_functions_mentions(&self, body: Node) -> std::collections::HashSet<String> {
        let mut out = std::collections::HashSet::new();
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            if n.kind() == "function_definition" {
                out.extend(self.identifiers_in(n));
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        out
    }

    fn node_text(&self, node: Node) -> &'s str {
        std::str::from_utf8(&self.text[node.byte_range()]).unwrap_or("")
    }

    fn diag(&mut self, node: Node, kind: DiagnosticKind, message: impl Into<String>) {
        let loc = self.loc(node);
        let function = self.fs.as_ref().map(|f| f.name.clone());
        if let (DiagnosticKind::Fallback(_), Some(fs)) = (kind, self.fs.as_mut()) {
            fs.has_fallbacks = true;
        }
        self.prog.diagnostics.push(Diagnostic {
            loc,
            function,
            kind,
            message: message.into(),
        });
    }

    /// Marks the current function as impossible to lower soundly: it will be skipped.
    pub(super) fn fatal(&mut self, node: Node, why: &str) {
        let line = self.loc(node).line;
        if let Some(fs) = self.fs.as_mut() {
            if fs.fatal.is_none() {
                fs.fatal = Some(format!("{why} at line {line}"));
            }
        }
    }

    fn fallback(&mut self, node: Node, kind: FallbackKind, what: &str) {
        let snippet: String = self.node_text(node).chars().take(60).collect();
        self.diag(
            node,
            DiagnosticKind::Fallback(kind),
            format!("{what}: `{}`", snippet.replace('\n', " ")),
        );
    }

    fn layout(&self) -> Layout<'_> {
        self.prog.layout()
    }

    fn lookup(&self, name: &str) -> Option<&Symbol> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, name: &str, sym: Symbol) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), sym);
        }
    }

    fn lookup_tag(&self, name: &str) -> Option<Tag> {
        self.tags.iter().rev().find_map(|s| s.get(name)).copied()
    }

    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
        self.tags.push(HashMap::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
        self.tags.pop();
    }

    fn typedef_type(&self, name: &str) -> Option<CType> {
        match self.lookup(name) {
            Some(Symbol::Typedef(t)) => Some(t.clone()),
            _ => None,
        }
    }

    // ----- top level ----------------------------------------------------------------------

    fn top_level(&mut self, item: Node) {
        match item.kind() {
            "function_definition" => self.function_definition(item),
            "declaration" => {
                if unrecoverable_error(item).is_some() {
                    self.diag(
                        item,
                        DiagnosticKind::ParseError,
                        "declaration with a syntax error skipped",
                    );
                    return;
                }
                self.global_declaration(item);
            }
            "type_definition" => self.type_definition(item),
            "linkage_specification" => {
                if let Some(body) = item.child_by_field_name("body") {
                    if body.kind() == "declaration_list" {
                        let mut c = body.walk();
                        for ch in body.named_children(&mut c) {
                            self.top_level(ch);
                        }
                    } else {
                        self.top_level(body);
                    }
                }
            }
            "comment"
            | "preproc_call"
            | "preproc_def"
            | "preproc_function_def"
            | "preproc_include"
            | "preproc_if"
            | "preproc_ifdef" => {}
            "expression_statement" if item.named_child_count() == 0 => {}
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let _ = self.type_specifier(item);
            }
            _ => {
                self.diag(
                    item,
                    DiagnosticKind::ParseError,
                    format!("unexpected `{}` at file scope skipped", item.kind()),
                );
                // Count function definitions swallowed by a syntax error as skipped.
                let mut stack = vec![item];
                let mut c = item.walk();
                while let Some(n) = stack.pop() {
                    if n.kind() == "function_definition" {
                        let name = n
                            .child_by_field_name("declarator")
                            .and_then(|d| self.declarator_name(d))
                            .unwrap_or_else(|| "?".into());
                        let loc = self.loc(n);
                        let mentions = self.identifiers_in(n);
                        self.prog.skipped.push(SkippedFunction {
                            name,
                            loc,
                            reason: "inside a region with a syntax error".into(),
                            mentions,
                        });
                    } else {
                        stack.extend(n.named_children(&mut c));
                    }
                }
            }
        }
    }

    fn declarator_name(&self, node: Node) -> Option<String> {
        match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                Some(self.node_text(node).to_string())
            }
            _ => {
                if let Some(d) = node.child_by_field_name("declarator") {
                    return self.declarator_name(d);
                }
                let mut c = node.walk();
                let found = node
                    .named_children(&mut c)
                    .find_map(|ch| self.declarator_name(ch));
                found
            }
        }
    }

    fn type_definition(&mut self, node: Node) {
        let specs = self.specs(node);
        let base = specs.ty.clone().unwrap_or(CType::INT);
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let declared = self.declarator(Some(d), base.clone());
            if let Some(name) = declared.name {
                self.declare(&name, Symbol::Typedef(declared.ty));
            }
        }
    }

    fn global_declaration(&mut self, node: Node) {
        let specs = self.specs(node);
        let base = specs.ty.clone().unwrap_or(CType::INT);
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
            if let CType::Function(ft) = &declared.ty {
                self.declare_function(&name, ft, &specs, declared.noreturn);
                continue;
            }
            let linkage = if specs.is_static {
                Linkage::Internal
            } else {
                Linkage::External
            };
            let id = self.global_var(&name, declared.ty.clone(), linkage, &specs, node);
            if let Some(v) = value {
                self.global_initializer(id, v);
            } else if !specs.is_extern {
                let g = &mut self.prog.globals[id.0 as usize];
                g.is_extern_decl = false;
                if g.init.is_empty() {
                    let loc = g.loc;
                    g.init.push(Stmt {
                        kind: StmtKind::ZeroInit {
                            dst: LValue::Var(VarRef::Global(id)),
                        },
                        loc,
                    });
                }
            }
        }
    }

    fn declare_function(&mut self, name: &str, ft: &FuncType, specs: &Specs, noreturn: bool) {
        let mut ft = ft.clone();
        ft.noreturn |= noreturn || specs.noreturn;
        let linkage = if specs.is_static {
            Linkage::Internal
        } else {
            Linkage::External
        };
        match self.funcs.get_mut(name) {
            Some(existing) => {
                existing.ty.noreturn |= ft.noreturn;
                if linkage == Linkage::Internal {
                    existing.linkage = Linkage::Internal;
                }
                if ft.prototyped && !existing.ty.prototyped {
                    let nr = existing.ty.noreturn;
                    existing.ty = ft;
                    existing.ty.noreturn = nr;
                }
            }
            None => {
                self.funcs.insert(
                    name.to_string(),
                    FuncSym {
                        ty: ft,
                        linkage,
                        defined: false,
                    },
                );
            }
        }
        self.declare(name, Symbol::Func(name.to_string()));
    }

    /// Finds or creates the global `name`, merging tentative and extern declarations.
    fn global_var(
        &mut self,
        name: &str,
        ty: CType,
        linkage: Linkage,
        specs: &Specs,
        node: Node,
    ) -> GlobalId {
        let loc = self.loc(node);
        let id = match self.globals_by_name.get(name) {
            Some(&id) => {
                let g = &mut self.prog.globals[id.0 as usize];
                // A later declaration may complete an array's length.
                if let (CType::Array(_, None), CType::Array(_, Some(_))) = (&g.ty, &ty) {
                    g.ty = ty.clone();
                }
                if linkage == Linkage::Internal {
                    g.linkage = Linkage::Internal;
                }
                id
            }
            None => {
                let id = GlobalId(self.prog.globals.len() as u32);
                self.prog.globals.push(Global {
                    name: name.to_string(),
                    ty: ty.clone(),
                    linkage,
                    is_extern_decl: specs.is_extern,
                    volatile: specs.volatile,
                    is_const: specs.is_const,
                    init: Vec::new(),
                    loc,
                });
                self.globals_by_name.insert(name.to_string(), id);
                id
            }
        };
        let gty = self.prog.globals[id.0 as usize].ty.clone();
        // File-scope symbols live in the outermost scope even when declared in a block.
        if self.scopes.len() == 1 {
            self.declare(name, Symbol::Var(VarRef::Global(id), gty));
        }
        id
    }

    // ----- functions ----------------------------------------------------------------------

    fn function_definition(&mut self, node: Node) {
        let name = node
            .child_by_field_name("declarator")
            .and_then(|d| self.declarator_name(d))
            .unwrap_or_else(|| "?".into());
        let loc = self.loc(node);
        if let Some(bad) = unrecoverable_error(node) {
            let bloc = self.loc(bad);
            self.prog.skipped.push(SkippedFunction {
                name: name.clone(),
                loc,
                mentions: self.identifiers_in(node),
                reason: format!(
                    "syntax error at line {} ({})",
                    bloc.line,
                    if bad.is_missing() {
                        "missing token"
                    } else {
                        "unparsed text"
                    }
                ),
            });
            self.diag(
                node,
                DiagnosticKind::SkippedFunction,
                format!(
                    "function `{name}` skipped: syntax error at line {}",
                    bloc.line
                ),
            );
            // Still declare it so that calls to it are typed.
            let specs = self.specs(node);
            let declared = self.declarator(
                node.child_by_field_name("declarator"),
                specs.ty.clone().unwrap_or(CType::INT),
            );
            if let CType::Function(ft) = &declared.ty {
                self.declare_function(&name, ft, &specs, declared.noreturn);
            }
            return;
        }
        let specs = self.specs(node);
        let base = specs.ty.clone().unwrap_or(CType::INT);
        let declared = self.declarator(node.child_by_field_name("declarator"), base);
        let CType::Function(mut ft) = declared.ty.clone() else {
            self.prog.skipped.push(SkippedFunction {
                name,
                loc,
                reason: "declarator is not a function".into(),
                mentions: self.identifiers_in(node),
            });
            return;
        };
        let mut params = declared.params.clone().unwrap_or_default();
        // K&R definitions: parameter types come from the declarations before the body.
        let mut c = node.walk();
        let kr_decls: Vec<Node> = node
            .named_children(&mut c)
            .filter(|ch| ch.kind() == "declaration")
            .collect();
        if !kr_decls.is_empty() {
            for decl in kr_decls {
                let dspecs = self.specs(decl);
                let dbase = dspecs.ty.clone().unwrap_or(CType::INT);
                let mut c2 = decl.walk();
                let ds: Vec<Node> = decl.children_by_field_name("declarator", &mut c2).collect();
                for d in ds {
                    let pd = self.declarator(Some(d), dbase.clone());
                    if let Some(pname) = pd.name {
                        for p in params.iter_mut() {
                            if p.name.as_deref() == Some(pname.as_str()) {
                                p.ty = adjust_param_type(pd.ty.clone());
                            }
                        }
                    }
                }
            }
            ft.params = params.iter().map(|p| p.ty.clone()).collect();
        }
        self.declare_function(&name, &ft, &specs, declared.noreturn);
        let linkage = self
            .funcs
            .get(&name)
            .map_or(Linkage::External, |f| f.linkage);
        if let Some(f) = self.funcs.get_mut(&name) {
            f.defined = true;
            ft.noreturn = f.ty.noreturn;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        self.body_tokens(&name, body);

        let mut fs = FnState::new(name.clone(), ft.ret.clone(), false);
        fs.nested_names = self.nested_functions_mentions(body);
        self.fs = Some(fs);
        let entry = self.new_block(loc);
        self.start_block(entry);
        self.push_scope();
        let mut param_ids = Vec::new();
        for p in &params {
            let pname = p.name.clone().unwrap_or_else(|| "_".into());
            let id = self.new_local(&pname, p.ty.clone(), true);
            param_ids.push(id);
            if let Some(n) = &p.name {
                self.declare(n, Symbol::Var(VarRef::Local(id), p.ty.clone()));
            }
        }
        self.compound_items(body);
        self.pop_scope();
        if self.fs.as_ref().is_some_and(|f| f.cur.is_some()) {
            // Falling off the end: `return;` (the value of a non-void function is unknown).
            self.terminate(Terminator::Return(None));
        }
        let Some(fs) = self.fs.take() else { return };
        if let Some(reason) = fs.fatal {
            self.prog.skipped.push(SkippedFunction {
                name: name.clone(),
                loc,
                reason: reason.clone(),
                mentions: self.identifiers_in(node),
            });
            self.prog.diagnostics.push(Diagnostic {
                loc,
                function: Some(name.clone()),
                kind: DiagnosticKind::SkippedFunction,
                message: format!("function `{name}` skipped: {reason}"),
            });
            return;
        }
        self.prog.functions.push(Function {
            name,
            ty: *ft,
            linkage,
            locals: fs.locals,
            params: param_ids,
            blocks: fs.blocks,
            entry,
            loc,
            has_fallbacks: fs.has_fallbacks,
        });
    }

    fn new_local(&mut self, name: &str, ty: CType, is_param: bool) -> LocalId {
        let fs = self
            .fs
            .as_mut()
            .expect("locals are only created inside a function");
        let volatile = fs.nested_names.contains(name);
        fs.locals.push(Local {
            name: name.to_string(),
            ty,
            is_param,
            address_taken: false,
            volatile,
            is_static: false,
        });
        LocalId(fs.locals.len() as u32 - 1)
    }

    fn finish(mut self) -> Program {
        // Functions declared but not defined are externals.
        let mut externals: Vec<ExternalDecl> = self
            .funcs
            .iter()
            .filter(|(_, f)| !f.defined)
            .map(|(name, f)| ExternalDecl {
                name: name.clone(),
                ty: CType::Function(Box::new(f.ty.clone())),
            })
            .collect();
        externals.sort_by(|a, b| a.name.cmp(&b.name));
        self.prog.externals = externals;
        self.prog.source_types = std::sync::Arc::new(self.types);
        self.prog
    }

    /// Records that `node` has type `ty` (see `ir::spans`).
    pub(super) fn typed(&mut self, node: Node, ty: &CType) {
        self.types.record((node.start_byte(), node.end_byte()), ty);
    }

    /// Records the tokens of the body of function `name` (see `ir::spans`).
    fn body_tokens(&mut self, name: &str, body: Node) {
        let tokens = crate::frontend::syntax::tokens(body, &|_| false)
            .into_iter()
            .map(|n| crate::ir::spans::Token {
                digest: crate::ir::spans::digest(&self.text[n.byte_range()]),
                start: n.start_byte() as u32,
                end: n.end_byte() as u32,
                row: n.start_position().row as u32,
            })
            .collect();
        self.types.bodies.insert(name.to_string(), tokens);
    }
}

/// Parameters of array or function type are pointers (C11 6.7.6.3p7-8).
fn adjust_param_type(ty: CType) -> CType {
    match ty {
        CType::Array(elem, _) => CType::Pointer(elem),
        CType::Function(f) => CType::Pointer(Box::new(CType::Function(f))),
        other => other,
    }
}

/// The first syntax error inside `node` that lowering cannot work around, if any. A GNU case
/// range (`case 1 ... 5:`) parses as a case with an ERROR holding the upper bound: that one is
/// understood by the statement lowering.
pub(super) fn unrecoverable_error(node: Node) -> Option<Node> {
    if !node.has_error() {
        return None;
    }
    let mut stack = vec![node];
    let mut cursor = node.walk();
    while let Some(n) = stack.pop() {
        if n.is_missing() {
            // `int : 32;` (an unnamed bit-field) parses with a missing field name: harmless.
            let unnamed_bitfield = n.kind() == "field_identifier"
                && n.parent().is_some_and(|p| {
                    let mut c = p.walk();
                    let has_width = p.kind() == "field_declaration"
                        && p.children(&mut c).any(|ch| ch.kind() == "bitfield_clause");
                    has_width
                });
            if unnamed_bitfield {
                continue;
            }
            return Some(n);
        }
        if n.is_error() {
            // `case 1 ... 5:` gives (value 1, ERROR(5)); `case 'a' ... 'z':` gives
            // (ERROR('a'), value 'z'): one bound in an ERROR beside the case value.
            let is_case_range = n.parent().is_some_and(|p| p.kind() == "case_statement")
                && n.named_child_count() == 1
                && n.prev_sibling().or(n.next_sibling()).is_some_and(|s| {
                    s.parent().and_then(|p| p.child_by_field_name("value")) == Some(s)
                        || s.kind() == "case"
                });
            if !is_case_range {
                return Some(n);
            }
            continue;
        }
        if n.has_error() {
            stack.extend(n.children(&mut cursor));
        }
    }
    None
}
