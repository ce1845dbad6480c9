//! covprune's own typed IR: side-effect-free C expressions, simple statements and basic blocks.
//!
//! Architecture invariant: nothing here knows tree-sitter, petgraph or Z3. Expressions are pure
//! (calls and side effects were hoisted into statements by the front end) and carry their C type
//! with every conversion explicit, so later stages never re-derive C's typing rules.

pub mod consteval;
pub mod display;
pub mod import;
pub mod spans;
pub mod types;
pub mod visit;

pub use types::{CType, Field, FloatKind, FuncType, IntKind, Layout, Record, RecordId};

/// Index into [`Program::files`].
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct FileId(pub u32);

/// An original source position (after mapping back through line markers).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Loc {
    pub file: FileId,
    pub line: u32,
    pub col: u32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct LocalId(pub u32);
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct GlobalId(pub u32);
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct BlockId(pub u32);
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FuncId(pub u32);

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum VarRef {
    Local(LocalId),
    Global(GlobalId),
}

/// Why the front end replaced something by an unconstrained value or a havoc. Each kind is
/// counted in `covprune parse` output, so users see how much was not modelled exactly.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum FallbackKind {
    Float,
    InlineAsm,
    VaArg,
    Builtin,
    UnknownType,
    UndeclaredIdentifier,
    UnsupportedExpr,
    UnsupportedStmt,
    ComputedGoto,
    NonConstInit,
    ImpurePredicate,
    ParseErrorRecovered,
}

impl FallbackKind {
    pub fn name(self) -> &'static str {
        match self {
            FallbackKind::Float => "float",
            FallbackKind::InlineAsm => "inline_asm",
            FallbackKind::VaArg => "va_arg",
            FallbackKind::Builtin => "builtin",
            FallbackKind::UnknownType => "unknown_type",
            FallbackKind::UndeclaredIdentifier => "undeclared_identifier",
            FallbackKind::UnsupportedExpr => "unsupported_expr",
            FallbackKind::UnsupportedStmt => "unsupported_stmt",
            FallbackKind::ComputedGoto => "computed_goto",
            FallbackKind::NonConstInit => "non_const_init",
            FallbackKind::ImpurePredicate => "impure_predicate",
            FallbackKind::ParseErrorRecovered => "parse_error_recovered",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UnOp {
    Neg,
    BitNot,
    /// Logical not; operand is a scalar, result is `int` 0/1.
    LogNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// Only in pure contexts (label predicates, constant folding); program code uses branches.
    LogAnd,
    LogOr,
    /// Pointer plus integer: the right operand counts elements of the pointee type.
    PtrAdd,
    /// Pointer minus pointer: a count of elements (type `long`).
    PtrDiff,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LogAnd => "&&",
            BinOp::LogOr => "||",
            BinOp::PtrAdd => "+p",
            BinOp::PtrDiff => "-p",
        }
    }
}

/// A place in memory or a variable.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum LValue {
    Var(VarRef),
    /// `*e`, with `e` a pointer; the place has the pointee type.
    Deref(Box<Expr>),
    /// Member `field` (index into the record's fields) of a record place.
    Field(Box<LValue>, RecordId, u32),
    /// Element `index` of an array place.
    Index(Box<LValue>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ExprKind {
    /// An integer constant, already wrapped to the expression's type.
    Const(i128),
    /// A floating constant (the engine treats float values as unconstrained).
    FloatConst(#[serde(with = "float_bits")] f64),
    /// Address of the string literal `idx` in [`Program::strings`].
    Str(u32),
    /// Read of a place; for an array place this is the array value (decayed by `AddrOf`).
    Read(LValue),
    AddrOf(LValue),
    /// Address of a function (a function designator used as a value).
    FuncAddr(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Conversion of the operand to this expression's type (C 6.3 rules, exactly).
    Cast(Box<Expr>),
    /// `c ? a : b` in a pure context (label predicates only).
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// An unconstrained value: something the IR does not model exactly.
    Fresh(FallbackKind),
}

/// A float constant travels as its bits: JSON has no infinities or NaNs.
mod float_bits {
    pub fn serialize<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.to_bits())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        <u64 as serde::Deserialize>::deserialize(d).map(f64::from_bits)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: CType,
}

impl Expr {
    pub fn new(kind: ExprKind, ty: CType) -> Expr {
        Expr { kind, ty }
    }
    pub fn int_const(v: i128, kind: IntKind) -> Expr {
        Expr::new(ExprKind::Const(kind.wrap(v)), CType::Int(kind))
    }
    pub fn fresh(reason: FallbackKind, ty: CType) -> Expr {
        Expr::new(ExprKind::Fresh(reason), ty)
    }
    pub fn read(lv: LValue, ty: CType) -> Expr {
        Expr::new(ExprKind::Read(lv), ty)
    }
    pub fn as_const(&self) -> Option<i128> {
        match self.kind {
            ExprKind::Const(v) => Some(v),
            _ => None,
        }
    }
    /// The expression under its conversions.
    pub fn strip_casts(&self) -> &Expr {
        match &self.kind {
            ExprKind::Cast(inner) => inner.strip_casts(),
            _ => self,
        }
    }
    /// True when evaluating the expression can have no effect and no trap worth modelling as
    /// control flow (all IR expressions are; kept for readers of label predicates).
    pub fn contains_fresh(&self) -> bool {
        match &self.kind {
            ExprKind::Fresh(_) => true,
            ExprKind::Unary(_, e) | ExprKind::Cast(e) => e.contains_fresh(),
            ExprKind::Binary(_, a, b) => a.contains_fresh() || b.contains_fresh(),
            ExprKind::Cond(c, a, b) => {
                c.contains_fresh() || a.contains_fresh() || b.contains_fresh()
            }
            ExprKind::Read(lv) | ExprKind::AddrOf(lv) => lv.contains_fresh(),
            _ => false,
        }
    }
}

impl LValue {
    pub fn contains_fresh(&self) -> bool {
        match self {
            LValue::Var(_) => false,
            LValue::Deref(e) => e.contains_fresh(),
            LValue::Field(b, _, _) => b.contains_fresh(),
            LValue::Index(b, i) => b.contains_fresh() || i.contains_fresh(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Callee {
    /// A call of a named function (defined in the program or external).
    Direct(String),
    /// A call through a function pointer.
    Indirect(Expr),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum StmtKind {
    Assign {
        dst: LValue,
        src: Expr,
    },
    /// The place gets an unconstrained value (uninitialised declaration, unmodelled effect).
    Havoc {
        dst: LValue,
        reason: Option<FallbackKind>,
    },
    /// Every byte of the object is zero (static storage, `= {0}` before explicit members).
    ZeroInit {
        dst: LValue,
    },
    /// The path continues only when the condition holds.
    Assume(Expr),
    Call {
        dst: Option<LValue>,
        callee: Callee,
        args: Vec<Expr>,
    },
    /// A `pc_label(pred, id, "tag")` test objective.
    Label {
        id: u64,
        tag: String,
        pred: Expr,
        /// The predicate as written, for reports.
        text: String,
        /// `pc_label_bindings`' named values, saved when the label is covered (hyperlabels).
        /// They are no part of the path: only the hyperlabel questions read them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bindings: Vec<(String, Expr)>,
    },
    /// Something with effects the IR does not model (inline asm): may write any memory.
    HavocMemory(FallbackKind),
    /// An LTest sequence mark (`pc_label_sequence`, `pc_label_sequence_condition`): no part of
    /// the path; only the hyperlabel questions read them.
    Sequence(SequenceMark),
}

/// LTest's data-flow chains: position `pos` of chain `id` (of `len` positions, over variable
/// `var`, reached when `cond` holds), or a redefinition of `var`, which breaks its chains
/// under way.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SequenceMark {
    Position {
        id: u64,
        pos: u64,
        len: u64,
        var: String,
        cond: Expr,
    },
    Break {
        var: String,
    },
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stmt {
    pub kind: StmtKind,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SwitchCase {
    /// Inclusive value range (a GNU case range, or one value when `lo == hi`).
    pub lo: i128,
    pub hi: i128,
    pub target: BlockId,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Terminator {
    Goto(BlockId),
    Branch {
        cond: Expr,
        then_bb: BlockId,
        else_bb: BlockId,
    },
    Switch {
        scrutinee: Expr,
        cases: Vec<SwitchCase>,
        default: BlockId,
    },
    Return(Option<Expr>),
    /// The block ends in a call that never returns (`exit`, `abort`, ...).
    NoReturn,
    /// Control cannot reach the end of this block (e.g. after `__builtin_unreachable`).
    Unreachable,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub term: Terminator,
    pub loc: Loc,
    /// True for the head of a source loop (`while`, `do`, `for`); back edges target these.
    pub loop_head: bool,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Local {
    pub name: String,
    pub ty: CType,
    pub is_param: bool,
    /// Locals whose address is taken live in memory; the rest are SSA values.
    pub address_taken: bool,
    pub volatile: bool,
    /// `static` locals keep their value across calls: the engine treats them like globals.
    pub is_static: bool,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Linkage {
    External,
    Internal,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Global {
    pub name: String,
    pub ty: CType,
    pub linkage: Linkage,
    pub is_extern_decl: bool,
    pub volatile: bool,
    pub is_const: bool,
    /// Initialisation as straight-line statements, for whole-program runs from `main`.
    pub init: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Function {
    pub name: String,
    pub ty: FuncType,
    pub linkage: Linkage,
    pub locals: Vec<Local>,
    /// Parameters, in order, as indices into `locals`.
    pub params: Vec<LocalId>,
    pub blocks: Vec<Block>,
    pub entry: BlockId,
    pub loc: Loc,
    /// True when some statement could not be lowered exactly (see the program diagnostics).
    pub has_fallbacks: bool,
}

impl Function {
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.0 as usize]
    }
    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }
    pub fn successors(&self, id: BlockId) -> Vec<BlockId> {
        match &self.block(id).term {
            Terminator::Goto(t) => vec![*t],
            Terminator::Branch {
                then_bb, else_bb, ..
            } => vec![*then_bb, *else_bb],
            Terminator::Switch { cases, default, .. } => {
                let mut v: Vec<BlockId> = cases.iter().map(|c| c.target).collect();
                v.push(*default);
                v
            }
            Terminator::Return(_) | Terminator::NoReturn | Terminator::Unreachable => vec![],
        }
    }
    /// Depth-first search from the entry: the reachable blocks in reverse postorder, and the
    /// retreating edges (to a block still on the search stack), which include every back edge.
    pub fn depth_first(&self) -> (Vec<BlockId>, std::collections::HashSet<(BlockId, BlockId)>) {
        let mut color = vec![0u8; self.blocks.len()]; // 0 white, 1 on stack, 2 done
        let mut post = Vec::new();
        let mut back = std::collections::HashSet::new();
        let mut stack: Vec<(BlockId, usize)> = vec![(self.entry, 0)];
        color[self.entry.0 as usize] = 1;
        while let Some((b, i)) = stack.pop() {
            let succs = self.successors(b);
            if i < succs.len() {
                stack.push((b, i + 1));
                let s = succs[i];
                match color[s.0 as usize] {
                    0 => {
                        color[s.0 as usize] = 1;
                        stack.push((s, 0));
                    }
                    1 => {
                        back.insert((b, s));
                    }
                    _ => {}
                }
            } else {
                color[b.0 as usize] = 2;
                post.push(b);
            }
        }
        post.reverse();
        (post, back)
    }

    /// Every label statement of the function, with its block.
    pub fn labels(&self) -> impl Iterator<Item = (BlockId, &Stmt)> {
        self.blocks.iter().enumerate().flat_map(|(b, blk)| {
            blk.stmts
                .iter()
                .filter(|s| matches!(s.kind, StmtKind::Label { .. }))
                .map(move |s| (BlockId(b as u32), s))
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    pub loc: Loc,
    /// The function being lowered, if any.
    pub function: Option<String>,
    pub kind: DiagnosticKind,
    pub message: String,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum DiagnosticKind {
    /// A construct replaced by a sound approximation.
    Fallback(FallbackKind),
    /// A syntax error in the parse tree outside any function, skipped.
    ParseError,
    /// A function that could not be lowered; its labels stay unknown.
    SkippedFunction,
}

/// A declared but undefined function (external, or defined in another unit).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExternalDecl {
    pub name: String,
    pub ty: CType,
}

/// A function the front end had to skip, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedFunction {
    pub name: String,
    pub loc: Loc,
    pub reason: String,
    /// Identifiers its text mentions: the functions it may call or take the address of are
    /// not known to have all their callers in the program.
    pub mentions: std::collections::BTreeSet<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Original file names, indexed by [`FileId`].
    pub files: Vec<String>,
    pub records: Vec<Record>,
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
    pub skipped: Vec<SkippedFunction>,
    /// Declarations of functions not defined here, by name.
    pub externals: Vec<ExternalDecl>,
    pub strings: Vec<Vec<u8>>,
    pub diagnostics: Vec<Diagnostic>,
    /// Where the unit's text names each declared function (read from the syntax tree).
    pub function_uses: std::collections::BTreeMap<String, FunctionUses>,
    /// Functions of other units merged in ([`import`]): encoded in place of their calls or
    /// summarised, never proved as the unit's own.
    pub imported: std::collections::BTreeSet<String>,
    /// The types the lowering gave the expressions of function bodies, by their place in the
    /// lowered text (shared by the program's copies).
    pub source_types: std::sync::Arc<spans::SourceTypes>,
}

/// How the text of a translation unit names one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionUses {
    /// The function definitions that call it directly, by name.
    pub called_from: std::collections::BTreeSet<String>,
    /// Named any other way: its address taken, called from outside a function definition the
    /// front end could name, or an identifier of the same name in another role.
    pub referenced: bool,
}

/// The name a `static` local of function `function` has as a global of the program.
pub fn static_local_name(function: &str, local: &str) -> String {
    format!("{function}.{local}")
}

/// The index of each function of `functions` by its name.
pub fn index_by_name(functions: &[Function]) -> std::collections::BTreeMap<&str, usize> {
    functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect()
}

impl Program {
    /// Gives this file's own static functions and variables external linkage (not those
    /// merged from other files): code outside the file may then call and touch them, as a test
    /// that includes the file's source does.
    pub fn open_statics(&mut self) {
        for f in &mut self.functions {
            if !self.imported.contains(&f.name) {
                f.linkage = Linkage::External;
            }
        }
        for g in &mut self.globals {
            if g.linkage == Linkage::Internal {
                g.linkage = Linkage::External;
            }
        }
    }

    pub fn layout(&self) -> Layout<'_> {
        Layout {
            records: &self.records,
        }
    }
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
    pub fn file_name(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map_or("?", String::as_str)
    }
    pub fn fmt_loc(&self, loc: Loc) -> String {
        format!("{}:{}:{}", self.file_name(loc.file), loc.line, loc.col)
    }
    /// The ids of every label statement of the lowered functions (an id written twice comes
    /// twice).
    pub fn label_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.functions
            .iter()
            .flat_map(|f| f.labels())
            .filter_map(|(_, s)| match &s.kind {
                StmtKind::Label { id, .. } => Some(*id),
                _ => None,
            })
    }
}

/// Whether `f` calls through a pointer.
pub fn calls_indirectly(f: &Function) -> bool {
    f.blocks.iter().flat_map(|b| &b.stmts).any(|s| {
        matches!(
            s.kind,
            StmtKind::Call {
                callee: Callee::Indirect(_),
                ..
            }
        )
    })
}

/// The functions `f` calls directly.
pub fn direct_callees(f: &Function) -> std::collections::BTreeSet<String> {
    f.blocks
        .iter()
        .flat_map(|b| &b.stmts)
        .filter_map(|s| match &s.kind {
            StmtKind::Call {
                callee: Callee::Direct(n),
                ..
            } => Some(n.clone()),
            _ => None,
        })
        .collect()
}
