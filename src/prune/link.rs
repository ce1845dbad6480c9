//! Linking across a project's files: each file's interface (the effects of the functions it
//! exports, its small exported functions with what they call, the functions it calls without
//! defining them), the project's exports (a name two files define left out), and what each
//! file is pruned knowing of the others'.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::import::{Bundle, Imports};
use crate::vc::ExternalEffects;

/// What pruning across files keeps of a file's program: the effects of the functions it
/// exports, its small exported functions with what they call (for other files to encode in
/// place), and the functions it calls without defining them. The program itself is dropped
/// (the files' programs all at once would weigh on a large project's memory).
pub struct Interface {
    pub unit: String,
    pub exports: BTreeMap<String, ExternalEffects>,
    /// None unless small functions are encoded in place across files.
    pub bundle: Option<Bundle>,
    pub calls_outside: BTreeSet<String>,
}

pub fn interface_of(program: &crate::ir::Program, unit: &str, with_bundle: bool) -> Interface {
    let defined: BTreeSet<&str> = program
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .chain(program.skipped.iter().map(|f| f.name.as_str()))
        .collect();
    Interface {
        unit: unit.to_string(),
        exports: crate::vc::Summaries::new(program, &BTreeMap::new()).exported(program),
        bundle: with_bundle.then(|| {
            Bundle::of_unit(program, unit, |f| {
                f.blocks.len() <= crate::vc::encode::MAX_INLINE_BLOCKS
            })
        }),
        calls_outside: program
            .functions
            .iter()
            .flat_map(crate::cfg::callgraph::direct_callees)
            .filter(|n| !defined.contains(n.as_str()))
            .collect(),
    }
}

/// The effects of every function of external linkage the files define, by name; a name two
/// files define (`ambiguous`) is left out (which of them a call reaches depends on the link).
pub fn project_exports<'i>(
    interfaces: impl Iterator<Item = &'i Interface>,
    ambiguous: &BTreeSet<String>,
) -> BTreeMap<String, ExternalEffects> {
    interfaces
        .flat_map(|i| &i.exports)
        .filter(|(name, _)| !ambiguous.contains(*name))
        .map(|(name, effects)| (name.clone(), effects.clone()))
        .collect()
}

/// The functions of external linkage more than one file defines.
pub fn defined_twice<'i>(interfaces: impl Iterator<Item = &'i Interface>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut twice = BTreeSet::new();
    for i in interfaces {
        for name in i.exports.keys() {
            if !seen.insert(name.clone()) {
                twice.insert(name.clone());
            }
        }
    }
    twice
}

/// The other files' functions a file calls that it may encode in place: each file's bundle
/// restricted to the roots the file calls (names the project defines once).
pub fn imports_for(
    interface: &Interface,
    interfaces: &[&Interface],
    exports: &BTreeMap<String, ExternalEffects>,
    ambiguous: &BTreeSet<String>,
) -> Imports {
    let bundles = interfaces
        .iter()
        .filter(|other| other.unit != interface.unit)
        .filter_map(|other| {
            let bundle = other.bundle.as_ref()?;
            let wanted: BTreeSet<String> = interface
                .calls_outside
                .iter()
                .filter(|n| bundle.roots.contains(*n) && exports.contains_key(*n))
                .cloned()
                .collect();
            (!wanted.is_empty()).then(|| bundle.restricted_to(&wanted))
        })
        .collect::<Vec<_>>();
    let called: BTreeSet<String> = bundles.iter().flat_map(Bundle::calls_outside).collect();
    Imports {
        bundles,
        ambiguous: ambiguous.intersection(&called).cloned().collect(),
    }
}

/// The exports of other files that a file calls, or that the functions it merges call (but
/// those it merges: their bodies are in its program).
pub fn externals_for(
    interface: &Interface,
    imports: &Imports,
    exports: &BTreeMap<String, ExternalEffects>,
) -> BTreeMap<String, ExternalEffects> {
    let merged: BTreeSet<&str> = imports
        .bundles
        .iter()
        .flat_map(|b| b.roots.iter().map(String::as_str))
        .collect();
    interface
        .calls_outside
        .iter()
        .cloned()
        .chain(imports.bundles.iter().flat_map(Bundle::calls_outside))
        .filter(|n| !merged.contains(n.as_str()))
        .filter_map(|n| exports.get(&n).map(|e| (n, e.clone())))
        .collect()
}
