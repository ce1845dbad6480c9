//! Pointer targets of one encoding: which memory objects the code of a function (and of every
//! function it may call directly) can reach through which pointers, so that address-taken
//! locals, string literals and allocated blocks that no outside code can reach live in
//! memories of their own (regions) instead of the shared one, and so that a call havocs only
//! the regions it may write.
//!
//! The analysis is unification-based (Steensgaard), flow- and context-insensitive, field- and
//! type-insensitive: every value (an integer too) may carry a pointer, and each class of
//! objects has one class its stored values point into (its content). The class `EXT` holds
//! everything outside the encoding's own activations: globals, static locals, what parameters
//! and unknown code point to, blocks allocated outside the analysed code; what it stores
//! points into `EXT` again. A block a `malloc` or `calloc` call of the analysed code makes
//! has a class of its own (one per call), joined to `EXT` once a pointer to it escapes.
//!
//! Soundness argument (for executions without undefined behaviour, DESIGN.md):
//! - Every way a pointer value is made or moved in the analysed code joins classes: taking an
//!   address (the object's class), reading memory (the content of the place's class), copying a
//!   value into a place (its content), arithmetic (the classes of its operands; a pointer plus
//!   an integer stays in its object, C11 6.5.6p8, so only the pointer operand counts), calls of
//!   analysed functions (arguments into parameters, returned values into results), and library
//!   functions whose pointer behaviour is known ([`crate::libc::pointer_effects`]). An argument
//!   of any other call (unknown code, an indirect call, a function the front end skipped) joins
//!   `EXT`: that code may keep it anywhere. Parameters of the encoded function, globals, static
//!   and volatile locals, and constant non-null addresses are in `EXT`.
//! - So a pointer to an object outside `EXT` can exist only in places whose content class is
//!   that object's class, and a dereference of a value in class `C` reaches objects of `C`
//!   only. Objects of a class other than `EXT` are created by the encoding's own activations
//!   (address-taken locals, the blocks their allocator calls return) or are string literals;
//!   no code outside the analysed functions can name them, so a call writes them only if the
//!   analysed code of the callee writes through a pointer of their class or allocates one
//!   ([`PointsTo::call_writes`]: a new block's bytes are any; the encoding gives the region a
//!   fresh memory at the allocator's call). An indirect call, or unknown code calling back
//!   into the program, passes only arguments that joined `EXT`, and the callee finds no other
//!   pointer into a region (globals and statics are `EXT`): it writes only the shared memory.
//! - Anything the front end did not lower exactly (an unsupported expression or statement,
//!   inline assembly, `va_arg`, ...) may hide an address or a copy: the analysis then gives up
//!   and every object stays in the shared memory (`active` is false). So it does when the
//!   functions to analyse are too many.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::regions;
use crate::cfg::callgraph::close_over_calls;
use crate::ir::*;
use crate::libc::{self, PointerEffects};

/// The class of everything outside the encoding's activations.
const EXT: u32 = 0;
/// Functions up to this many direct calls below the encoded one are analysed: all those the
/// encoding may inline (two levels, `encode`), and their callees. Calls of functions below
/// are unknown code to the analysis (their arguments join `EXT`).
const ANALYSED_DEPTH: usize = 3;
/// The levels below the inlined ones are analysed while the functions analysed hold at most
/// this many statements; the inlined levels alone above it, and none above twice that.
const MAX_ANALYSED_STMTS: usize = 20_000;
/// Levels the encoding may inline: these must be analysed.
const INLINED_DEPTH: usize = 2;

/// What the analysis needs to know of the whole program, computed once per program.
pub struct ProgramPointers {
    /// Functions holding something not lowered exactly that may hide a pointer.
    hiding: BTreeSet<String>,
    /// String literals that are `printf` formats with a `%n` conversion, by index.
    writing_formats: BTreeSet<u32>,
    /// Names that are not the library's here: the program's functions (lowered or skipped).
    not_library: BTreeSet<String>,
    /// String literals that global initialisers mention: stored in globals, they are outside.
    /// (Initialisers can name no local, and store nothing else a region could hold; a table
    /// of many thousands of elements is walked once here, not once per encoding.)
    initialiser_strings: BTreeSet<u32>,
}

impl ProgramPointers {
    pub fn new(prog: &Program) -> ProgramPointers {
        let mut hiding: BTreeSet<String> = prog
            .diagnostics
            .iter()
            .filter(|d| !matches!(d.kind, DiagnosticKind::Fallback(k) if harmless(k)))
            .filter_map(|d| d.function.clone())
            .collect();
        hiding.extend(
            prog.functions
                .iter()
                .filter(|f| hides_pointers(f))
                .map(|f| f.name.clone()),
        );
        let mut initialiser_strings = BTreeSet::new();
        for s in prog.globals.iter().flat_map(|g| &g.init) {
            visit::stmt(s, &mut |item| {
                if let visit::Item::Expr(Expr {
                    kind: ExprKind::Str(i),
                    ..
                }) = item
                {
                    initialiser_strings.insert(*i);
                }
            });
        }
        ProgramPointers {
            initialiser_strings,
            hiding,
            writing_formats: (0..prog.strings.len() as u32)
                .filter(|&i| libc::format_writes(&prog.strings[i as usize]))
                .collect(),
            not_library: prog
                .functions
                .iter()
                .map(|f| f.name.clone())
                .chain(prog.skipped.iter().map(|s| s.name.clone()))
                .collect(),
        }
    }

    /// Is `name` the library's here: no function of the program (lowered or skipped) has it?
    pub fn is_library(&self, name: &str) -> bool {
        !self.not_library.contains(name)
    }
}

/// What a call may write: memory outside the encoding's objects (the shared memory), and
/// some regions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Writes {
    pub external: bool,
    pub regions: BTreeSet<u32>,
}

impl Writes {
    fn add(&mut self, other: &Writes) {
        self.external |= other.external;
        self.regions.extend(other.regions.iter().copied());
    }

    /// Records a write into class `c` (of the shared memory when it is `EXT`).
    fn class(&mut self, c: u32) {
        if c == EXT {
            self.external = true;
        } else {
            self.regions.insert(c);
        }
    }
}

/// The nodes of one analysed function: its locals from `base` on, and its returned values.
#[derive(Clone, Copy)]
struct Frame {
    base: u32,
    ret: u32,
}

/// The result of the analysis for one encoding.
pub struct PointsTo {
    active: bool,
    parent: Vec<u32>,
    content: Vec<Option<u32>>,
    frames: HashMap<String, Frame>,
    strings: BTreeMap<u32, u32>,
    /// What a call of each analysed function may write.
    writes: BTreeMap<String, Writes>,
    /// Functions called by a library name whose code is not the library's: the program's
    /// own, and those defined in other files of the project.
    not_library: BTreeSet<String>,
    /// String literals that are `printf` formats with a `%n` conversion, by index.
    writing_formats: BTreeSet<u32>,
    /// A planted fault ([`super::encode::EncodeConfig::escape_blind`]): arguments of unknown
    /// code do not escape.
    escape_blind: bool,
}

impl PointsTo {
    /// A result that separates nothing: every object in the shared memory.
    pub fn inactive() -> PointsTo {
        PointsTo {
            active: false,
            parent: vec![EXT],
            content: vec![Some(EXT)],
            frames: HashMap::new(),
            strings: BTreeMap::new(),
            writes: BTreeMap::new(),
            not_library: BTreeSet::new(),
            writing_formats: BTreeSet::new(),
            escape_blind: false,
        }
    }

    /// Analyses `root` and the functions it may call directly, transitively, down to
    /// [`ANALYSED_DEPTH`]. `elsewhere` names the functions defined in other files of the
    /// project; `escape_blind` plants a fault for the soundness harness (false in every run).
    pub fn of(
        prog: &Program,
        facts: &ProgramPointers,
        root: &Function,
        elsewhere: &BTreeSet<String>,
        escape_blind: bool,
    ) -> PointsTo {
        Self::over(prog, facts, root, elsewhere, escape_blind, None).0
    }

    /// The same analysis over what can run in an activation of `root` before one of its
    /// statements ends: the statements of `root` that `keep(block, index)` names (those that
    /// can reach it in `root`'s graph, itself included) and the whole code of the functions
    /// analysed with it. None when nothing is separated, or when an analysed function may
    /// call `root` (another activation of it would share its locals' nodes). Its
    /// [`PointsTo::call_writes`] bound what a call among those statements writes.
    pub fn before(
        prog: &Program,
        facts: &ProgramPointers,
        root: &Function,
        elsewhere: &BTreeSet<String>,
        keep: &dyn Fn(usize, usize) -> bool,
    ) -> Option<PointsTo> {
        let (p, reentered) = Self::over(prog, facts, root, elsewhere, false, Some(keep));
        (p.active && !reentered).then_some(p)
    }

    /// [`PointsTo::of`], or [`PointsTo::before`] with `keep`; and whether an analysed
    /// function may call `root`.
    fn over(
        prog: &Program,
        facts: &ProgramPointers,
        root: &Function,
        elsewhere: &BTreeSet<String>,
        escape_blind: bool,
        keep: Option<&dyn Fn(usize, usize) -> bool>,
    ) -> (PointsTo, bool) {
        let functions: HashMap<&str, &Function> = prog
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect();
        // The functions to analyse, level by level along direct calls.
        let mut order: Vec<&Function> = vec![root];
        let mut seen: BTreeSet<&str> = [root.name.as_str()].into();
        let mut level = vec![root];
        let mut stmts = size(root);
        for depth in 1..=ANALYSED_DEPTH {
            let mut next = Vec::new();
            for f in &level {
                for c in crate::cfg::callgraph::direct_callees(f) {
                    if let Some(g) = functions.get(c.as_str()) {
                        if seen.insert(g.name.as_str()) {
                            next.push(*g);
                        }
                    }
                }
            }
            let more: usize = next.iter().map(|f| size(f)).sum();
            let cap = if depth <= INLINED_DEPTH {
                2 * MAX_ANALYSED_STMTS
            } else {
                MAX_ANALYSED_STMTS
            };
            if stmts + more > cap {
                if depth <= INLINED_DEPTH {
                    return (PointsTo::inactive(), false);
                }
                break;
            }
            stmts += more;
            order.extend(next.iter().copied());
            level = next;
        }
        if order.iter().any(|f| facts.hiding.contains(&f.name)) {
            return (PointsTo::inactive(), false);
        }
        let mut p = PointsTo::inactive();
        p.active = true;
        p.escape_blind = escape_blind;
        p.not_library = facts.not_library.clone();
        p.not_library.extend(elsewhere.iter().cloned());
        p.writing_formats = facts.writing_formats.clone();
        for f in &order {
            let base = p.parent.len() as u32;
            for _ in &f.locals {
                p.node();
            }
            let ret = p.node();
            p.frames.insert(f.name.clone(), Frame { base, ret });
        }
        for (i, l) in root.locals.iter().enumerate() {
            if l.is_param {
                let c = p.content_of(p.frames[&root.name].base + i as u32, true);
                p.join(c, EXT);
            }
        }
        for f in &order {
            let fr = p.frames[&f.name];
            for (i, l) in f.locals.iter().enumerate() {
                if l.is_static || l.volatile {
                    p.join(fr.base + i as u32, EXT);
                }
            }
        }
        // Initialisers write globals (`EXT`): what they point to is outside too.
        for &i in &facts.initialiser_strings {
            let c = p.string(i, true);
            p.join(c, EXT);
        }
        for f in &order {
            let fr = p.frames[&f.name];
            let filter = keep.filter(|_| std::ptr::eq(*f, root));
            for (k, b) in f.blocks.iter().enumerate() {
                for (i, s) in b.stmts.iter().enumerate() {
                    if filter.is_none_or(|keep| keep(k, i)) {
                        p.stmt(fr, s, &functions);
                    }
                }
                if filter.is_some() {
                    // The root's returns come after any of its statements.
                    continue;
                }
                if let Terminator::Return(Some(e)) = &b.term {
                    if let Some(v) = p.val(fr, e, true) {
                        p.join(fr.ret, v);
                    }
                }
            }
        }
        let reentered = order
            .iter()
            .any(|f| crate::cfg::callgraph::direct_callees(f).contains(&root.name));
        p.writes = p.function_writes(&order);
        (p, reentered)
    }

    /// May the encoding inline `function`? Only if its code was analysed (or nothing is
    /// separated).
    pub fn may_inline(&self, function: &str) -> bool {
        !self.active || self.frames.contains_key(function)
    }

    /// The region of local `l` of `function`, if not the shared memory.
    pub fn region_of_local(&self, function: &str, l: LocalId) -> Option<u32> {
        let fr = self.frames.get(function)?;
        self.region(fr.base + l.0)
    }

    /// The region of string literal `i`, if not the shared memory.
    pub fn region_of_string(&self, i: u32) -> Option<u32> {
        self.region(*self.strings.get(&i)?)
    }

    /// The region the value of `e` (in `function`) points into, if not the shared memory.
    pub fn region_of_pointer(&mut self, function: &str, e: &Expr) -> Option<u32> {
        let fr = *self.frames.get(function)?;
        let c = self.val(fr, e, false).unwrap_or(EXT);
        self.region(c)
    }

    /// The region of the block a call of `name` in `function` makes and stores into `dst`
    /// (`malloc`, `calloc`), if not the shared memory.
    pub fn allocated_region(&mut self, function: &str, name: &str, dst: &LValue) -> Option<u32> {
        let fr = *self.frames.get(function).filter(|_| self.allocates(name))?;
        let block = self.pointed_by(fr, dst);
        self.region(block)
    }

    /// The class of the objects the value held in `dst` points into (`EXT` if none was
    /// recorded).
    fn pointed_by(&mut self, fr: Frame, dst: &LValue) -> u32 {
        let at = self.loc(fr, dst, false);
        self.content_of(at, false)
    }

    /// What the call `callee(args)` in `function` may write.
    pub fn call_writes(&mut self, function: &str, callee: &Callee, args: &[Expr]) -> Writes {
        let Some(&fr) = self.frames.get(function).filter(|_| self.active) else {
            return Writes {
                external: true,
                regions: BTreeSet::new(),
            };
        };
        let mut w = match callee {
            Callee::Direct(n) => match self.writes.get(n) {
                Some(w) => w.clone(),
                None => self.outside_call_writes(fr, n, args),
            },
            // The callee gets arguments that joined `EXT`, and no other pointer to a region.
            Callee::Indirect(_) => Writes {
                external: true,
                regions: BTreeSet::new(),
            },
        };
        w.regions = w.regions.iter().map(|&r| self.find(r)).collect();
        w.regions.remove(&EXT);
        w
    }

    fn region(&self, node: u32) -> Option<u32> {
        let c = self.find(node);
        (self.active && c != EXT).then_some(c)
    }

    // ----- union-find ---------------------------------------------------------------------

    fn node(&mut self) -> u32 {
        let n = self.parent.len() as u32;
        self.parent.push(n);
        self.content.push(None);
        n
    }

    fn find(&self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            x = self.parent[x as usize];
        }
        x
    }

    /// The class the values stored in class `x` point into; with `create`, a new one if none
    /// is known yet (without, `EXT`: nothing was recorded, so nothing is separated).
    fn content_of(&mut self, x: u32, create: bool) -> u32 {
        let r = self.find(x);
        match self.content[r as usize] {
            Some(c) => self.find(c),
            None if create => {
                let c = self.node();
                self.content[r as usize] = Some(c);
                c
            }
            None => EXT,
        }
    }

    /// Unifies two classes, and their contents, recursively. The smaller index becomes the
    /// representative, so `EXT` stays `EXT` and the result does not depend on hashing.
    fn join(&mut self, a: u32, b: u32) {
        let mut work = vec![(a, b)];
        while let Some((a, b)) = work.pop() {
            let (ra, rb) = (self.find(a), self.find(b));
            if ra == rb {
                continue;
            }
            let (keep, gone) = (ra.min(rb), ra.max(rb));
            self.parent[gone as usize] = keep;
            match (self.content[keep as usize], self.content[gone as usize]) {
                (Some(x), Some(y)) => work.push((x, y)),
                (None, Some(y)) => self.content[keep as usize] = Some(y),
                _ => {}
            }
        }
    }

    /// The class of a value made of two: their join. Queries after the analysis (`create`
    /// false) join nothing: two classes the analysis did not join give `EXT`.
    fn join_opt(&mut self, a: Option<u32>, b: Option<u32>, create: bool) -> Option<u32> {
        match (a, b) {
            (Some(x), Some(y)) if create => {
                self.join(x, y);
                Some(self.find(x))
            }
            (Some(x), Some(y)) if self.find(x) == self.find(y) => Some(self.find(x)),
            (Some(_), Some(_)) => Some(EXT),
            (x, None) => x,
            (None, y) => y,
        }
    }

    // ----- values and places --------------------------------------------------------------

    /// The class the value of `e` may point into (`None`: no object, e.g. an integer made of
    /// constants).
    fn val(&mut self, fr: Frame, e: &Expr, create: bool) -> Option<u32> {
        match &e.kind {
            // A constant address other than null designates nothing the encoding creates.
            ExprKind::Const(v) => (*v != 0 && e.ty.is_pointer()).then_some(EXT),
            ExprKind::FloatConst(_) | ExprKind::FuncAddr(_) => None,
            ExprKind::Str(i) => Some(self.string(*i, create)),
            ExprKind::Read(lv) => {
                let at = self.loc(fr, lv, create);
                Some(self.content_of(at, create))
            }
            ExprKind::AddrOf(lv) => Some(self.loc(fr, lv, create)),
            ExprKind::Unary(UnOp::LogNot, _) => None,
            ExprKind::Unary(_, a) => self.val(fr, a, create),
            ExprKind::Binary(op, a, b) => match op {
                _ if op.is_comparison() => None,
                BinOp::LogAnd | BinOp::LogOr | BinOp::PtrDiff => None,
                BinOp::PtrAdd => self.val(fr, a, create),
                _ => {
                    let x = self.val(fr, a, create);
                    let y = self.val(fr, b, create);
                    self.join_opt(x, y, create)
                }
            },
            ExprKind::Cast(a) => {
                let v = self.val(fr, a, create);
                // An integer made a pointer: outside, unless it carries a known pointer.
                let made_pointer =
                    e.ty.is_pointer() && !a.ty.is_pointer() && a.as_const() != Some(0);
                if made_pointer {
                    Some(v.unwrap_or(EXT))
                } else {
                    v
                }
            }
            ExprKind::Cond(_, a, b) => {
                let x = self.val(fr, a, create);
                let y = self.val(fr, b, create);
                self.join_opt(x, y, create)
            }
            ExprKind::Fresh(_) => Some(EXT),
        }
    }

    /// The class of the objects a place may be in.
    fn loc(&mut self, fr: Frame, lv: &LValue, create: bool) -> u32 {
        match lv {
            LValue::Var(VarRef::Local(l)) => fr.base + l.0,
            LValue::Var(VarRef::Global(_)) => EXT,
            LValue::Deref(e) => self.val(fr, e, create).unwrap_or(EXT),
            LValue::Field(b, _, _) | LValue::Index(b, _) => {
                if let LValue::Index(_, i) = lv {
                    self.val(fr, i, create);
                }
                self.loc(fr, b, create)
            }
        }
    }

    fn string(&mut self, i: u32, create: bool) -> u32 {
        match self.strings.get(&i) {
            Some(&n) => n,
            None if create => {
                let n = self.node();
                self.strings.insert(i, n);
                n
            }
            None => EXT,
        }
    }

    /// Stores a value of class `v` into the objects of class `at`.
    fn store(&mut self, at: u32, v: Option<u32>) {
        if let Some(v) = v {
            let c = self.content_of(at, true);
            self.join(c, v);
        }
    }

    fn stmt(&mut self, fr: Frame, s: &Stmt, functions: &HashMap<&str, &Function>) {
        match &s.kind {
            StmtKind::Assign { dst, src } => {
                let at = self.loc(fr, dst, true);
                let v = self.val(fr, src, true);
                self.store(at, v);
            }
            StmtKind::Havoc { dst, reason } => {
                let at = self.loc(fr, dst, true);
                if reason.is_some() {
                    self.store(at, Some(EXT));
                }
            }
            StmtKind::ZeroInit { dst } => {
                self.loc(fr, dst, true);
            }
            StmtKind::Assume(e) | StmtKind::Label { pred: e, .. } => {
                self.val(fr, e, true);
            }
            StmtKind::Call { dst, callee, args } => {
                let vals: Vec<Option<u32>> = args.iter().map(|a| self.val(fr, a, true)).collect();
                let result = match callee {
                    Callee::Direct(n) => match (
                        self.frames.get(n.as_str()).copied(),
                        functions.get(n.as_str()),
                    ) {
                        (Some(to), Some(g)) => {
                            for (k, pid) in g.params.iter().enumerate() {
                                let param = to.base + pid.0;
                                self.store(param, vals.get(k).copied().flatten());
                            }
                            Some(to.ret)
                        }
                        _ => self.library_call(n, args, &vals),
                    },
                    Callee::Indirect(e) => {
                        self.val(fr, e, true);
                        self.escape(&vals)
                    }
                };
                if let Some(d) = dst {
                    let at = self.loc(fr, d, true);
                    self.store(at, result);
                }
            }
            StmtKind::HavocMemory(_) | StmtKind::Sequence(_) => {}
        }
    }

    /// Arguments given to code that may keep them: everything they reach is outside.
    fn escape(&mut self, vals: &[Option<u32>]) -> Option<u32> {
        if self.escape_blind {
            return Some(EXT);
        }
        for v in vals.iter().flatten() {
            self.join(*v, EXT);
        }
        Some(EXT)
    }

    /// A call of a function the analysis does not see: its pointer behaviour from the library
    /// table, or unknown code that may keep its arguments.
    fn library_call(&mut self, name: &str, args: &[Expr], vals: &[Option<u32>]) -> Option<u32> {
        let Some(fx) = self.library(name) else {
            return self.escape(vals);
        };
        let arg = |k: usize| vals.get(k).copied().flatten();
        if let Some((to, from)) = fx.copies {
            let (to, from) = (arg(to).unwrap_or(EXT), arg(from).unwrap_or(EXT));
            let bytes = self.content_of(from, true);
            self.store(to, Some(bytes));
        }
        if let Some((pointer, into)) = fx.stores_pointer {
            let into = arg(into).unwrap_or(EXT);
            self.store(into, arg(pointer));
        }
        if fx.external_bytes {
            for k in self.written_args(&fx, args) {
                let at = arg(k).unwrap_or(EXT);
                self.store(at, Some(EXT));
            }
        }
        if fx.returns_external {
            // A block `malloc` or `calloc` makes is a new object, created by this activation:
            // its own class, outside only once a pointer to it escapes.
            Some(if self.allocates(name) {
                self.node()
            } else {
                EXT
            })
        } else {
            fx.returns_arg.and_then(arg)
        }
    }

    /// What a call of a function the analysis does not see writes.
    fn outside_call_writes(&mut self, fr: Frame, name: &str, args: &[Expr]) -> Writes {
        let mut w = Writes::default();
        let Some(fx) = self.library(name) else {
            w.external = true;
            return w;
        };
        w.external = fx.writes_external;
        for k in self.written_args(&fx, args) {
            let c = args
                .get(k)
                .and_then(|a| self.val(fr, a, false))
                .unwrap_or(EXT);
            w.class(self.find(c));
        }
        w
    }

    /// Is a call of `name` the library's `malloc` or `calloc`, whose result is a new block?
    fn allocates(&self, name: &str) -> bool {
        let block = matches!(
            libc::allocator(name),
            Some(libc::Allocator::Malloc | libc::Allocator::Calloc)
        );
        block && self.library(name).is_some()
    }

    /// The library behaviour of a call of `name`, unless that name is not the library's here.
    fn library(&self, name: &str) -> Option<PointerEffects> {
        if self.not_library.contains(name) {
            return None;
        }
        libc::pointer_effects(name)
    }

    /// The arguments a library function may write, given the call's arguments.
    fn written_args(&self, fx: &PointerEffects, args: &[Expr]) -> Vec<usize> {
        let mut out: Vec<usize> = fx.writes_args.to_vec();
        if let Some(from) = fx.writes_rest_from {
            out.extend(from..args.len());
        }
        if let Some(k) = fx.format_arg {
            let harmless_format = match args.get(k).map(|a| &a.strip_casts().kind) {
                Some(ExprKind::Str(i)) => !self.writing_formats.contains(i),
                _ => false,
            };
            if !harmless_format {
                out.extend(k + 1..args.len());
            }
        }
        out.retain(|&k| k < args.len());
        out
    }

    /// What a call of each analysed function may write, its callees' writes included.
    fn function_writes(&mut self, order: &[&Function]) -> BTreeMap<String, Writes> {
        let mut own = BTreeMap::new();
        for f in order {
            let fr = self.frames[&f.name];
            let mut w = Writes::default();
            let mut callees = BTreeSet::new();
            for s in f.blocks.iter().flat_map(|b| &b.stmts) {
                let dst = match &s.kind {
                    StmtKind::Assign { dst, .. }
                    | StmtKind::Havoc { dst, .. }
                    | StmtKind::ZeroInit { dst } => Some(dst),
                    StmtKind::Call { dst, callee, args } => {
                        match callee {
                            Callee::Direct(n) if self.frames.contains_key(n.as_str()) => {
                                callees.insert(n.clone());
                            }
                            Callee::Direct(n) => {
                                w.add(&self.outside_call_writes(fr, n, args));
                                // A new block's bytes are any: its class is written.
                                if let Some(d) = dst.as_ref().filter(|_| self.allocates(n)) {
                                    let block = self.pointed_by(fr, d);
                                    w.class(self.find(block));
                                }
                            }
                            Callee::Indirect(_) => w.external = true,
                        }
                        dst.as_ref()
                    }
                    // Never met: it makes the analysis give up.
                    StmtKind::HavocMemory(_) => {
                        w.external = true;
                        None
                    }
                    StmtKind::Assume(_) | StmtKind::Label { .. } | StmtKind::Sequence(_) => None,
                };
                // A write to the callee's own non-static locals by name dies with its
                // activation; the caller cannot see it.
                match dst {
                    Some(d) if regions::named_local(d).is_some_and(|l| !f.local(l).is_static) => {}
                    Some(d) => {
                        let c = self.loc(fr, d, false);
                        w.class(self.find(c));
                    }
                    None => {}
                }
            }
            own.insert(f.name.clone(), (w, callees));
        }
        close_over_calls(own, Writes::add, |_| None)
    }
}

/// Kinds of unexact lowering that cannot hide a pointer: floating point, label predicates,
/// initialisers of globals.
fn harmless(k: FallbackKind) -> bool {
    matches!(
        k,
        FallbackKind::Float | FallbackKind::ImpurePredicate | FallbackKind::NonConstInit
    )
}

fn size(f: &Function) -> usize {
    f.blocks.iter().map(|b| b.stmts.len() + 1).sum()
}

/// Does function `f` hold something the front end did not lower exactly that could hide an
/// address or a pointer copy?
fn hides_pointers(f: &Function) -> bool {
    let mut hides = false;
    visit::function(f, &mut |item| {
        if let visit::Item::Expr(Expr {
            kind: ExprKind::Fresh(k),
            ..
        }) = item
        {
            hides |= !harmless(*k);
        }
    });
    hides
        || f.blocks
            .iter()
            .flat_map(|b| &b.stmts)
            .any(|s| match &s.kind {
                StmtKind::Havoc {
                    reason: Some(k), ..
                } => !harmless(*k),
                StmtKind::HavocMemory(_) => true,
                _ => false,
            })
}
