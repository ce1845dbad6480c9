//! Builds the encoders' expression trees from tree-sitter nodes of the unpreprocessed source,
//! typing variables, fields, cells and casts from the lowered program by name, so that
//! mutants are only written where they still compile. What cannot be typed is `Unknown`.

use tree_sitter::Node;

use covprune_encoders::{BinOp, Expr, Ty, UnOp};

use crate::frontend::literals::{parse_number, Number};
use crate::frontend::syntax::{division_guards, flat, sole_operand};
use crate::ir::{CType, FloatKind, Function, Program};

/// Type knowledge for one function of a program (or none at all).
pub struct TypeEnv<'a> {
    pub program: Option<&'a Program>,
    pub function: Option<&'a Function>,
    /// Calls replaced by temporaries: byte range, the temporary, its type.
    pub hoisted: Vec<((usize, usize), String, CType)>,
    /// Names of the file that stand for constants (enumerators, constant macros).
    pub constants: std::rc::Rc<Constants>,
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

/// The C type a class stands for when nothing more is known (`int`, `double`, `void *`).
fn ctype_of(ty: Ty) -> CType {
    match ty {
        Ty::Int => CType::INT,
        Ty::Float => CType::Float(FloatKind::Double),
        Ty::Pointer => CType::Pointer(Box::new(CType::Unknown)),
        _ => CType::Unknown,
    }
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

impl TypeEnv<'_> {
    /// The type of a variable named `name` in this function: its locals (when all of that
    /// name agree), else a global.
    pub fn var(&self, name: &str) -> Option<CType> {
        if let Some(f) = self.function {
            let mut found: Option<&CType> = None;
            for l in f.locals.iter().filter(|l| l.name == name) {
                match found {
                    Some(t) if t != &l.ty => return Some(CType::Unknown),
                    _ => found = Some(&l.ty),
                }
            }
            if let Some(t) = found {
                return Some(t.clone());
            }
            // A `static` local is lowered as the global `function.name`.
            let own = format!("{}.{name}", f.name);
            if let Some(g) = self
                .program
                .and_then(|p| p.globals.iter().find(|g| g.name == own))
            {
                return Some(g.ty.clone());
            }
        }
        let p = self.program?;
        p.globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.ty.clone())
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
            && self.var(&name).is_none()
            && self.return_type(&name).is_none()
            && self.constant(&name).is_none()
            && !self.constants.object_macros.contains(&name)
            && !self.hoisted.iter().any(|(_, t, _)| *t == name)
    }

    /// The same environment reading the nodes at `hoisted` ranges as the text given there.
    pub fn with_hoisted(&self, hoisted: Vec<((usize, usize), String, CType)>) -> TypeEnv<'_> {
        TypeEnv {
            program: self.program,
            function: self.function,
            hoisted,
            constants: self.constants.clone(),
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
        // Positions in the expansion are not the file's: no hoisted call applies there.
        let inner = self.with_hoisted(Vec::new());
        let (mut e, t) = inner.build(root, expansion.wrapped.as_bytes());
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
                    return Some(VarKind::Named(format!("{}::{name}", f.name)));
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

    fn field(&self, record: &CType, name: &str) -> Option<CType> {
        let CType::Record(id) = record else {
            return None;
        };
        let rec = self.program?.records.get(id.0 as usize)?;
        for f in &rec.fields {
            if f.name == name {
                return Some(f.ty.clone());
            }
            if f.name.is_empty() {
                if let Some(t) = self.field(&f.ty, name) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// The expression tree of a side-effect-free expression node, with its C type if known.
    pub fn build(&self, node: Node, text: &[u8]) -> (Expr, CType) {
        let opaque = |ty: Ty, ctype: CType| {
            (
                Expr::Opaque {
                    text: self.substituted_text(node, text),
                    ty,
                    guards: division_guards(node, text),
                },
                ctype,
            )
        };
        let field = |n: &str| node.child_by_field_name(n);
        if let Some((_, name, t)) = self
            .hoisted
            .iter()
            .find(|(r, _, _)| *r == (node.start_byte(), node.end_byte()))
        {
            return (
                Expr::Lval {
                    text: name.clone(),
                    ty: class(t),
                    inner: Vec::new(),
                },
                t.clone(),
            );
        }
        match node.kind() {
            "parenthesized_expression" => match sole_operand(node) {
                Some(inner) => {
                    let (e, t) = self.build(inner, text);
                    (
                        Expr::Wrap {
                            pre: "(".into(),
                            e: Box::new(e),
                            post: ")".into(),
                            ty: None,
                        },
                        t,
                    )
                }
                _ => opaque(Ty::Unknown, CType::Unknown),
            },
            "identifier" => {
                let name = flat(node, text);
                match self.var(&name) {
                    Some(t) => (
                        Expr::Lval {
                            text: name,
                            ty: class(&t),
                            inner: Vec::new(),
                        },
                        t,
                    ),
                    None => match self.constant(&name) {
                        Some(ty) => match self.negated(&name) {
                            // Frama-C sees the macro's `-1`, whose `-` mutation removes.
                            Some(lit) => (
                                Expr::Un(UnOp::Neg, Box::new(Expr::Const { text: lit, ty })),
                                ctype_of(ty),
                            ),
                            None => (Expr::Const { text: name, ty }, ctype_of(ty)),
                        },
                        None => opaque(Ty::Unknown, CType::Unknown),
                    },
                }
            }
            "number_literal" => {
                let t = flat(node, text);
                // tree-sitter reads `-1` as one literal; C (and Frama-C) as `-` applied to `1`.
                if let Some(magnitude) = t.strip_prefix('-') {
                    let (e, ty) = literal(magnitude.trim());
                    return (Expr::Un(UnOp::Neg, Box::new(e)), ty);
                }
                let (e, ty) = literal(&t);
                (e, ty)
            }
            "char_literal" | "true" | "false" => (
                Expr::Const {
                    text: self.substituted_text(node, text),
                    ty: Ty::Int,
                },
                CType::INT,
            ),
            "string_literal" | "concatenated_string" | "null" => {
                opaque(Ty::Pointer, CType::Pointer(Box::new(CType::Unknown)))
            }
            "sizeof_expression" | "alignof_expression" => (
                Expr::Opaque {
                    text: self.substituted_text(node, text),
                    ty: Ty::Int,
                    guards: Vec::new(),
                },
                CType::ULONG,
            ),
            "field_expression" => {
                let (Some(arg), Some(f)) = (field("argument"), field("field")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (inner, at) = self.build(arg, text);
                let arrow = field("operator").is_some_and(|o| o.utf8_text(text) == Ok("->"));
                let rec = match (&at, arrow) {
                    (CType::Pointer(p), true) => (**p).clone(),
                    (CType::Array(p, _), true) => (**p).clone(),
                    (t, false) => t.clone(),
                    _ => CType::Unknown,
                };
                let t = self
                    .field(&rec, f.utf8_text(text).unwrap_or(""))
                    .unwrap_or(CType::Unknown);
                (
                    Expr::Lval {
                        text: self.substituted_text(node, text),
                        ty: class(&t),
                        inner: vec![inner],
                    },
                    t,
                )
            }
            "subscript_expression" => {
                let (Some(arg), Some(idx)) = (field("argument"), field("index")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (a, at) = self.build(arg, text);
                let (i, it) = self.build(idx, text);
                let elem = |t: &CType| match t {
                    CType::Pointer(e) | CType::Array(e, _) => Some((**e).clone()),
                    _ => None,
                };
                let t = elem(&at).or_else(|| elem(&it)).unwrap_or(CType::Unknown);
                (
                    Expr::Lval {
                        text: self.substituted_text(node, text),
                        ty: class(&t),
                        inner: vec![a, i],
                    },
                    t,
                )
            }
            "pointer_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                let Some(arg) = field("argument") else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                if op == "&" {
                    return opaque(Ty::Pointer, CType::Pointer(Box::new(CType::Unknown)));
                }
                let (inner, t) = self.build(arg, text);
                let t = match t {
                    CType::Pointer(e) | CType::Array(e, _) => *e,
                    _ => CType::Unknown,
                };
                (
                    Expr::Lval {
                        text: self.substituted_text(node, text),
                        ty: class(&t),
                        inner: vec![inner],
                    },
                    t,
                )
            }
            "unary_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                let Some(arg) = field("argument") else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (inner, t) = self.build(arg, text);
                let op = match op {
                    "-" => UnOp::Neg,
                    "+" => UnOp::Plus,
                    "!" => UnOp::Not,
                    "~" => UnOp::BitNot,
                    _ => return opaque(Ty::Unknown, CType::Unknown),
                };
                let t = if matches!(op, UnOp::Neg | UnOp::Plus) {
                    t
                } else {
                    CType::INT
                };
                (Expr::Un(op, Box::new(inner)), t)
            }
            "binary_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                // `(T)*p`, `(T)-x`: tree-sitter reads a cast of a unary operand as a binary
                // operator when it does not know that `T` names a type. Not built: the text
                // is kept whole and nothing is read inside it.
                if matches!(op, "*" | "-" | "+" | "&")
                    && field("left").is_some_and(|l| self.names_a_type(l, text))
                {
                    return opaque(Ty::Unknown, CType::Unknown);
                }
                let (Some(op), Some(l), Some(r)) =
                    (BinOp::from_c(op), field("left"), field("right"))
                else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (l, lt) = self.build(l, text);
                let (r, rt) = self.build(r, text);
                // CIL writes the usual arithmetic conversions as casts, where LAnnotate's
                // visitor stops: the operands are converted the same way here.
                let (l, r, known) = match op {
                    BinOp::And | BinOp::Or => (l, r, Some(CType::INT)),
                    BinOp::Shl | BinOp::Shr => match &lt {
                        CType::Int(k) => {
                            let p = CType::Int(crate::ir::types::promote(*k));
                            (converted(l, &lt, &p), r, Some(p))
                        }
                        _ => (l, r, None),
                    },
                    _ => match crate::ir::types::arithmetic_common(&lt, &rt) {
                        Some(c) => {
                            let result = if op.is_relational() {
                                CType::INT
                            } else {
                                c.clone()
                            };
                            (converted(l, &lt, &c), converted(r, &rt, &c), Some(result))
                        }
                        None => (l, r, None),
                    },
                };
                let e = match node.child_by_field_name("operator") {
                    Some(o) => Expr::bin_at(op, l, r, (o.start_byte(), o.end_byte())),
                    None => Expr::bin(op, l, r),
                };
                let t = known.unwrap_or_else(|| ctype_of(e.ty()));
                (e, t)
            }
            "call_expression" => match self.macro_use(node, text) {
                Some(built) => built,
                None => opaque(Ty::Unknown, CType::Unknown),
            },
            "conditional_expression" => {
                let (Some(c), Some(a), Some(b)) = (
                    field("condition"),
                    field("consequence"),
                    field("alternative"),
                ) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (c, _) = self.build(c, text);
                let (a, at) = self.build(a, text);
                let (b, bt) = self.build(b, text);
                let t = if at == bt { at } else { CType::Unknown };
                (Expr::Cond(Box::new(c), Box::new(a), Box::new(b)), t)
            }
            "cast_expression" => {
                let (Some(ty), Some(v)) = (field("type"), field("value")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let ty_text = flat(ty, text);
                let (inner, _) = self.build(v, text);
                let t = cast_class(&ty_text);
                let ctype = ctype_of(t);
                (
                    Expr::Wrap {
                        pre: format!("({ty_text})"),
                        e: Box::new(inner),
                        post: String::new(),
                        ty: Some(t),
                    },
                    ctype,
                )
            }
            _ => opaque(Ty::Unknown, CType::Unknown),
        }
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

/// The class of a cast's type name, from its words: pointers, the arithmetic keywords; typedef
/// names are unknown.
fn cast_class(ty: &str) -> Ty {
    if ty.contains('*') || ty.contains('(') {
        return Ty::Pointer;
    }
    let words: Vec<&str> = ty.split_whitespace().collect();
    if words.iter().any(|w| matches!(*w, "float" | "double")) {
        return Ty::Float;
    }
    const INT_WORDS: &[&str] = &[
        "int", "char", "short", "long", "signed", "unsigned", "_Bool", "const", "volatile",
        "register",
    ];
    if words.iter().all(|w| INT_WORDS.contains(w)) && !words.is_empty() {
        Ty::Int
    } else {
        Ty::Unknown
    }
}

/// A number literal without sign: its class and C type (C11 6.4.4, as the lowering reads it).
fn literal(t: &str) -> (Expr, CType) {
    let (ty, ctype) = match parse_number(t) {
        Some(Number::Int(_, kind)) => (Ty::Int, CType::Int(kind)),
        Some(Number::Float(_, kind)) => (Ty::Float, CType::Float(kind)),
        None => (Ty::Unknown, CType::Unknown),
    };
    (
        Expr::Const {
            text: t.to_string(),
            ty,
        },
        ctype,
    )
}
