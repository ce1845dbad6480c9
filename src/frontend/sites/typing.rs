//! Builds the encoders' expression trees from tree-sitter nodes of the unpreprocessed source,
//! each operand with the type the lowering gave it (`typed`), so that mutants are only written
//! where they still compile. What the lowering did not type is `Unknown`.

use tree_sitter::Node;

use covprune_encoders::{BinOp, Expr, Ty, UnOp};

use super::typed::{MacroNames, NodeTypes};
use crate::frontend::syntax::{division_guards, flat, sole_operand};
use crate::ir::{CType, Function, Program};

/// Type knowledge for one function of a program (or none at all).
pub struct TypeEnv<'a> {
    pub program: Option<&'a Program>,
    pub function: Option<&'a Function>,
    /// Calls replaced by temporaries: byte range, the temporary, its type.
    pub hoisted: Vec<((usize, usize), String, CType)>,
    /// Names of the file that stand for constants (enumerators, constant macros).
    pub constants: std::rc::Rc<Constants>,
    /// The lowering's types at the function's nodes.
    pub types: std::rc::Rc<NodeTypes<'a>>,
    /// The file's macros, as the alignment of its text with the lowered one reads them.
    pub macros: std::rc::Rc<MacroNames>,
}

/// Names that stand for constants, with their class.
#[derive(Clone, Debug, Default)]
pub struct Constants {
    pub kinds: std::collections::BTreeMap<String, Ty>,
    /// Macros whose value is a negated literal (`#define ERROR -1`), with the literal: Frama-C
    /// sees `-1` after preprocessing, and mutation removes the `-` (AOR).
    pub negated: std::collections::BTreeMap<String, String>,
    /// Conditional macros whose body calls and assigns nothing (`Abs(x)`): a use reads as its
    /// expansion, whose `?:` Frama-C sees.
    pub pure_macros: Vec<crate::frontend::macros::ConditionalMacro>,
    /// The names the file's own `typedef`s declare.
    pub typedefs: std::collections::BTreeSet<String>,
    /// Every object-like macro's name (whatever its value), and every name the file's own
    /// `#define` lines define.
    pub object_macros: std::collections::BTreeSet<String>,
    /// The names the file `#define`s more than once (`#if` branches): what they stand for
    /// depends on the place.
    pub redefined: std::collections::BTreeSet<String>,
}

/// `-1`, `(-1)`, `( - 2.5 )`: the literal that a macro's value negates.
pub fn negated_literal(value: &str) -> Option<String> {
    let mut v = value.trim();
    while let Some(inner) = v.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        v = inner.trim();
    }
    let lit = v.strip_prefix('-')?.trim();
    (lit.starts_with(|c: char| c.is_ascii_digit())
        && lit.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
    .then(|| lit.to_string())
}

/// Constants of the standard headers, which a `.c` file's text does not define.
pub fn well_known_constant(name: &str) -> Option<Ty> {
    const INTS: &[&str] = &[
        "EOF",
        "EXIT_SUCCESS",
        "EXIT_FAILURE",
        "CHAR_BIT",
        "SCHAR_MIN",
        "SCHAR_MAX",
        "UCHAR_MAX",
        "CHAR_MIN",
        "CHAR_MAX",
        "SHRT_MIN",
        "SHRT_MAX",
        "USHRT_MAX",
        "INT_MIN",
        "INT_MAX",
        "UINT_MAX",
        "LONG_MIN",
        "LONG_MAX",
        "ULONG_MAX",
        "BUFSIZ",
        "RAND_MAX",
        "true",
        "false",
    ];
    if name == "NULL" {
        Some(Ty::Pointer)
    } else {
        INTS.contains(&name).then_some(Ty::Int)
    }
}

/// How a name read by a statement relates to what a call could change.
pub enum VarKind {
    /// A local or parameter of the function whose address is never taken and that is not
    /// `static`: no call can change it.
    Private,
    /// An array, or a local whose address is taken: reachable through pointers.
    Memory,
    /// A global or a `static` local, named as `effects` names it.
    Named(String),
}

pub fn class(t: &CType) -> Ty {
    match t {
        CType::Int(_) => Ty::Int,
        CType::Float(_) => Ty::Float,
        CType::Pointer(_) | CType::Array(..) => Ty::Pointer,
        CType::Record(_) | CType::Function(_) | CType::Void => Ty::Other,
        CType::Unknown => Ty::Unknown,
    }
}

impl<'a> TypeEnv<'a> {
    /// Whether `name` names a variable here: a local of this function (a `static` one is lowered
    /// as a global, [`crate::ir::static_local_name`]), else a global.
    pub fn is_variable(&self, name: &str) -> bool {
        let Some(p) = self.program else {
            return false;
        };
        let own = self
            .function
            .map(|f| crate::ir::static_local_name(&f.name, name));
        self.function
            .is_some_and(|f| f.locals.iter().any(|l| l.name == name))
            || p.globals
                .iter()
                .any(|g| g.name == name || Some(&g.name) == own.as_ref())
    }

    /// The type the lowering gave the expression `node`, `Unknown` if none.
    pub fn type_of(&self, node: Node) -> CType {
        self.types.type_of(node).unwrap_or(CType::Unknown)
    }

    /// A returned value, converted to the function's return type.
    pub fn as_returned(&self, e: Expr, t: &CType) -> Expr {
        match self.function {
            Some(f) => converted(e, t, &f.ty.ret),
            None => e,
        }
    }

    /// The class of a name that stands for a constant.
    pub fn constant(&self, name: &str) -> Option<Ty> {
        self.constants
            .kinds
            .get(name)
            .copied()
            .or_else(|| well_known_constant(name))
    }

    /// Whether `node` is a parenthesized name of a type: one of the file's typedefs, or,
    /// when the program is known, a name that is no variable, function or constant of it.
    fn names_a_type(&self, node: Node, text: &[u8]) -> bool {
        let Some(inner) = node
            .named_child(0)
            .filter(|i| node.kind() == "parenthesized_expression" && i.kind() == "identifier")
        else {
            return false;
        };
        let name = flat(inner, text);
        if self.constants.typedefs.contains(&name) {
            return true;
        }
        self.program.is_some()
            && !self.is_variable(&name)
            && self.return_type(&name).is_none()
            && self.constant(&name).is_none()
            && !self.constants.object_macros.contains(&name)
            && !self.hoisted.iter().any(|(_, t, _)| *t == name)
    }

    /// The same environment reading the nodes at `hoisted` ranges as the text given there.
    pub fn with_hoisted(&self, hoisted: Vec<((usize, usize), String, CType)>) -> TypeEnv<'a> {
        TypeEnv {
            hoisted,
            ..self.with_types(self.types.clone())
        }
    }

    /// The same environment reading its types from `types`, with no hoisted call.
    fn with_types(&self, types: std::rc::Rc<NodeTypes<'a>>) -> TypeEnv<'a> {
        TypeEnv {
            program: self.program,
            function: self.function,
            hoisted: Vec::new(),
            constants: self.constants.clone(),
            types,
            macros: self.macros.clone(),
        }
    }

    /// A use of a pure conditional macro with arguments free of effects, built from its
    /// expansion (parenthesised as the preprocessor leaves it).
    fn macro_use(&self, node: Node, text: &[u8]) -> Option<(Expr, CType)> {
        let name = super::syntax::callee(node, text)?;
        let m = self.constants.pure_macros.iter().find(|m| m.name == name)?;
        let args = node.child_by_field_name("arguments")?;
        let mut c = args.walk();
        let args: Vec<Node> = args
            .named_children(&mut c)
            .filter(|a| a.kind() != "comment")
            .collect();
        if args.len() != m.params.len() || args.iter().any(|a| super::syntax::has_effects(*a)) {
            return None;
        }
        let expansion = super::expansions::Expansion::of(m, &args, text)?;
        let root = super::expansions::Expansion::root(&expansion.tree)?;
        // Positions in the expansion are not the file's: no hoisted call applies there, and
        // its types are those of the tokens the call stands for.
        let wrapped = expansion.wrapped.as_bytes();
        // The expansion's own tokens, within the parentheses `Expansion` wraps it in.
        let body = sole_operand(root).unwrap_or(root);
        let types = self.types.expansion(node, body, wrapped, &self.macros);
        let inner = self.with_types(std::rc::Rc::new(types));
        let (mut e, t) = inner.build(root, wrapped);
        e.positions_mut(&mut |w| w.0 = None);
        Some((
            Expr::Wrap {
                pre: "(".into(),
                e: Box::new(e),
                post: ")".into(),
                ty: None,
            },
            t,
        ))
    }

    /// The literal a constant name's value negates (`EOF` is `-1`), if it is one.
    pub fn negated(&self, name: &str) -> Option<String> {
        match self.constants.negated.get(name) {
            Some(l) => Some(l.clone()),
            None if name == "EOF" && !self.constants.kinds.contains_key(name) => Some("1".into()),
            None => None,
        }
    }

    /// What a name of this function stands for, if it is a variable.
    pub fn variable_kind(&self, name: &str) -> Option<VarKind> {
        if let Some(f) = self.function {
            let locals: Vec<_> = f.locals.iter().filter(|l| l.name == name).collect();
            if !locals.is_empty() {
                if locals.iter().any(|l| l.is_static) {
                    let key = crate::ir::static_local_name(&f.name, name);
                    return Some(VarKind::Named(key));
                }
                let memory = locals
                    .iter()
                    .any(|l| l.address_taken || matches!(l.ty, CType::Array(..)));
                return Some(if memory {
                    VarKind::Memory
                } else {
                    VarKind::Private
                });
            }
        }
        let g = self.program?.globals.iter().find(|g| g.name == name)?;
        Some(if matches!(g.ty, CType::Array(..)) {
            VarKind::Memory
        } else {
            VarKind::Named(name.to_string())
        })
    }

    /// The return type of a function called by name, when the program declares it.
    pub fn return_type(&self, name: &str) -> Option<CType> {
        let p = self.program?;
        if let Some(f) = p.function(name) {
            return Some(f.ty.ret.clone());
        }
        let e = p.externals.iter().find(|e| e.name == name)?;
        e.ty.func().map(|f| f.ret.clone())
    }

    /// The node's text on one line, with hoisted calls replaced by their temporaries.
    pub fn substituted_text(&self, node: Node, text: &[u8]) -> String {
        self.substituted_raw(node, text)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// [`Self::substituted_text`] with the text's own bytes (a string literal's blanks, a
    /// comment's line end), for code that runs.
    pub fn substituted_raw(&self, node: Node, text: &[u8]) -> String {
        let (start, end) = (node.start_byte(), node.end_byte());
        let mut out = Vec::new();
        let mut pos = start;
        let mut inside: Vec<_> = self
            .hoisted
            .iter()
            .filter(|(r, _, _)| r.0 >= start && r.1 <= end)
            .collect();
        // Outer first: a substitution inside one already made is part of it.
        inside.sort_by_key(|(r, _, _)| (r.0, std::cmp::Reverse(r.1)));
        for (r, name, _) in inside {
            if r.0 < pos {
                continue;
            }
            out.extend_from_slice(&text[pos..r.0]);
            out.extend_from_slice(name.as_bytes());
            pos = r.1;
        }
        out.extend_from_slice(&text[pos..end]);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// True when `name` is a local (not a parameter) of this function.
    /// A local variable or a parameter of the function.
    pub fn is_own_variable(&self, name: &str) -> bool {
        self.function
            .is_some_and(|f| f.locals.iter().any(|l| l.name == name))
    }

    pub fn is_local(&self, name: &str) -> bool {
        self.function
            .is_some_and(|f| f.locals.iter().any(|l| l.name == name && !l.is_param))
    }

    /// The expression tree of a side-effect-free expression node, with the type the lowering
    /// gave it. What is not built is opaque: its text, whose class is known for a string, an
    /// address and a size, and unknown elsewhere (a call's value among them: a hoisted call's
    /// temporary is typed).
    pub fn build(&self, node: Node, text: &[u8]) -> (Expr, CType) {
        let range = (node.start_byte(), node.end_byte());
        if let Some((_, name, t)) = self.hoisted.iter().find(|(r, _, _)| *r == range) {
            let lval = Expr::Lval {
                text: name.clone(),
                ty: class(t),
                inner: Vec::new(),
            };
            return (lval, t.clone());
        }
        let field = |n: &str| node.child_by_field_name(n);
        let unknown = || (self.opaque(node, text, Ty::Unknown), CType::Unknown);
        let typed = |e: Expr| (e, self.type_of(node));
        match node.kind() {
            "parenthesized_expression" => match sole_operand(node) {
                Some(inner) => {
                    let (e, t) = self.build(inner, text);
                    let wrap = Expr::Wrap {
                        pre: "(".into(),
                        e: Box::new(e),
                        post: ")".into(),
                        ty: None,
                    };
                    (wrap, t)
                }
                _ => unknown(),
            },
            "identifier" => self.identifier(node, text).unwrap_or_else(unknown),
            "number_literal" => {
                let t = self.type_of(node);
                let ty = class(&t);
                let written = flat(node, text);
                // tree-sitter reads `-1` as one literal; C (and Frama-C) as `-` applied to `1`.
                let e = match written.strip_prefix('-') {
                    Some(magnitude) => Expr::Un(
                        UnOp::Neg,
                        Box::new(Expr::Const {
                            text: magnitude.trim().to_string(),
                            ty,
                        }),
                    ),
                    None => Expr::Const { text: written, ty },
                };
                (e, t)
            }
            "char_literal" | "true" | "false" => typed(Expr::Const {
                text: self.substituted_text(node, text),
                ty: Ty::Int,
            }),
            "string_literal" | "concatenated_string" | "null" => {
                typed(self.opaque(node, text, Ty::Pointer))
            }
            "sizeof_expression" | "alignof_expression" => typed(Expr::Opaque {
                text: self.substituted_text(node, text),
                ty: Ty::Int,
                guards: Vec::new(),
            }),
            "field_expression" | "subscript_expression" | "pointer_expression" => {
                self.place(node, text).unwrap_or_else(unknown)
            }
            "unary_expression" => {
                let op = match field("operator").and_then(|o| o.utf8_text(text).ok()) {
                    Some("-") => UnOp::Neg,
                    Some("+") => UnOp::Plus,
                    Some("!") => UnOp::Not,
                    Some("~") => UnOp::BitNot,
                    _ => return unknown(),
                };
                match field("argument") {
                    Some(arg) => typed(Expr::Un(op, Box::new(self.build(arg, text).0))),
                    None => unknown(),
                }
            }
            "binary_expression" => self.binary(node, text).unwrap_or_else(unknown),
            "call_expression" => self.macro_use(node, text).unwrap_or_else(unknown),
            "conditional_expression" => {
                let (Some(c), Some(a), Some(b)) = (
                    field("condition"),
                    field("consequence"),
                    field("alternative"),
                ) else {
                    return unknown();
                };
                let [c, a, b] = [c, a, b].map(|n| Box::new(self.build(n, text).0));
                typed(Expr::Cond(c, a, b))
            }
            "cast_expression" => {
                let (Some(ty), Some(v)) = (field("type"), field("value")) else {
                    return unknown();
                };
                let t = self.type_of(node);
                let e = Expr::Wrap {
                    pre: format!("({})", flat(ty, text)),
                    e: Box::new(self.build(v, text).0),
                    post: String::new(),
                    ty: Some(class(&t)),
                };
                (e, t)
            }
            _ => unknown(),
        }
    }

    /// The node's text as one opaque expression of class `ty`.
    fn opaque(&self, node: Node, text: &[u8], ty: Ty) -> Expr {
        Expr::Opaque {
            text: self.substituted_text(node, text),
            ty,
            guards: division_guards(node, text),
        }
    }

    /// A variable, or a name that stands for a constant.
    fn identifier(&self, node: Node, text: &[u8]) -> Option<(Expr, CType)> {
        let name = flat(node, text);
        let t = self.type_of(node);
        if self.is_variable(&name) {
            let lval = Expr::Lval {
                text: name,
                ty: class(&t),
                inner: Vec::new(),
            };
            return Some((lval, t));
        }
        let ty = self.constant(&name)?;
        let e = match self.negated(&name) {
            // Frama-C sees the macro's `-1`, whose `-` mutation removes.
            Some(lit) => Expr::Un(UnOp::Neg, Box::new(Expr::Const { text: lit, ty })),
            None => Expr::Const { text: name, ty },
        };
        Some((e, t))
    }

    /// A member, an element or what a pointer points to (`&x` is an opaque address).
    fn place(&self, node: Node, text: &[u8]) -> Option<(Expr, CType)> {
        let field = |n: &str| node.child_by_field_name(n);
        let inner = match node.kind() {
            "field_expression" => {
                field("field")?;
                vec![self.build(field("argument")?, text).0]
            }
            "subscript_expression" => {
                let (a, i) = (field("argument")?, field("index")?);
                vec![self.build(a, text).0, self.build(i, text).0]
            }
            _ => {
                let arg = field("argument")?;
                if field("operator").is_some_and(|o| o.utf8_text(text) == Ok("&")) {
                    let address = self.opaque(node, text, Ty::Pointer);
                    return Some((address, self.type_of(node)));
                }
                vec![self.build(arg, text).0]
            }
        };
        let t = self.type_of(node);
        let lval = Expr::Lval {
            text: self.substituted_text(node, text),
            ty: class(&t),
            inner,
        };
        Some((lval, t))
    }

    /// `l op r`, its operands converted as CIL writes the usual arithmetic conversions (casts,
    /// where LAnnotate's visitor stops); none for a cast of a unary operand that tree-sitter
    /// reads as a binary operator (`(T)*p`, `(T)-x` with `T` a type it does not know).
    fn binary(&self, node: Node, text: &[u8]) -> Option<(Expr, CType)> {
        let field = |n: &str| node.child_by_field_name(n);
        let written = field("operator").and_then(|o| o.utf8_text(text).ok())?;
        if matches!(written, "*" | "-" | "+" | "&")
            && field("left").is_some_and(|l| self.names_a_type(l, text))
        {
            return None;
        }
        let (op, l, r) = (BinOp::from_c(written)?, field("left")?, field("right")?);
        let (l, lt) = self.build(l, text);
        let (r, rt) = self.build(r, text);
        let t = self.type_of(node);
        let (l, r) = match op {
            BinOp::And | BinOp::Or => (l, r),
            // The left operand is promoted: to the result's type.
            BinOp::Shl | BinOp::Shr => (converted(l, &lt, &t), r),
            _ => match crate::ir::types::arithmetic_common(&lt, &rt) {
                Some(c) => (converted(l, &lt, &c), converted(r, &rt, &c)),
                None => (l, r),
            },
        };
        let e = match field("operator") {
            Some(o) => Expr::bin_at(op, l, r, (o.start_byte(), o.end_byte())),
            None => Expr::bin(op, l, r),
        };
        Some((e, t))
    }
}

/// `l op= r` as CIL writes it: `l = l op r`, with the operands converted to their common type
/// and the result to `l`'s; `at`: the token written (`+=`, `++`).
pub fn operated(op: BinOp, l: Expr, lt: &CType, r: Expr, rt: &CType, at: (usize, usize)) -> Expr {
    match crate::ir::types::arithmetic_common(lt, rt) {
        Some(c) => {
            let e = Expr::bin_at(op, converted(l, lt, &c), converted(r, rt, &c), at);
            converted(e, &c, lt)
        }
        None => Expr::bin_at(op, l, r, at),
    }
}

/// `e` of type `from` as a value of type `to`: an implicit conversion between arithmetic
/// types is a cast in CIL's normal form (a node without text of its own here).
pub fn converted(e: Expr, from: &CType, to: &CType) -> Expr {
    let arith = |t: &CType| matches!(t, CType::Int(_) | CType::Float(_));
    if from == to || !arith(from) || !arith(to) {
        return e;
    }
    Expr::Wrap {
        pre: String::new(),
        e: Box::new(e),
        post: String::new(),
        ty: Some(class(to)),
    }
}
