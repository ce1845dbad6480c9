//! Runs the system C preprocessor (`cc -E`, line markers kept) with the user's flags or the flags
//! of the file's entry in a compilation database.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::FrontendError;

/// Whether preprocessed texts are kept for the rest of the process ([`keep_texts_for_this_run`]).
static KEEPING: AtomicBool = AtomicBool::new(false);

/// Preprocessed texts by everything their command read that the process can name: the
/// compiler, its flags, its directory and the file's path, then the digest of the file's bytes.
static KEPT: Mutex<BTreeMap<KeptKey, Vec<u8>>> = Mutex::new(BTreeMap::new());

/// The command (compiler, flags, directory and path, joined) and the SHA-256 of the file.
type KeptKey = (String, Vec<u8>);

/// Keeps every preprocessed text for the rest of the process, so that a file preprocessed
/// again with the same command and bytes is not handed to the compiler again. Only for runs
/// that write no file a preprocessed one includes: `project` (it writes into its output
/// directory alone) preprocesses each annotated file about five times.
pub fn keep_texts_for_this_run() {
    KEEPING.store(true, Ordering::Relaxed);
}

/// How to preprocess: the compiler and the flags that reach it.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PreprocessOptions {
    /// The compiler driver; `cc` when empty.
    pub cc: Option<String>,
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Files force-included before the source (`-include`).
    pub force_includes: Vec<PathBuf>,
    /// The language standard (`gnu89`, `c99`, ...).
    pub std: Option<String>,
    /// A `compile_commands.json`, or a directory holding one (`-p DIR`).
    pub compile_commands: Option<PathBuf>,
    /// The file whose database entry gives the flags when the file itself has none (an
    /// annotated file: its original's entry).
    #[serde(default)]
    pub database_entry: Option<PathBuf>,
}

/// Preprocesses `path` and returns the text with line markers. Files ending in `.i` are taken
/// as already preprocessed.
/// The compiler flags the user gave (`-std`, `-I`, `-D`, `-include`), as `cc` spells them.
pub fn user_flags(opts: &PreprocessOptions) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(std) = &opts.std {
        flags.push(format!("-std={std}"));
    }
    for d in &opts.include_dirs {
        flags.push(format!("-I{}", d.display()));
    }
    for d in &opts.defines {
        flags.push(format!("-D{d}"));
    }
    for f in &opts.force_includes {
        flags.push("-include".into());
        flags.push(f.display().to_string());
    }
    flags
}

pub fn preprocess(path: &Path, opts: &PreprocessOptions) -> Result<Vec<u8>, FrontendError> {
    run_preprocessor(path, opts, false, &[])
}

/// [`preprocess`] with `extra` flags after the others, the result never kept (a probe copy of
/// a file, see `conditionals`).
pub fn preprocess_with(
    path: &Path,
    opts: &PreprocessOptions,
    extra: &[String],
) -> Result<Vec<u8>, FrontendError> {
    run_preprocessor(path, opts, false, extra)
}

pub(super) fn run_preprocessor(
    path: &Path,
    opts: &PreprocessOptions,
    macros_only: bool,
    extra: &[String],
) -> Result<Vec<u8>, FrontendError> {
    let raw = std::fs::read(path).map_err(|e| FrontendError::Read {
        path: path.to_path_buf(),
        source: e,
    })?;
    if raw.contains(&0) {
        return Err(FrontendError::NotC {
            path: path.to_path_buf(),
            why: "it contains NUL bytes (a binary file?)".into(),
        });
    }
    if path.extension().is_some_and(|e| e == "i") {
        return Ok(raw);
    }
    let (cc, mut flags, cwd) = compiler_of(path, opts)?;
    if macros_only {
        flags.push("-dM".into());
    }
    // LTest-style files stub `pc_label` under `#ifndef pc_label`; defining the name as itself
    // keeps the calls through preprocessing without any other effect.
    flags.push("-Dpc_label=pc_label".into());
    flags.push("-Dpc_label_bindings=pc_label_bindings".into());
    flags.push("-Dpc_label_sequence=pc_label_sequence".into());
    flags.push("-Dpc_label_sequence_condition=pc_label_sequence_condition".into());
    flags.extend(extra.iter().cloned());
    // Line markers repeat the path as given, so keep it relative unless the compilation
    // database runs the compiler elsewhere.
    let given = match &cwd {
        Some(_) => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        None => path.to_path_buf(),
    };
    // An annotated copy's `__FILE__` (in `assert`, in logging) is its original's, as in the
    // program under test: where the copy was written changes neither a proof nor a cache key.
    if let Some(original) = opts.database_entry.as_ref().filter(|o| *o != path) {
        let original = std::fs::canonicalize(original).unwrap_or_else(|_| original.clone());
        flags.push(format!(
            "-fmacro-prefix-map={}={}",
            given.display(),
            original.display()
        ));
    }
    let kept_as = (KEEPING.load(Ordering::Relaxed) && extra.is_empty()).then(|| {
        (
            format!("{cc}\0{flags:?}\0{cwd:?}\0{}", path.display()),
            Sha256::digest(&raw).to_vec(),
        )
    });
    if let Some(key) = &kept_as {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(text) = kept.get(key) {
            return Ok(text.clone());
        }
    }
    let mut cmd = Command::new(&cc);
    cmd.arg("-E").args(&flags);
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    cmd.arg(&given);
    let out = cmd.output().map_err(|e| FrontendError::Preprocess {
        path: path.to_path_buf(),
        message: format!("could not run `{cc}`: {e}"),
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = stderr.lines().take(8).collect();
        return Err(FrontendError::Preprocess {
            path: path.to_path_buf(),
            message: format!("`{cc} -E` failed ({}):\n{}", out.status, first.join("\n")),
        });
    }
    if let Some(key) = kept_as {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(key, out.stdout.clone());
    }
    Ok(out.stdout)
}

/// The compiler, its flags (the database entry's preprocessing flags, then the user's) and
/// the directory it runs in, for `path`.
fn compiler_of(
    path: &Path,
    opts: &PreprocessOptions,
) -> Result<(String, Vec<String>, Option<PathBuf>), FrontendError> {
    let (cc, mut flags, cwd) = match &opts.compile_commands {
        Some(db) => match (flags_from_database(db, path), &opts.database_entry) {
            (Ok(found), _) => found,
            (Err(_), Some(original)) => flags_from_database(db, original)?,
            (Err(e), None) => return Err(e),
        },
        None => (
            opts.cc.clone().unwrap_or_else(|| "cc".to_string()),
            Vec::new(),
            None,
        ),
    };
    let cc = opts.cc.clone().unwrap_or(cc);
    flags.extend(user_flags(opts));
    Ok((cc, flags, cwd))
}

/// The compiler's first error on `path` (`cc -fsyntax-only`, with the flags it is
/// preprocessed with), when the compiler rejects the file; `None` when it takes it or cannot
/// be asked.
pub fn compiler_rejects(path: &Path, opts: &PreprocessOptions) -> Option<String> {
    let (cc, flags, cwd) = compiler_of(path, opts).ok()?;
    let given = match &cwd {
        Some(_) => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        None => path.to_path_buf(),
    };
    let mut cmd = Command::new(&cc);
    cmd.args(["-fsyntax-only", "-w"]).args(&flags);
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.arg(&given).output().ok()?;
    if out.status.success() {
        return None;
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let first = said
        .lines()
        .find(|l| l.contains("error:"))
        .or_else(|| said.lines().next())
        .unwrap_or("it exits with an error");
    Some(first.trim().to_string())
}

/// The compiler, the preprocessing flags and the working directory of `file`'s entry.
fn flags_from_database(
    db: &Path,
    file: &Path,
) -> Result<(String, Vec<String>, Option<PathBuf>), FrontendError> {
    let (args, dir) = database_entry(db, file)?;
    let (cc, rest) = args.split_first().expect("entries have a command");
    Ok((cc.clone(), preprocessor_flags(rest), Some(dir)))
}

/// The database file a `-p DIR` or `--compile-commands FILE` names.
pub fn database_file(db: &Path) -> PathBuf {
    if db.is_dir() {
        db.join("compile_commands.json")
    } else {
        db.to_path_buf()
    }
}

/// A compilation database's file and its entries.
fn read_database(db: &Path) -> Result<(PathBuf, Vec<serde_json::Value>), FrontendError> {
    let db_file = database_file(db);
    let text =
        std::fs::read_to_string(&db_file).map_err(|e| database_error(&db_file, e.to_string()))?;
    let entries = serde_json::from_str(&text)
        .map_err(|e| database_error(&db_file, format!("not a JSON array: {e}")))?;
    Ok((db_file, entries))
}

fn database_error(db_file: &Path, message: String) -> FrontendError {
    FrontendError::CompileCommands {
        path: db_file.to_path_buf(),
        message,
    }
}

/// Every C source file a compilation database compiles (its `.c` entries), as absolute
/// paths, sorted, each once.
pub fn database_files(db: &Path) -> Result<Vec<PathBuf>, FrontendError> {
    let (db_file, entries) = read_database(db)?;
    let bad = |message: String| database_error(&db_file, message);
    let mut out = std::collections::BTreeSet::new();
    for entry in &entries {
        let (Some(dir), Some(f)) = (entry["directory"].as_str(), entry["file"].as_str()) else {
            return Err(bad("an entry lacks `directory` or `file`".into()));
        };
        let path = Path::new(dir).join(f);
        if path.extension().is_some_and(|e| e == "c") {
            out.insert(std::fs::canonicalize(&path).unwrap_or(path));
        }
    }
    Ok(out.into_iter().collect())
}

/// One entry of a compilation database: its file (absolute, canonical when it exists), its
/// command as arguments (the compiler first) and its directory.
#[derive(Clone, Debug)]
pub struct DatabaseEntry {
    pub file: PathBuf,
    pub args: Vec<String>,
    pub dir: PathBuf,
}

/// Every entry of a compilation database, in its order.
pub fn database_entries(db: &Path) -> Result<Vec<DatabaseEntry>, FrontendError> {
    let (db_file, entries) = read_database(db)?;
    let bad = |message: String| database_error(&db_file, message);
    let mut out = Vec::new();
    for entry in &entries {
        let dir = PathBuf::from(entry["directory"].as_str().unwrap_or("."));
        let Some(f) = entry["file"].as_str() else {
            continue;
        };
        let file = dir.join(f);
        let file = std::fs::canonicalize(&file).unwrap_or(file);
        let args: Vec<String> = if let Some(a) = entry["arguments"].as_array() {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        } else if let Some(c) = entry["command"].as_str() {
            split_command(c)
        } else {
            return Err(bad(format!(
                "entry for {f} has neither arguments nor command"
            )));
        };
        if args.is_empty() {
            return Err(bad(format!("entry for {f} has an empty command")));
        }
        out.push(DatabaseEntry { file, args, dir });
    }
    Ok(out)
}

/// The command of `file`'s entry in a compilation database, and the entry's directory.
fn database_entry(db: &Path, file: &Path) -> Result<(Vec<String>, PathBuf), FrontendError> {
    let want = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    match database_entries(db)?.into_iter().find(|e| e.file == want) {
        Some(e) => Ok((e.args, e.dir)),
        None => Err(database_error(
            &database_file(db),
            format!("no entry for {}", file.display()),
        )),
    }
}

/// What building `file` (an annotated copy: its original's entry, see
/// [`PreprocessOptions::database_entry`]) takes from the compilation database, if one is given:
/// the preprocessing flags, and the link flags the entry carries (`-l`, `-L`, `-pthread`,
/// `-Wl,...`), paths made absolute against the entry's directory, so that the program builds
/// elsewhere.
pub fn database_build_flags(
    opts: &PreprocessOptions,
    file: &Path,
) -> Result<(Vec<String>, Vec<String>), FrontendError> {
    let Some(db) = &opts.compile_commands else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (args, dir) = match (database_entry(db, file), &opts.database_entry) {
        (Ok(found), _) => found,
        (Err(_), Some(original)) => database_entry(db, original)?,
        (Err(e), None) => return Err(e),
    };
    Ok(entry_build_flags(&args, &dir))
}

/// What building an entry's file elsewhere takes from its command `args` (run in `dir`): the
/// preprocessing flags and the link flags (`-l`, `-L`, `-pthread`, `-Wl,...`), paths made
/// absolute against `dir`.
pub fn entry_build_flags(args: &[String], dir: &Path) -> (Vec<String>, Vec<String>) {
    let absolute = |p: &str| -> String {
        let p = Path::new(p);
        if p.is_absolute() {
            p.display().to_string()
        } else {
            dir.join(p).display().to_string()
        }
    };
    let mut compile = Vec::new();
    let flags = preprocessor_flags(&args[1..]);
    let mut i = 0;
    while i < flags.len() {
        let a = &flags[i];
        let with_path = ["-I", "-isystem", "-iquote", "-include", "-imacros"];
        if with_path.contains(&a.as_str()) {
            compile.push(a.clone());
            if let Some(v) = flags.get(i + 1) {
                compile.push(absolute(v));
            }
            i += 2;
            continue;
        }
        match with_path
            .iter()
            .find(|p| a.starts_with(**p) && a.len() > p.len())
        {
            Some(p) if *p != "-include" && *p != "-imacros" => {
                compile.push(format!("{p}{}", absolute(&a[p.len()..])))
            }
            _ => compile.push(a.clone()),
        }
        i += 1;
    }
    let mut link = Vec::new();
    let mut it = args[1..].iter().peekable();
    while let Some(a) = it.next() {
        if a == "-l" || a == "-L" {
            if let Some(v) = it.next() {
                link.push(if a == "-L" {
                    format!("-L{}", absolute(v))
                } else {
                    format!("-l{v}")
                });
            }
        } else if let Some(d) = a.strip_prefix("-L") {
            link.push(format!("-L{}", absolute(d)));
        } else if a.starts_with("-l") || a == "-pthread" || a.starts_with("-Wl,") {
            link.push(a.clone());
        }
    }
    (compile, link)
}

/// Keeps the flags that change preprocessing (`-I`, `-D`, `-U`, `-include`, `-isystem`,
/// `-iquote`, `-std`); drops outputs, the source file and code-generation flags.
fn preprocessor_flags(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let takes_value = [
            "-I", "-D", "-U", "-include", "-isystem", "-iquote", "-imacros",
        ];
        if takes_value.contains(&a.as_str()) {
            if let Some(v) = args.get(i + 1) {
                out.push(a.clone());
                out.push(v.clone());
            }
            i += 2;
            continue;
        }
        if ["-I", "-D", "-U", "-std="].iter().any(|p| a.starts_with(p))
            || a.starts_with("-isystem")
            || a.starts_with("-iquote")
        {
            out.push(a.clone());
        }
        i += 1;
    }
    out
}

/// Splits a shell command line on whitespace, honouring single and double quotes and backslash.
pub fn split_command(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_strings_split_like_a_shell() {
        assert_eq!(
            split_command(r#"cc -DNAME="a b" -I inc 'x y.c'"#),
            vec!["cc", "-DNAME=a b", "-I", "inc", "x y.c"]
        );
    }

    #[test]
    fn only_preprocessor_flags_are_kept() {
        let args: Vec<String> = [
            "-O2", "-Iinc", "-D", "X=1", "-c", "-o", "a.o", "a.c", "-std=c99",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            preprocessor_flags(&args),
            vec!["-Iinc", "-D", "X=1", "-std=c99"]
        );
    }
}
