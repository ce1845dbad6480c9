//! The C front end: preprocess with the system compiler, parse with tree-sitter-c, lower to the IR.
//!
//! Architecture invariant: this is the only module that imports tree-sitter. Lowering never
//! panics on user input and never guesses: a construct it cannot model exactly becomes a fresh
//! value or a havoc with a diagnostic, and a function it cannot lower at all is skipped and
//! listed in [`Program::skipped`].

pub mod conditionals;
mod literals;
mod lower;
pub mod macros;
mod noreturn;
pub mod oldc;
pub mod preprocess;
pub mod sites;
pub mod source;
mod syntax;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::ir::Program;
pub use preprocess::PreprocessOptions;

/// A source file's text: UTF-8 as it is, anything else as Latin-1 (every byte one character,
/// so that nothing is lost); whether it was Latin-1. [`encode_text`] gives the bytes back.
pub fn decode_text(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => (bytes.iter().map(|&b| char::from(b)).collect(), true),
    }
}

/// The bytes of a text [`decode_text`] gave: Latin-1 characters back to their bytes (the text
/// covprune adds is ASCII).
pub fn encode_text(text: &str, latin1: bool) -> Vec<u8> {
    if latin1 {
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect()
    } else {
        text.as_bytes().to_vec()
    }
}

/// A file's text for display (Latin-1 shown as its characters).
pub fn text_of_bytes(bytes: &[u8]) -> String {
    decode_text(bytes).0
}

/// Errors that stop the front end for a whole file (bad input, not bad code inside a function).
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot preprocess {path}: {message}")]
    Preprocess { path: PathBuf, message: String },
    #[error("{path} does not look like C: {why}")]
    NotC { path: PathBuf, why: String },
    #[error("bad compilation database {path}: {message}")]
    CompileCommands { path: PathBuf, message: String },
}

/// Counts and timings of one front-end run, for `covprune parse`.
#[derive(Clone, Debug, Default)]
pub struct FrontendStats {
    pub preprocess_ms: u128,
    pub parse_ms: u128,
    pub lower_ms: u128,
    /// Lines of preprocessed text.
    pub lines: usize,
    /// ERROR and MISSING nodes in the parse tree.
    pub parse_errors: usize,
}

pub struct Loaded {
    pub program: Program,
    pub stats: FrontendStats,
}

/// Preprocesses, parses and lowers one C file.
pub fn load(path: &Path, opts: &PreprocessOptions) -> Result<Loaded, FrontendError> {
    let t0 = Instant::now();
    let raw = preprocess::preprocess(path, opts)?;
    let preprocess_ms = t0.elapsed().as_millis();
    let main_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    load_text(&raw, &main_name, path, preprocess_ms)
}

/// The program of the C text `src` (as the file `t.c`, not preprocessed), for tests.
#[cfg(test)]
pub(crate) fn test_program(src: &str) -> crate::ir::Program {
    load_text(src.as_bytes(), "t.c", Path::new("t.c"), 0)
        .expect("the test program lowers")
        .program
}

/// Parses and lowers already preprocessed text (line markers allowed).
pub fn load_text(
    raw: &[u8],
    main_name: &str,
    path: &Path,
    preprocess_ms: u128,
) -> Result<Loaded, FrontendError> {
    let t1 = Instant::now();
    let mut prepared = source::prepare(raw, main_name);
    let mut tree = parse(&prepared.text);
    // The first parse tells typedef names apart from variables; with them, fix what
    // tree-sitter-c misreads without that knowledge, then parse again.
    let typedefs = oldc::typedef_names(&prepared.text, tree.root_node());
    let mut changed = oldc::strip_variable_parens(&mut prepared.text, &typedefs);
    // Old C (implicit int, K&R definitions) makes syntax errors: rewrite it as modern C.
    if tree.root_node().has_error() {
        if let Some(fixed) = oldc::rewrite(&prepared.text, &typedefs) {
            prepared.text = fixed.text;
            prepared.edits = fixed.edits;
            changed = true;
        }
    }
    if changed {
        tree = parse(&prepared.text);
    }
    let parse_ms = t1.elapsed().as_millis();
    let root = tree.root_node();
    let parse_errors = count_errors(root);
    if root.has_error() && !has_clean_top_level_item(root) {
        return Err(FrontendError::NotC {
            path: path.to_path_buf(),
            why: "no declaration or function in it parses".into(),
        });
    }
    let t2 = Instant::now();
    let mut program = lower::lower_translation_unit(&prepared, root);
    noreturn::propagate(&mut program);
    let lower_ms = t2.elapsed().as_millis();
    Ok(Loaded {
        program,
        stats: FrontendStats {
            preprocess_ms,
            parse_ms,
            lower_ms,
            lines: prepared.text.iter().filter(|&&b| b == b'\n').count(),
            parse_errors,
        },
    })
}

fn parse(text: &[u8]) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .expect("tree-sitter-c matches the tree-sitter ABI it was built for");
    parser
        .parse(text, None)
        .expect("parsing without a timeout or cancellation flag always yields a tree")
}

fn count_errors(root: tree_sitter::Node) -> usize {
    if !root.has_error() {
        return 0;
    }
    let mut n = 0;
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            n += 1;
        }
        if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    n
}

fn has_clean_top_level_item(root: tree_sitter::Node) -> bool {
    let mut cursor = root.walk();
    let ok = root.named_children(&mut cursor).any(|c| {
        matches!(
            c.kind(),
            "function_definition" | "declaration" | "type_definition"
        ) && lower::unrecoverable_error(c).is_none()
    });
    ok
}
