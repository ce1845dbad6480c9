//! Memory regions: which objects of an encoding are reached by name only, so that each can live
//! in a memory of its own instead of the shared byte-addressed one, and which globals a call may
//! write.
//!
//! Soundness argument (claims hold for executions without undefined behaviour, DESIGN.md):
//! - An access through a pointer (`*p`, `p->f`, `p[i]`) can reach an object only if a pointer to
//!   it exists. Inside a program without undefined behaviour, a pointer to an object exists only
//!   if its address was taken (`&x`, or an array decaying to a pointer) somewhere that can see
//!   it, and accesses through a pointer to one object never reach another (C11 6.5.6p8).
//! - A local whose address is never taken is therefore reached by its name only, in its own
//!   activation. So is a global whose address is never taken in the program when nothing
//!   outside the program can name it: it has internal linkage, or the run starts at `main` of a
//!   program that defines it (`--entry main`).
//! - A global with external linkage, in the unit-testing view, may be pointed to by arguments
//!   built elsewhere (another file may take its address). It is reached by name only in an
//!   encoding whose code (the function and every function it may call directly) dereferences no
//!   pointer at all; calls that may write it are havocked by [`GlobalWrites`].
//! - Anything else (address-taken objects, string literals, what pointers reach, volatile
//!   objects) stays in the shared memory, where distinct objects have distinct symbolic bases.
//!
//! An object with a memory of its own is written only by statements naming it, and by calls
//! whose [`GlobalWrites`] include it (globals only: no callee can name a caller's local).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::cfg::callgraph::{close_over_calls, direct_callees};
use crate::ir::*;

/// The globals a call may write: some by name, or any (unknown code, indirect calls).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalWrites {
    All,
    Some(BTreeSet<GlobalId>),
}

impl GlobalWrites {
    pub fn none() -> GlobalWrites {
        GlobalWrites::Some(BTreeSet::new())
    }

    pub fn contains(&self, g: GlobalId) -> bool {
        match self {
            GlobalWrites::All => true,
            GlobalWrites::Some(s) => s.contains(&g),
        }
    }

    pub fn add(&mut self, other: &GlobalWrites) {
        match (&mut *self, other) {
            (GlobalWrites::All, _) => {}
            (_, GlobalWrites::All) => *self = GlobalWrites::All,
            (GlobalWrites::Some(a), GlobalWrites::Some(b)) => a.extend(b.iter().copied()),
        }
    }
}

/// The global a place is rooted at, when it is reached by name.
pub fn named_global(lv: &LValue) -> Option<GlobalId> {
    match lv {
        LValue::Var(VarRef::Global(g)) => Some(*g),
        LValue::Var(VarRef::Local(_)) | LValue::Deref(_) => None,
        LValue::Field(b, _, _) | LValue::Index(b, _) => named_global(b),
    }
}

/// The local a place is rooted at, when it is reached by name.
pub fn named_local(lv: &LValue) -> Option<LocalId> {
    match lv {
        LValue::Var(VarRef::Local(l)) => Some(*l),
        LValue::Var(VarRef::Global(_)) | LValue::Deref(_) => None,
        LValue::Field(b, _, _) | LValue::Index(b, _) => named_local(b),
    }
}

/// The program-wide facts the region rules need.
pub struct Regions {
    /// Globals whose address is taken somewhere (in a function or an initialiser).
    address_taken: HashSet<GlobalId>,
    /// Functions that dereference a pointer, themselves or through a direct callee.
    derefs: HashSet<String>,
    /// Static globals that hold their initialiser at every function entry ([`Regions::keeps_initialiser`]).
    unwritten_statics: HashSet<GlobalId>,
    /// Static integers and integer arrays whose every store is a constant ([`Regions::static_values`]).
    static_values: HashMap<GlobalId, StaticValues>,
}

/// The values a static integer (or every element of a static integer array) can hold at any
/// function entry: its initialiser's and those of every store of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticValues {
    pub kind: IntKind,
    /// The array's length (None: a scalar).
    pub elements: Option<u64>,
    pub values: BTreeSet<i128>,
}

/// At most this many values per static, and elements per array, are asserted.
const MAX_STATIC_VALUES: usize = 16;
const MAX_STATIC_ELEMENTS: u64 = 64;

/// Whether code the front end could not lower exactly as written may exist in the program (a
/// skipped function, an unsupported construct, inline assembly): it could write anything.
fn has_unlowered_code(prog: &Program) -> bool {
    !prog.skipped.is_empty()
        || prog.diagnostics.iter().any(|d| match d.kind {
            DiagnosticKind::Fallback(k) => !matches!(
                k,
                FallbackKind::Float
                    | FallbackKind::Builtin
                    | FallbackKind::VaArg
                    | FallbackKind::NonConstInit
                    | FallbackKind::ImpurePredicate
            ),
            DiagnosticKind::ParseError | DiagnosticKind::SkippedFunction => true,
        })
        || prog.functions.iter().any(|f| {
            f.blocks.iter().any(|b| {
                b.stmts
                    .iter()
                    .any(|s| matches!(s.kind, StmtKind::HavocMemory(_)))
            })
        })
}

/// The statics no other file can reach: internal linkage (so no other file names them; a test
/// that includes the file is the `--open-statics` view, where statics are external), address
/// never taken, not volatile.
fn closed_static(g: GlobalId, gl: &Global, address_taken: &HashSet<GlobalId>) -> bool {
    gl.linkage == Linkage::Internal
        && !gl.is_extern_decl
        && !gl.volatile
        && !address_taken.contains(&g)
}

/// The constants a global's initialiser stores, when it stores constants only (zeroing
/// included); None otherwise.
fn constant_initialiser(gl: &Global) -> Option<Vec<i128>> {
    let mut stored = Vec::new();
    for s in &gl.init {
        match &s.kind {
            StmtKind::ZeroInit { .. } => {}
            StmtKind::Assign { src, .. } => stored.push(src.as_const()?),
            _ => return None,
        }
    }
    Some(stored)
}

/// Does every statement of `gl`'s initialiser store a constant, an integer or a
/// floating-point one?
fn constant_data(gl: &Global) -> bool {
    gl.init.iter().all(|s| match &s.kind {
        StmtKind::ZeroInit { .. } => true,
        StmtKind::Assign { src, .. } => {
            let mut e = src;
            while let ExprKind::Cast(inner) | ExprKind::Unary(UnOp::Neg, inner) = &e.kind {
                e = inner;
            }
            src.as_const().is_some() || matches!(e.kind, ExprKind::FloatConst(_))
        }
        _ => false,
    })
}

/// Every statement of a function that writes a place, with the place.
fn stores(prog: &Program) -> impl Iterator<Item = (&Stmt, &LValue)> {
    prog.functions.iter().flat_map(|f| {
        f.blocks.iter().flat_map(|b| {
            b.stmts.iter().filter_map(|s| match &s.kind {
                StmtKind::Assign { dst, .. }
                | StmtKind::Havoc { dst, .. }
                | StmtKind::ZeroInit { dst } => Some((s, dst)),
                StmtKind::Call { dst, .. } => dst.as_ref().map(|d| (s, d)),
                _ => None,
            })
        })
    })
}

/// The static integers and integer arrays whose initialiser and every store of the file write
/// constants, with those constants (and 0, the value of what an initialiser leaves).
fn static_values(
    prog: &Program,
    address_taken: &HashSet<GlobalId>,
) -> HashMap<GlobalId, StaticValues> {
    if has_unlowered_code(prog) {
        return HashMap::new();
    }
    let mut out: HashMap<GlobalId, StaticValues> = HashMap::new();
    for (i, gl) in prog.globals.iter().enumerate() {
        let g = GlobalId(i as u32);
        if !closed_static(g, gl, address_taken) {
            continue;
        }
        let (kind, elements) = match &gl.ty {
            CType::Int(k) => (*k, None),
            CType::Array(e, Some(n)) if *n <= MAX_STATIC_ELEMENTS => match **e {
                CType::Int(k) => (k, Some(*n)),
                _ => continue,
            },
            _ => continue,
        };
        let Some(stored) = constant_initialiser(gl) else {
            continue;
        };
        // An array's elements the initialiser leaves hold 0; a scalar with an initialiser
        // never holds the 0 before it.
        let mut values: BTreeSet<i128> = stored.iter().copied().collect();
        if elements.is_some() || stored.is_empty() {
            values.insert(0);
        }
        out.insert(
            g,
            StaticValues {
                kind,
                elements,
                values,
            },
        );
    }
    for (s, dst) in stores(prog) {
        let Some(g) = named_global(dst) else { continue };
        let Some(v) = out.get_mut(&g) else { continue };
        let whole_or_element = match dst {
            LValue::Var(_) => true,
            LValue::Index(b, _) => matches!(**b, LValue::Var(_)) && v.elements.is_some(),
            _ => false,
        };
        let value = match &s.kind {
            StmtKind::Assign { src, .. } if whole_or_element => src.as_const(),
            StmtKind::ZeroInit { .. } if matches!(dst, LValue::Var(_)) => Some(0),
            _ => None,
        };
        match value {
            Some(c) => {
                v.values.insert(c);
            }
            None => {
                out.remove(&g);
            }
        }
    }
    out.retain(|_, v| v.values.len() <= MAX_STATIC_VALUES);
    out
}

/// The static globals no code can change: [`closed_static`], an initialiser of constants only,
/// and no statement of any function of the file writes them. None when some code was not
/// lowered exactly as written ([`has_unlowered_code`]): it could write them.
fn unwritten_statics(prog: &Program, address_taken: &HashSet<GlobalId>) -> HashSet<GlobalId> {
    if has_unlowered_code(prog) {
        return HashSet::new();
    }
    let written: HashSet<GlobalId> = stores(prog)
        .filter_map(|(_, dst)| named_global(dst))
        .collect();
    (0..prog.globals.len() as u32)
        .map(GlobalId)
        .filter(|g| {
            let gl = &prog.globals[g.0 as usize];
            closed_static(*g, gl, address_taken) && !written.contains(g) && constant_data(gl)
        })
        .collect()
}

impl Regions {
    pub fn new(prog: &Program) -> Regions {
        let mut address_taken = HashSet::new();
        let mut note = |item: visit::Item, deref: &mut bool| {
            if let visit::Item::Place {
                place,
                address_only,
            } = item
            {
                if let (true, Some(g)) = (address_only, named_global(place)) {
                    address_taken.insert(g);
                }
                *deref |= matches!(place, LValue::Deref(_));
            }
        };
        for g in &prog.globals {
            for s in &g.init {
                visit::stmt(s, &mut |item| note(item, &mut false));
            }
        }
        let mut own_deref = BTreeMap::new();
        for f in &prog.functions {
            let mut d = false;
            visit::function(f, &mut |item| note(item, &mut d));
            // The encoding writes the bytes of these calls through their pointer itself.
            d |= f.blocks.iter().flat_map(|b| &b.stmts).any(|s| {
                matches!(&s.kind, StmtKind::Call { callee: Callee::Direct(n), .. }
                    if crate::libc::byte_write(n).is_some())
            });
            own_deref.insert(f.name.clone(), (d, direct_callees(f)));
        }
        // What a callee outside the program dereferences does not matter: its reads give
        // fresh results, its writes are havocked by `GlobalWrites`.
        let derefs = close_over_calls(own_deref, |a, b| *a |= *b, |_| None)
            .into_iter()
            .filter_map(|(name, d)| d.then_some(name))
            .collect();
        Regions {
            unwritten_statics: unwritten_statics(prog, &address_taken),
            static_values: static_values(prog, &address_taken),
            address_taken,
            derefs,
        }
    }

    /// Does static global `g` hold its initialiser at every entry of every function of the
    /// file (no code can write it: [`unwritten_statics`])?
    pub fn keeps_initialiser(&self, g: GlobalId) -> bool {
        self.unwritten_statics.contains(&g)
    }

    /// The values static `g` (each element of it, for an array) can hold at any function entry,
    /// when its initialiser and every store of the file write constants.
    pub fn static_values(&self, g: GlobalId) -> Option<&StaticValues> {
        self.static_values.get(&g)
    }

    /// Is global `g` reached by name only in the encoding of `root`?
    pub fn global_is_named_only(
        &self,
        prog: &Program,
        g: GlobalId,
        root: &str,
        entry_main: bool,
    ) -> bool {
        let gl = &prog.globals[g.0 as usize];
        if gl.volatile || self.address_taken.contains(&g) || matches!(gl.ty, CType::Unknown) {
            return false;
        }
        let closed = gl.linkage == Linkage::Internal || (entry_main && !gl.is_extern_decl);
        closed || !self.derefs.contains(root)
    }

    /// The locals of `f` reached by name only (whose address is never taken).
    pub fn named_only_locals(f: &Function) -> Vec<bool> {
        let mut addressed = vec![false; f.locals.len()];
        visit::function(f, &mut |item| {
            if let visit::Item::Place {
                place,
                address_only: true,
            } = item
            {
                if let Some(l) = named_local(place) {
                    addressed[l.0 as usize] = true;
                }
            }
        });
        f.locals
            .iter()
            .zip(addressed)
            .map(|(l, a)| !a && !l.address_taken && !l.volatile)
            .collect()
    }
}
