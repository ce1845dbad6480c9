//! Functions of one translation unit carried into another unit's program (`project`): a
//! unit's small exported functions with everything they call in it ([`Bundle`]), merged into
//! a unit that calls them, so that its calls are encoded in place or summarised as calls of
//! its own functions are, instead of "may write anything, return anything".
//!
//! Soundness (what a merged program may assume is what a linked program does):
//! - A merged function is the body its own unit lowered, with the records, strings and
//!   diagnostics it had there (diagnostics say which bodies may hide pointers). Its labels are
//!   dropped: they belong to their own unit's ledger.
//! - Objects. A global of external linkage is one object in the linked program: a merged
//!   reference to it names the unit's global of that name (or a new declaration of it). A
//!   `static` global of the other unit is an object of its own, renamed `name@unit`; the
//!   other unit's code that is not merged may take its address or write it, so it is merged
//!   as a declaration of external linkage without initialiser: unknown code may reach it, and
//!   nothing is assumed of its value. Should the unit have a `static` global of the name of a
//!   merged global of external linkage, the bundle is not merged at all.
//! - Functions. Merged functions get external linkage: callers outside the program exist, so
//!   nothing is decided from "all callers known". A call or function address in merged code
//!   names what the linker would bind: a merged function of its unit (`name@unit` for a
//!   `static` one); the unit's own function of that name when it has external linkage and the
//!   project defines the name once; else a name nothing defines (unknown code, which may
//!   write anything). A root whose body calls, or takes the address of, a function its unit
//!   could not lower is not bundled.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::*;

/// The most blocks a root and everything it calls in its unit may hold to be bundled.
pub const MAX_BUNDLE_BLOCKS: usize = 400;

/// A unit's functions that other units may merge (see the module's documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bundle {
    /// The unit's source file: names its `static` objects in other units' programs.
    pub unit: String,
    pub files: Vec<String>,
    pub records: Vec<Record>,
    /// The unit's globals, by their ids there, without initialisers (merged globals are
    /// declarations).
    pub globals: Vec<Global>,
    pub strings: Vec<Vec<u8>>,
    pub externals: Vec<ExternalDecl>,
    /// The roots and every function they call in the unit, without labels.
    pub functions: Vec<Function>,
    /// The diagnostics of those functions.
    pub diagnostics: Vec<Diagnostic>,
    /// The functions of external linkage other units may merge (with what they call).
    pub roots: BTreeSet<String>,
    /// Names of the unit's `static` functions, lowered or not.
    pub statics: BTreeSet<String>,
}

/// Function names an expression, statement or body refers to: direct calls and addresses.
fn referenced_functions(f: &Function) -> BTreeSet<String> {
    let mut names = super::direct_callees(f);
    visit::function(f, &mut |item| {
        if let visit::Item::Expr(Expr {
            kind: ExprKind::FuncAddr(n),
            ..
        }) = item
        {
            names.insert(n.clone());
        }
    });
    names
}

impl Bundle {
    /// The name a static `n` of the bundle takes where it is merged: `n@UNIT`.
    fn unit_name(&self, n: &str) -> String {
        format!("{n}@{}", self.unit)
    }

    /// The bundle of `program` (the unit `unit`): its functions of external linkage (but
    /// `main`) that `small` accepts, each with what it calls in the unit when that is at most
    /// [`MAX_BUNDLE_BLOCKS`] blocks and lowered.
    pub fn of_unit(program: &Program, unit: &str, small: impl Fn(&Function) -> bool) -> Bundle {
        let by_name = index_by_name(&program.functions);
        let skipped: BTreeSet<&str> = program.skipped.iter().map(|s| s.name.as_str()).collect();
        let mut kept = BTreeSet::new();
        let mut roots = BTreeSet::new();
        for f in &program.functions {
            if f.linkage != Linkage::External || f.name == "main" || !small(f) {
                continue;
            }
            let reached = reach(&program.functions, &by_name, [f.name.clone()]);
            let blocks: usize = reached
                .iter()
                .map(|&i| program.functions[i].blocks.len())
                .sum();
            // A callee both lowered and skipped is named by its caller's references.
            let lowered = !skipped.contains(f.name.as_str())
                && reached.iter().all(|&i| {
                    referenced_functions(&program.functions[i])
                        .iter()
                        .all(|r| !skipped.contains(r.as_str()))
                });
            if lowered && blocks <= MAX_BUNDLE_BLOCKS {
                roots.insert(f.name.clone());
                kept.extend(reached);
            }
        }
        let functions: Vec<Function> = kept
            .iter()
            .map(|&i| without_labels(&program.functions[i]))
            .collect();
        let names: BTreeSet<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        Bundle {
            unit: unit.to_string(),
            files: program.files.clone(),
            records: program.records.clone(),
            globals: program
                .globals
                .iter()
                .map(|g| Global {
                    init: Vec::new(),
                    ..g.clone()
                })
                .collect(),
            strings: program.strings.clone(),
            externals: program.externals.clone(),
            diagnostics: diagnostics_of(&program.diagnostics, &names),
            functions,
            roots,
            statics: program
                .functions
                .iter()
                .filter(|f| f.linkage == Linkage::Internal)
                .map(|f| f.name.clone())
                .chain(program.skipped.iter().map(|s| s.name.clone()))
                .collect(),
        }
    }

    /// The bundled functions `wanted` reaches through direct calls (roots only), in the
    /// bundle's order.
    fn closure(&self, wanted: &BTreeSet<String>) -> Vec<usize> {
        let roots = wanted.iter().filter(|n| self.roots.contains(*n)).cloned();
        reach(&self.functions, &index_by_name(&self.functions), roots)
            .into_iter()
            .collect()
    }

    /// The part of the bundle that `wanted` (names of roots) needs.
    pub fn restricted_to(&self, wanted: &BTreeSet<String>) -> Bundle {
        let keep = self.closure(wanted);
        let functions: Vec<Function> = keep.iter().map(|&i| self.functions[i].clone()).collect();
        let names: BTreeSet<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        Bundle {
            diagnostics: diagnostics_of(&self.diagnostics, &names),
            roots: self
                .roots
                .iter()
                .filter(|r| wanted.contains(*r) && names.contains(r.as_str()))
                .cloned()
                .collect(),
            functions,
            ..self.clone()
        }
    }

    /// The names bundled functions call outside their unit's bundled functions.
    pub fn calls_outside(&self) -> BTreeSet<String> {
        let names: BTreeSet<&str> = self.functions.iter().map(|f| f.name.as_str()).collect();
        self.functions
            .iter()
            .flat_map(super::direct_callees)
            .filter(|n| !names.contains(n.as_str()) && !self.statics.contains(n))
            .collect()
    }
}

/// The indices of the functions of `functions` (indexed by `by_name`) that `roots` reach
/// through direct calls, the roots included; calls of functions not there are not followed.
fn reach(
    functions: &[Function],
    by_name: &BTreeMap<&str, usize>,
    roots: impl IntoIterator<Item = String>,
) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = roots.into_iter().collect();
    while let Some(n) = todo.pop() {
        if let Some(&i) = by_name.get(n.as_str()) {
            if seen.insert(i) {
                todo.extend(super::direct_callees(&functions[i]));
            }
        }
    }
    seen
}

/// The diagnostics of the functions named in `names`.
fn diagnostics_of(diagnostics: &[Diagnostic], names: &BTreeSet<&str>) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.function.as_deref().is_some_and(|n| names.contains(n)))
        .cloned()
        .collect()
}

fn without_labels(f: &Function) -> Function {
    let mut f = f.clone();
    for b in &mut f.blocks {
        b.stmts
            .retain(|s| !matches!(s.kind, StmtKind::Label { .. }));
    }
    f
}

/// What a unit's program merges from the other units of its project.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Imports {
    /// Each restricted to the roots the unit calls ([`Bundle::restricted_to`]), in the
    /// project's order of files.
    pub bundles: Vec<Bundle>,
    /// Functions the project defines more than once.
    pub ambiguous: BTreeSet<String>,
}

impl Imports {
    pub fn is_empty(&self) -> bool {
        self.bundles.is_empty()
    }

    /// Merges every bundle into `program`; returns the bundles refused, with why.
    pub fn merge_into(&self, program: &mut Program) -> Vec<(String, Refused)> {
        self.bundles
            .iter()
            .filter_map(|b| {
                merge(program, b, &b.roots, &self.ambiguous)
                    .err()
                    .map(|e| (b.unit.clone(), e))
            })
            .collect()
    }
}

/// Why a bundle was not merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The program has a `static` global of the name of a merged global of external linkage.
    GlobalNameClash(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::GlobalNameClash(name) => write!(
                f,
                "`{name}` is a global of external linkage there and a `static` here"
            ),
        }
    }
}

/// The names the function references of `merged` bind to: a static of the bundle to its
/// name in its unit, a merged function to itself, a name that may bind to a function of
/// another file (defined twice, skipped here, static here) to none (`f@?`), any other to
/// itself; and each merged static to its name in its unit.
fn bound_names(
    merged: &[&Function],
    bundle: &Bundle,
    defined_here: &BTreeMap<&str, Linkage>,
    skipped_here: &BTreeSet<&str>,
    ambiguous: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    let unit_name = |n: &str| bundle.unit_name(n);
    let merged_names: BTreeSet<&str> = merged.iter().map(|f| f.name.as_str()).collect();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for f in merged {
        for n in referenced_functions(f) {
            let to = if bundle.statics.contains(&n) {
                unit_name(&n)
            } else if merged_names.contains(n.as_str()) {
                n.clone()
            } else if ambiguous.contains(&n)
                || skipped_here.contains(n.as_str())
                || defined_here.get(n.as_str()) == Some(&Linkage::Internal)
            {
                format!("{n}@?")
            } else {
                n.clone()
            };
            names.insert(n, to);
        }
        if f.linkage == Linkage::Internal {
            names.insert(f.name.clone(), unit_name(&f.name));
        }
    }
    names
}

/// The globals and strings `merged` names.
fn objects_named(merged: &[&Function]) -> (BTreeSet<u32>, BTreeSet<u32>) {
    let mut globals_used = BTreeSet::new();
    let mut strings_used = BTreeSet::new();
    for f in merged {
        visit::function(f, &mut |item| match item {
            visit::Item::Expr(Expr {
                kind: ExprKind::Str(i),
                ..
            }) => {
                strings_used.insert(*i);
            }
            visit::Item::Place {
                place: LValue::Var(VarRef::Global(g)),
                ..
            } => {
                globals_used.insert(g.0);
            }
            _ => {}
        });
    }
    (globals_used, strings_used)
}

/// Merges into `program` the functions of `bundle` that `wanted` reaches (see the module's
/// documentation); `ambiguous` names functions the project defines more than once (which one
/// a call binds depends on the link). Nothing is merged when the bundle is refused.
pub fn merge(
    program: &mut Program,
    bundle: &Bundle,
    wanted: &BTreeSet<String>,
    ambiguous: &BTreeSet<String>,
) -> Result<(), Refused> {
    let keep = bundle.closure(wanted);
    let defined_here: BTreeMap<&str, Linkage> = program
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.linkage))
        .collect();
    let skipped_here: BTreeSet<&str> = program.skipped.iter().map(|s| s.name.as_str()).collect();
    let unit_name = |n: &str| bundle.unit_name(n);
    // The functions merged, by their names in the bundle; a root the program defines itself
    // is not merged (its calls bind to the program's own).
    let merged: Vec<&Function> = keep
        .iter()
        .map(|&i| &bundle.functions[i])
        .filter(|f| f.linkage == Linkage::Internal || !defined_here.contains_key(f.name.as_str()))
        .collect();
    let merged_names: BTreeSet<&str> = merged.iter().map(|f| f.name.as_str()).collect();
    // Function references of merged code, to the names they bind to.
    let names = bound_names(&merged, bundle, &defined_here, &skipped_here, ambiguous);
    // Globals and strings merged code names.
    let (globals_used, strings_used) = objects_named(&merged);
    let globals_by_name: BTreeMap<String, (usize, Linkage)> = program
        .globals
        .iter()
        .enumerate()
        .map(|(i, g)| (g.name.clone(), (i, g.linkage)))
        .collect();
    for &g in &globals_used {
        let gl = &bundle.globals[g as usize];
        if gl.linkage == Linkage::External {
            if let Some((_, Linkage::Internal)) = globals_by_name.get(gl.name.as_str()) {
                return Err(Refused::GlobalNameClash(gl.name.clone()));
            }
        }
    }
    let mut remap = Remap {
        files: program.files.len() as u32,
        records: program.records.len() as u32,
        globals: BTreeMap::new(),
        strings: BTreeMap::new(),
        names,
    };
    let globals_before = program.globals.len();
    for &g in &globals_used {
        let gl = &bundle.globals[g as usize];
        let existing = match gl.linkage {
            Linkage::External => globals_by_name.get(gl.name.as_str()).map(|(i, _)| *i),
            Linkage::Internal => None,
        };
        let id = match existing {
            Some(i) => i as u32,
            None => {
                let mut copy = gl.clone();
                if gl.linkage == Linkage::Internal {
                    copy.name = unit_name(&gl.name);
                }
                copy.linkage = Linkage::External;
                copy.is_extern_decl = true;
                copy.init.clear();
                program.globals.push(copy);
                (program.globals.len() - 1) as u32
            }
        };
        remap.globals.insert(g, GlobalId(id));
    }
    for &s in &strings_used {
        program.strings.push(bundle.strings[s as usize].clone());
        remap.strings.insert(s, (program.strings.len() - 1) as u32);
    }
    // Appended copies (after the globals, whose types hold record ids of the bundle).
    for g in program.globals.iter_mut().skip(globals_before) {
        remap.ty(&mut g.ty);
        remap.loc(&mut g.loc);
    }
    program.files.extend(bundle.files.iter().cloned());
    for r in &bundle.records {
        let mut r = r.clone();
        for field in &mut r.fields {
            remap.ty(&mut field.ty);
        }
        program.records.push(r);
    }
    let declared: BTreeSet<String> = program.externals.iter().map(|e| e.name.clone()).collect();
    let merged_final: BTreeSet<String> = merged
        .iter()
        .map(|f| remap.name(&f.name).to_string())
        .collect();
    for e in &bundle.externals {
        let to = remap.name(&e.name).to_string();
        if declared.contains(&to)
            || merged_final.contains(&to)
            || !remap.names.contains_key(&e.name)
        {
            continue;
        }
        let mut e = ExternalDecl {
            name: to,
            ty: e.ty.clone(),
        };
        remap.ty(&mut e.ty);
        program.externals.push(e);
    }
    program
        .externals
        .retain(|e| !merged_final.contains(&e.name));
    for d in &bundle.diagnostics {
        if d.function
            .as_deref()
            .is_some_and(|n| merged_names.contains(n))
        {
            let mut d = d.clone();
            d.function = d.function.map(|n| remap.name(&n).to_string());
            remap.loc(&mut d.loc);
            program.diagnostics.push(d);
        }
    }
    for f in merged {
        let mut f = f.clone();
        remap.function(&mut f);
        f.linkage = Linkage::External;
        program.imported.insert(f.name.clone());
        program.functions.push(f);
    }
    Ok(())
}

/// Ids and names of the bundle's unit, to those of the program it is merged into.
struct Remap {
    files: u32,
    records: u32,
    globals: BTreeMap<u32, GlobalId>,
    strings: BTreeMap<u32, u32>,
    names: BTreeMap<String, String>,
}

impl Remap {
    fn name<'n>(&'n self, n: &'n str) -> &'n str {
        self.names.get(n).map_or(n, String::as_str)
    }

    fn loc(&self, l: &mut Loc) {
        l.file = FileId(l.file.0 + self.files);
    }

    fn ty(&self, t: &mut CType) {
        match t {
            CType::Pointer(p) | CType::Array(p, _) => self.ty(p),
            CType::Function(f) => self.func_ty(f),
            CType::Record(r) => r.0 += self.records,
            CType::Void | CType::Int(_) | CType::Float(_) | CType::Unknown => {}
        }
    }

    fn func_ty(&self, f: &mut FuncType) {
        self.ty(&mut f.ret);
        for p in &mut f.params {
            self.ty(p);
        }
    }

    fn expr(&self, e: &mut Expr) {
        self.ty(&mut e.ty);
        match &mut e.kind {
            ExprKind::Str(i) => *i = self.strings[i],
            ExprKind::FuncAddr(n) => *n = self.name(n).to_string(),
            ExprKind::Read(lv) | ExprKind::AddrOf(lv) => self.lvalue(lv),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Cond(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Const(_) | ExprKind::FloatConst(_) | ExprKind::Fresh(_) => {}
        }
    }

    fn lvalue(&self, lv: &mut LValue) {
        match lv {
            LValue::Var(VarRef::Global(g)) => *g = self.globals[&g.0],
            LValue::Var(VarRef::Local(_)) => {}
            LValue::Deref(e) => self.expr(e),
            LValue::Field(b, r, _) => {
                r.0 += self.records;
                self.lvalue(b);
            }
            LValue::Index(b, i) => {
                self.lvalue(b);
                self.expr(i);
            }
        }
    }

    fn stmt(&self, s: &mut Stmt) {
        self.loc(&mut s.loc);
        match &mut s.kind {
            StmtKind::Assign { dst, src } => {
                self.lvalue(dst);
                self.expr(src);
            }
            StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => self.lvalue(dst),
            StmtKind::Assume(e) => self.expr(e),
            StmtKind::Label { pred, bindings, .. } => {
                self.expr(pred);
                for (_, e) in bindings {
                    self.expr(e);
                }
            }
            StmtKind::Call { dst, callee, args } => {
                if let Some(d) = dst {
                    self.lvalue(d);
                }
                match callee {
                    Callee::Direct(n) => *n = self.name(n).to_string(),
                    Callee::Indirect(e) => self.expr(e),
                }
                for a in args {
                    self.expr(a);
                }
            }
            StmtKind::HavocMemory(_) | StmtKind::Sequence(SequenceMark::Break { .. }) => {}
            StmtKind::Sequence(SequenceMark::Position { cond, .. }) => self.expr(cond),
        }
    }

    fn function(&self, f: &mut Function) {
        f.name = self.name(&f.name).to_string();
        self.func_ty(&mut f.ty);
        self.loc(&mut f.loc);
        for l in &mut f.locals {
            self.ty(&mut l.ty);
        }
        for b in &mut f.blocks {
            self.loc(&mut b.loc);
            for s in &mut b.stmts {
                self.stmt(s);
            }
            match &mut b.term {
                Terminator::Branch { cond: e, .. }
                | Terminator::Switch { scrutinee: e, .. }
                | Terminator::Return(Some(e)) => self.expr(e),
                Terminator::Goto(_)
                | Terminator::Return(None)
                | Terminator::NoReturn
                | Terminator::Unreachable => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program_of(src: &str, name: &str) -> Program {
        crate::frontend::load_text(src.as_bytes(), name, std::path::Path::new(name), 0)
            .expect("the fixture lowers")
            .program
    }

    fn bundle_of(src: &str) -> Bundle {
        Bundle::of_unit(&program_of(src, "b.c"), "b.c", |f| f.blocks.len() <= 40)
    }

    fn names(set: impl IntoIterator<Item = &'static str>) -> BTreeSet<String> {
        set.into_iter().map(str::to_string).collect()
    }

    const B: &str = "static int s; int g;
static int h(void) { return s; }
static int helper(int x) { return x; }
int peek(int x) { pc_label(x > 0, 7, \"CC\"); g = 2; s = 1; return h() + helper(x); }
int other(void) { return 0; }
";

    #[test]
    fn statics_of_the_other_unit_are_renamed_and_become_declarations() {
        let bundle = bundle_of(B);
        assert_eq!(bundle.roots, names(["other", "peek"]));
        let mut a = program_of(
            "static int s; extern int g; int peek(int); int a(void) { return peek(1) + s; }",
            "a.c",
        );
        let before = a.globals.len();
        merge(&mut a, &bundle, &names(["peek"]), &BTreeSet::new()).unwrap();
        let fns: Vec<&str> = a.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(fns, ["a", "h@b.c", "helper@b.c", "peek"]);
        assert_eq!(a.imported, names(["h@b.c", "helper@b.c", "peek"]));
        // `g` is the program's own; B's static `s` is a new declaration, distinct from A's `s`.
        assert_eq!(a.globals.len(), before + 1);
        let s = a.globals.last().unwrap();
        assert_eq!(
            (s.name.as_str(), s.linkage, s.is_extern_decl),
            ("s@b.c", Linkage::External, true)
        );
        let peek = a.function("peek").unwrap();
        assert_eq!(peek.linkage, Linkage::External);
        assert_eq!(peek.labels().count(), 0, "labels stay in their own unit");
        let callees = super::direct_callees(peek);
        assert_eq!(callees, names(["h@b.c", "helper@b.c"]));
        assert!(a.externals.iter().all(|e| e.name != "peek"));
    }

    #[test]
    fn calls_bind_as_the_linker_binds_them() {
        let bundle = bundle_of(
            "int shared(int); int twice(int);
int root(int x) { return shared(x) + twice(x); }",
        );
        // `shared` is the program's own static: the root's call cannot reach it; `twice` is
        // defined by two files of the project.
        let mut a = program_of(
            "static int shared(int x) { return x; } int root(int);
int a(int x) { return root(x) + shared(x); }",
            "a.c",
        );
        merge(&mut a, &bundle, &names(["root"]), &names(["twice"])).unwrap();
        let callees = super::direct_callees(a.function("root").unwrap());
        assert_eq!(callees, names(["shared@?", "twice@?"]));
    }

    #[test]
    fn a_static_named_like_a_merged_global_refuses_the_bundle() {
        let bundle = bundle_of("int g; int set(void) { g = 1; return 0; }");
        let mut a = program_of(
            "static int g; int set(void); int a(void) { return set(); }",
            "a.c",
        );
        let functions = a.functions.len();
        assert_eq!(
            merge(&mut a, &bundle, &names(["set"]), &BTreeSet::new()),
            Err(Refused::GlobalNameClash("g".to_string()))
        );
        assert_eq!(a.functions.len(), functions);
    }

    #[test]
    fn a_root_that_reaches_what_its_unit_could_not_lower_is_not_bundled() {
        let mut program = program_of(B, "b.c");
        program.skipped.push(SkippedFunction {
            name: "helper".to_string(),
            loc: Loc::default(),
            reason: "test".to_string(),
            mentions: BTreeSet::new(),
        });
        let bundle = Bundle::of_unit(&program, "b.c", |_| true);
        assert_eq!(bundle.roots, names(["other"]));
    }

    #[test]
    fn a_bundle_survives_its_journey_to_a_worker() {
        let bundle = bundle_of(B);
        let back: Bundle = serde_json::from_str(&serde_json::to_string(&bundle).unwrap()).unwrap();
        assert_eq!(back.functions, bundle.functions);
        assert_eq!(back.globals, bundle.globals);
    }
}
