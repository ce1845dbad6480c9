//! The build of a whole project under test (`project measure`): a copy of the sources' tree
//! with every annotated file in its original's place, its label ids moved to a range of their
//! own; a build directory of its own ([`Layout`]); compiler wrappers that put the recording
//! runtime into every compile and link the project's own build does; and test commands run
//! there, each with its record. Nothing is written into the user's source or build directory.
//!
//! Why wrappers rather than compiling each database entry ourselves: a compilation database
//! has no link step and no test programs, while the project's build (`make check`, a CMake
//! target, a script) knows both. The wrappers stand first on `PATH` under the compilers' usual
//! names (`cc`, `gcc`, `clang`) and as `$CC`, so a build that names its compiler either way
//! compiles with the runtime's header and links its object. A build that calls a compiler by
//! an absolute path bypasses them; its annotated files then fail to link (`covprune_hit`
//! undefined), which is reported, never silently measured.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::layout::Layout;
use super::shell::sh_quote;
use super::{runtime, MeasureError, TestRun};

/// One annotated file to put in the tree.
#[derive(Clone, Debug)]
pub struct PlacedFile {
    /// Its original's absolute path.
    pub original: PathBuf,
    /// The annotated copy.
    pub annotated: PathBuf,
    /// Added to its label ids in the program: label `id` records as `base + id`.
    pub base: u64,
}

/// A staged build: the copied tree and what it was copied from, the build directory, the
/// wrappers' directory and the scratch directory of records.
#[derive(Clone, Debug)]
pub struct StagedTree {
    pub tree: PathBuf,
    /// The user's directory `tree` is a copy of.
    pub copied_from: PathBuf,
    /// Where the project builds: a fresh build directory, or the copy of the user's.
    pub build: PathBuf,
    /// The user's build directory (the compilation database's).
    pub user_build: PathBuf,
    pub bin: PathBuf,
    /// The wrapper `$CC` names.
    pub cc: PathBuf,
    work: PathBuf,
}

impl StagedTree {
    /// Where a directory of the user's trees is in the staged build: its build directory
    /// stands for theirs, the copy for their sources.
    pub fn in_copy(&self, dir: &Path) -> Option<PathBuf> {
        if let Ok(rel) = dir.strip_prefix(&self.user_build) {
            return Some(self.build.join(rel));
        }
        dir.strip_prefix(&self.copied_from)
            .ok()
            .map(|rel| self.tree.join(rel))
    }
}

/// What to stage: the project's layout, its sources' root and build directory, directories
/// never to copy (the output directory), the annotated files, and the compiler `$CC` names.
pub struct Stage<'a> {
    pub layout: &'a Layout,
    pub root: &'a Path,
    pub db_dir: &'a Path,
    pub skip: &'a [PathBuf],
    pub files: &'a [PlacedFile],
    pub cc_name: &'a str,
}

/// What one test command did.
#[derive(Clone, Debug)]
pub struct CommandRun {
    pub run: TestRun,
    pub seconds: f64,
    /// Its standard output and error, both, in one file.
    pub log: PathBuf,
    /// The label bases of the annotated files built into the programs it ran.
    pub present: BTreeSet<u64>,
}

/// The compiler names that get a wrapper (each found on `PATH`), besides `cc_name`.
const COMPILER_NAMES: [&str; 3] = ["cc", "gcc", "clang"];

/// The text an annotated file is staged with: its label base, and a constructor that says,
/// when a program built from it starts, that it is there (`P base`). The base is pushed and
/// popped, so that a file that includes another annotated file (tests that include the
/// library's source) keeps its own.
fn staged_text(annotated: &[u8], base: u64) -> Vec<u8> {
    let mut out = format!(
        "#pragma push_macro(\"COVPRUNE_LABEL_BASE\")\n#undef COVPRUNE_LABEL_BASE\n#define COVPRUNE_LABEL_BASE {base}L\n#line 1\n"
    )
    .into_bytes();
    out.extend_from_slice(annotated);
    if !annotated.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(
        format!(
            "void covprune_present(long base);\n\
             __attribute__((constructor)) static void covprune_present_{base}(void) {{ covprune_present({base}L); }}\n\
             #pragma pop_macro(\"COVPRUNE_LABEL_BASE\")\n"
        )
        .as_bytes(),
    );
    out
}

/// Whether a directory is a build directory (not to copy beside the sources a fresh configure
/// starts from).
fn is_build_dir(dir: &Path) -> bool {
    dir.join("CMakeCache.txt").is_file() || dir.join("meson-private").is_dir()
}

/// Stages the build in `work`: copies the sources (for a fresh configure, the source
/// directory without build directories; else the tree holding the sources and the build
/// directory) into `work/tree`, timestamps kept so that the build does not remake what it
/// need not, `.git` left out; writes each annotated file over its original; writes the runtime
/// and the compiler wrappers into `work/covprune`; and configures a build directory of its
/// own with the recording compiler when the layout has a configure step.
pub fn stage(st: &Stage, work: &Path) -> Result<StagedTree, MeasureError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let db_dir = canon(st.db_dir);
    let mut skip: Vec<PathBuf> = st
        .skip
        .iter()
        .chain(std::iter::once(&work.to_path_buf()))
        .map(|p| canon(p))
        .collect();
    let copied_from = match st.layout.source() {
        Some(source) => {
            let source = canon(source);
            if db_dir != source {
                skip.push(db_dir.clone());
            }
            source
        }
        None => common_dir(&canon(st.root), &db_dir),
    };
    let fresh = st.layout.source().is_some();
    let tree = work.join("tree");
    copy_tree(&copied_from, &tree, &skip, fresh)?;
    for f in st.files {
        let original = canon(&f.original);
        let rel = original.strip_prefix(&copied_from).map_err(|_| {
            MeasureError::Build(format!(
                "{} is outside the sources the {} build starts from ({})",
                original.display(),
                st.layout.name(),
                copied_from.display()
            ))
        })?;
        let text = std::fs::read(&f.annotated)?;
        let dest = tree.join(rel);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // A new file, not a write through: the original may be a hard or symbolic link.
        let _ = std::fs::remove_file(&dest);
        std::fs::write(&dest, staged_text(&text, f.base))?;
    }
    let cc_name = st.cc_name;
    let own = work.join("covprune");
    let bin = own.join("bin");
    std::fs::create_dir_all(&bin)?;
    let header = own.join("covprune_runtime.h");
    std::fs::write(&header, runtime::HEADER)?;
    std::fs::write(own.join("covprune_runtime.c"), runtime::SOURCE)?;
    let real_cc = find_program(cc_name)
        .ok_or_else(|| MeasureError::Build(format!("the compiler `{cc_name}` is not on PATH")))?;
    let out = Command::new(&real_cc)
        .args(["-c", "-w", "-fPIC", "covprune_runtime.c", "-o"])
        .arg("covprune_runtime.o")
        .current_dir(&own)
        .output()?;
    if !out.status.success() {
        return Err(MeasureError::Build(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    let object = own.join("covprune_runtime.o");
    let cc_base = Path::new(cc_name)
        .file_name()
        .map_or_else(|| "cc".to_string(), |n| n.to_string_lossy().into_owned());
    let mut names: BTreeSet<String> = COMPILER_NAMES.iter().map(|s| s.to_string()).collect();
    names.insert(cc_base.clone());
    for name in names {
        let real = if name == cc_base {
            Some(real_cc.clone())
        } else {
            find_program(&name)
        };
        if let Some(real) = real {
            write_wrapper(&bin.join(&name), &real, &header, &object)?;
        }
    }
    let cc = bin.join(&cc_base);
    let build = match st.layout {
        Layout::InPlace => tree.join(db_dir.strip_prefix(&copied_from).unwrap_or(Path::new(""))),
        Layout::Autotools { .. } if db_dir == copied_from => tree.clone(),
        _ => work.join("build"),
    };
    st.layout
        .configure(&tree, &build, &cc, &work.join("configure.log"))?;
    Ok(StagedTree {
        tree,
        copied_from,
        build,
        user_build: db_dir,
        cc,
        bin,
        work: work.to_path_buf(),
    })
}

/// The deepest directory holding both.
pub fn common_dir(a: &Path, b: &Path) -> PathBuf {
    let mut r = a.to_path_buf();
    while !b.starts_with(&r) && r.pop() {}
    r
}

/// A program's path: `name` itself when it has a slash, else the first on `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then(|| p.canonicalize().unwrap_or(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A compiler wrapper: the real compiler with the runtime's header included in every
/// translation unit it compiles, and the runtime's object added to every link; a command that
/// only preprocesses or asks the compiler about itself runs as it is.
fn write_wrapper(path: &Path, real: &Path, header: &Path, object: &Path) -> std::io::Result<()> {
    let (real, header, object) = (
        sh_quote(&real.display().to_string()),
        sh_quote(&header.display().to_string()),
        sh_quote(&object.display().to_string()),
    );
    let script = format!(
        "#!/bin/sh\n\
         # Written by covprune project measure: the compiler, with the recording runtime.\n\
         # Preprocessing alone and questions about the compiler: as they are (configure\n\
         # scripts read what the preprocessor prints).\n\
         for a in \"$@\"; do\n\
         \x20 case \"$a\" in\n\
         \x20   -E|-M|-MM|-v|--version|-dumpversion|-dumpmachine|-dumpspecs|-print-*|--print-*)\n\
         \x20     exec {real} \"$@\" ;;\n\
         \x20 esac\n\
         done\n\
         for a in \"$@\"; do\n\
         \x20 case \"$a\" in\n\
         \x20   -c|-S)\n\
         \x20     exec {real} -include {header} \"$@\" ;;\n\
         \x20 esac\n\
         done\n\
         exec {real} -include {header} \"$@\" {object}\n"
    );
    std::fs::write(path, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Copies a tree, keeping modification times and symbolic links, leaving out `.git`, the
/// directories of `skip` and, with `no_builds`, build directories.
fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf], no_builds: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let dest = to.join(e.file_name());
        let kind = e.file_type()?;
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&path)?, &dest)?;
            continue;
        }
        if kind.is_dir() {
            let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
            if e.file_name() == ".git"
                || skip.contains(&canonical)
                || no_builds && is_build_dir(&path)
            {
                continue;
            }
            copy_tree(&path, &dest, skip, no_builds)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &dest)?;
            let modified = e.metadata()?.modified()?;
            std::fs::File::options()
                .write(true)
                .open(&dest)?
                .set_modified(modified)?;
        }
    }
    let modified = std::fs::metadata(from)?.modified()?;
    // Directories keep their time too (a build may compare them); a failure here is harmless.
    if let Ok(dir) = std::fs::File::open(to) {
        let _ = dir.set_modified(modified);
    }
    Ok(())
}

/// Runs test command `k` (`/bin/sh -c`) in `cwd` inside the staged tree, with the wrappers
/// first on `PATH`, `$CC` set to the wrapper, and every process it starts recording into one
/// file; the whole process group is killed after `timeout`. The run's labels are the union
/// over its processes: a label is covered when some process covered it.
pub fn run_command(
    staged: &StagedTree,
    k: usize,
    command: &str,
    cwd: &Path,
    timeout: Duration,
) -> std::io::Result<CommandRun> {
    let record = staged.work.join(format!("record_{k}.txt"));
    let log = staged.work.join(format!("command_{k}.log"));
    let _ = std::fs::remove_file(&record);
    let out = std::fs::File::create(&log)?;
    let mut cmd = staged.command("/bin/sh", cwd)?;
    cmd.arg("-c")
        .arg(command)
        .env("COVPRUNE_RECORD", &record)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone()?))
        .stderr(Stdio::from(out));
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let outcome = super::wait_for(
        &mut child,
        start,
        timeout,
        Duration::from_millis(20),
        |child| {
            // The group: a build's and a test harness's children die with the shell.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
        },
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let recorded = runtime::parse_record(&std::fs::read_to_string(&record).unwrap_or_default());
    Ok(CommandRun {
        run: TestRun {
            name: command.to_string(),
            outcome,
            reached: recorded.reached,
            covered: recorded.covered,
            crashed_in_label: recorded.crashed_in,
            bindings: recorded.bindings,
            sequences: recorded.sequences,
        },
        seconds,
        log,
        present: recorded.present,
    })
}

/// Size and modification time of every file under `dirs` (but `.git` and `skip`), by path:
/// what the user's trees look like, to check that a run left them as they were.
pub type Fingerprint = std::collections::BTreeMap<PathBuf, (u64, Option<std::time::SystemTime>)>;

pub fn fingerprint(dirs: &[PathBuf], skip: &[PathBuf]) -> Fingerprint {
    let skip: Vec<PathBuf> = skip
        .iter()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect();
    let mut out = Fingerprint::new();
    let mut stack: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir.clone()) || skip.contains(&dir) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if e.file_name() != ".git" {
                    stack.push(path);
                }
            } else if let Ok(meta) = std::fs::symlink_metadata(&path) {
                out.insert(path, (meta.len(), meta.modified().ok()));
            }
        }
    }
    out
}

/// The files that appeared, disappeared or changed between two fingerprints, sorted.
pub fn changes(before: &Fingerprint, after: &Fingerprint) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .filter(|(p, v)| after.get(*p) != Some(v))
        .map(|(p, _)| p.display().to_string())
        .chain(
            after
                .keys()
                .filter(|p| !before.contains_key(*p))
                .map(|p| p.display().to_string()),
        )
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The tests a command runs, one command each, when it is a test runner that lists its tests
/// (`ctest ...`: `ctest ... -I K,K`; `meson test ...`: `meson test ... NAME`; `make ... check`
/// under automake's test harness: the build first, `make ... check TESTS=`, then
/// `make -C DIR check TESTS=NAME` for each test of each directory); None for any other command
/// (it then runs whole). Listed in `cwd` with the staged environment.
pub fn listed_tests(
    command: &str,
    cwd: &Path,
    staged: &StagedTree,
) -> Option<Vec<(String, String)>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    // A plain invocation only: no shell operators.
    if command.contains(['&', '|', ';', '>', '<', '`', '$', '(']) {
        return None;
    }
    let listing = match words.as_slice() {
        ["ctest", ..] => format!("{command} -N"),
        ["meson", "test", ..] => format!("{command} --list"),
        ["make", options @ .., "check"] if options.iter().all(|o| o.starts_with('-')) => {
            return automake_tests(command, cwd, staged)
        }
        _ => return None,
    };
    let out = staged
        .command("/bin/sh", cwd)
        .ok()?
        .arg("-c")
        .arg(&listing)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let tests: Vec<(String, String)> = if words[0] == "ctest" {
        // `  Test  #3: name`
        text.lines()
            .filter_map(|l| {
                let rest = l
                    .trim()
                    .strip_prefix("Test")?
                    .trim_start()
                    .strip_prefix('#')?;
                let (k, name) = rest.split_once(':')?;
                let k: usize = k.trim().parse().ok()?;
                Some((name.trim().to_string(), format!("{command} -I {k},{k}")))
            })
            .collect()
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains(' '))
            .map(|name| (name.to_string(), format!("{command} {}", sh_quote(name))))
            .collect()
    };
    (!tests.is_empty()).then_some(tests)
}

impl StagedTree {
    /// `program` run in `cwd` as the project's commands run: the wrappers first on `PATH`,
    /// `$CC` the wrapper.
    fn command(&self, program: &str, cwd: &Path) -> std::io::Result<Command> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            std::iter::once(self.bin.clone()).chain(std::env::split_paths(&path)),
        )
        .map_err(std::io::Error::other)?;
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd).env("PATH", path).env("CC", &self.cc);
        Ok(cmd)
    }
}

/// `make ... check` under automake's harness, split: the build (every directory's `check`
/// with no test), then each test of each directory whose makefile lists `TESTS`, alone.
fn automake_tests(command: &str, cwd: &Path, staged: &StagedTree) -> Option<Vec<(String, String)>> {
    const LIST: &str = "covprune-list-tests:\n\t@echo $(TESTS)\n";
    let mut dirs = Vec::new();
    let mut stack = vec![(cwd.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap_or_default();
        if makefile.lines().any(|l| l.starts_with("TESTS =")) {
            dirs.push(dir.clone());
        }
        if depth < 3 {
            let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&dir)
                .ok()?
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            subdirs.sort();
            stack.extend(subdirs.into_iter().rev().map(|d| (d, depth + 1)));
        }
    }
    dirs.sort();
    let mut out = vec![("build".to_string(), format!("{command} TESTS="))];
    for dir in dirs {
        let mut child = staged
            .command("make", &dir)
            .ok()?
            .args(["-s", "-f", "Makefile", "-f", "-", "covprune-list-tests"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        {
            use std::io::Write as _;
            child.stdin.take()?.write_all(LIST.as_bytes()).ok()?;
        }
        let listed = child.wait_with_output().ok()?;
        if !listed.status.success() {
            return None;
        }
        let rel = dir.strip_prefix(cwd).unwrap_or(&dir).display().to_string();
        let make_dir = if rel.is_empty() {
            ".".to_string()
        } else {
            rel.clone()
        };
        for test in String::from_utf8_lossy(&listed.stdout).split_whitespace() {
            let name = if rel.is_empty() {
                test.to_string()
            } else {
                format!("{rel}/{test}")
            };
            out.push((
                name,
                format!(
                    "make -C {} check TESTS={}",
                    sh_quote(&make_dir),
                    sh_quote(test)
                ),
            ));
        }
    }
    (out.len() > 1).then_some(out)
}
