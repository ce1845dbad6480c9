//! The build of a whole project under test (`project measure`): a copy of the sources' tree
//! with every annotated file in its original's place, its label ids moved to a range of their
//! own; compiler wrappers that put the recording runtime into every compile and link the
//! project's own build does; and test commands run in that tree, each with its record.
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

use super::{runtime, MeasureError, RunOutcome, TestRun};

/// One annotated file to put in the tree.
#[derive(Clone, Debug)]
pub struct PlacedFile {
    /// Its original's path relative to the tree's root.
    pub rel: PathBuf,
    /// The annotated copy.
    pub annotated: PathBuf,
    /// Added to its label ids in the program: label `id` records as `base + id`.
    pub base: u64,
}

/// A staged build: the tree, the wrappers' directory and the scratch directory of records.
#[derive(Clone, Debug)]
pub struct StagedTree {
    pub tree: PathBuf,
    pub bin: PathBuf,
    /// The wrapper `$CC` names.
    pub cc: PathBuf,
    work: PathBuf,
}

/// What one test command did.
#[derive(Clone, Debug)]
pub struct CommandRun {
    pub run: TestRun,
    pub seconds: f64,
    /// Its standard output and error, both, in one file.
    pub log: PathBuf,
}

/// The compiler names that get a wrapper (each found on `PATH`), besides `cc_name`.
const COMPILER_NAMES: [&str; 3] = ["cc", "gcc", "clang"];

/// Copies `root` into `work/tree` (timestamps kept, so that the build does not remake what it
/// need not, `.git` and the directories of `skip` left out), writes each annotated file over
/// its original, and writes the runtime and the compiler wrappers into `work/covprune`.
/// `cc_name` is the compiler `$CC` names (a name on `PATH` or a path).
pub fn stage(
    root: &Path,
    skip: &[PathBuf],
    files: &[PlacedFile],
    cc_name: &str,
    work: &Path,
) -> Result<StagedTree, MeasureError> {
    let tree = work.join("tree");
    let skip: Vec<PathBuf> = skip
        .iter()
        .chain(std::iter::once(&work.to_path_buf()))
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect();
    copy_tree(root, &tree, &skip)?;
    for f in files {
        let text = std::fs::read(&f.annotated)?;
        let mut out = format!(
            "#undef COVPRUNE_LABEL_BASE\n#define COVPRUNE_LABEL_BASE {}L\n#line 1\n",
            f.base
        )
        .into_bytes();
        out.extend_from_slice(&text);
        let dest = tree.join(&f.rel);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // A new file, not a write through: the original may be a hard or symbolic link.
        let _ = std::fs::remove_file(&dest);
        std::fs::write(&dest, out)?;
    }
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
    Ok(StagedTree {
        tree,
        cc: bin.join(&cc_base),
        bin,
        work: work.to_path_buf(),
    })
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

/// `s` as one word of `/bin/sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A compiler wrapper: the real compiler with the runtime's header included in every
/// translation unit, and the runtime's object added to every link (a command that only
/// compiles, preprocesses or asks the compiler about itself links nothing).
fn write_wrapper(path: &Path, real: &Path, header: &Path, object: &Path) -> std::io::Result<()> {
    let (real, header, object) = (
        sh_quote(&real.display().to_string()),
        sh_quote(&header.display().to_string()),
        sh_quote(&object.display().to_string()),
    );
    let script = format!(
        "#!/bin/sh\n\
         # Written by covprune project measure: the compiler, with the recording runtime.\n\
         for a in \"$@\"; do\n\
         \x20 case \"$a\" in\n\
         \x20   -c|-S|-E|-M|-MM|-v|--version|-dumpversion|-dumpmachine|-dumpspecs|-print-*|--print-*)\n\
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

/// Copies a tree, keeping modification times and symbolic links, leaving out `.git` and the
/// directories of `skip`.
fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf]) -> std::io::Result<()> {
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
            if e.file_name() == ".git" || skip.contains(&canonical) {
                continue;
            }
            copy_tree(&path, &dest, skip)?;
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
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(staged.bin.clone()).chain(std::env::split_paths(&path)),
    )
    .map_err(std::io::Error::other)?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("PATH", path)
        .env("CC", &staged.cc)
        .env("COVPRUNE_RECORD", &record)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone()?))
        .stderr(Stdio::from(out));
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let outcome = loop {
        if let Some(status) = child.try_wait()? {
            break match status.code() {
                Some(c) => RunOutcome::Exited(c),
                None => RunOutcome::Crashed(super::signal_name(&status)),
            };
        }
        if start.elapsed() > timeout {
            // The group: a build's and a test harness's children die with the shell.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break RunOutcome::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let seconds = start.elapsed().as_secs_f64();
    let recorded = runtime::parse_record(&std::fs::read_to_string(&record).unwrap_or_default());
    Ok(CommandRun {
        run: TestRun {
            name: command.to_string(),
            outcome,
            reached: recorded.reached,
            covered: recorded.covered,
            crashed_in_label: recorded.crashed_in,
        },
        seconds,
        log,
    })
}

/// The last `n` lines of a file (what a failed build or test said last).
pub fn tail(path: &Path, n: usize) -> String {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
