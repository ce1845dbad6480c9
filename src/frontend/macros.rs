//! The macros a file sees, as the annotator needs them: function-like macros with a `?:` in their
//! body, object-like macros and their values, and what the configuration compiles out.

use std::path::Path;

use super::conditionals::{self, CompiledOut};
use super::preprocess::{run_preprocessor, PreprocessOptions};

/// A function-like macro whose body holds a conditional expression (`#define Abs(x) ((x) < 0 ?
/// -(x) : (x))`): Frama-C sees the `?:` of each use, so the annotator labels it too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionalMacro {
    pub name: String,
    pub params: Vec<String>,
    pub body: String,
}

/// What the annotator needs of the macros a file sees (its own and its headers').
#[derive(Clone, Debug, Default)]
pub struct FileMacros {
    /// Function-like macros with a `?:` in their body.
    pub conditional: Vec<ConditionalMacro>,
    /// Object-like macros, name and value (`MAXPRIO`, `3`; `EOF`, `(-1)`), sorted by name:
    /// those whose value is a constant expression are constants for mutation.
    pub objects: Vec<(String, String)>,
    /// The file's text this configuration compiles out: nothing is labelled there.
    pub compiled_out: CompiledOut,
    /// Every function-like macro's name, sorted: what its arguments become is the macro's
    /// (`Tracev((stderr, ...))` drops them), so no label reads inside them.
    pub function_like: Vec<String>,
}

/// The macros that `path` sees, from `cc -dM -E` (none for preprocessed (`.i`) input or
/// when that fails), and what the configuration compiles out of it.
pub fn file_macros(path: &Path, opts: &PreprocessOptions) -> FileMacros {
    let compiled_out = conditionals::compiled_out(path, opts);
    let Ok(out) = run_preprocessor(path, opts, true, &[]) else {
        return FileMacros {
            compiled_out,
            ..FileMacros::default()
        };
    };
    if path.extension().is_some_and(|e| e == "i") {
        return FileMacros::default();
    }
    let mut found = Vec::new();
    let mut objects = Vec::new();
    let mut function_like = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if !rest[name_end..].starts_with('(') {
            if name_end > 0 && !rest.starts_with("__") {
                objects.push((
                    rest[..name_end].to_string(),
                    rest[name_end..].trim().to_string(),
                ));
            }
            continue;
        }
        let open = name_end;
        let name = &rest[..open];
        if name.is_empty() {
            continue;
        }
        function_like.push(name.to_string());
        let Some(close) = rest[open..].find(')').map(|c| open + c) else {
            continue;
        };
        let body = rest[close + 1..].trim();
        if !body.contains('?') || rest[open + 1..close].contains("...") {
            continue;
        }
        let params: Vec<String> = rest[open + 1..close]
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        found.push(ConditionalMacro {
            name: name.to_string(),
            params,
            body: body.to_string(),
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    objects.sort();
    function_like.sort();
    function_like.dedup();
    FileMacros {
        conditional: found,
        objects,
        compiled_out,
        function_like,
    }
}
