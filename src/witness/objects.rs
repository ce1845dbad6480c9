//! The code of a project that a witness runner links with: every C file of the compilation
//! database compiled to an object in a scratch directory (never where the build put its own),
//! with its entry's preprocessing flags, and for each file under test an archive of the others'
//! objects. The linker takes from an archive only the members that define what the runner
//! still lacks, so a test program's `main`, or a second build of a file (static and shared),
//! comes in only if something calls into it.

use std::path::{Path, PathBuf};
use std::process::Command;

use rayon::prelude::*;

/// One file of a compilation database: where it is, the folder its command runs in, its
/// preprocessing flags (paths absolute) and its link flags.
#[derive(Clone, Debug)]
pub struct Unit {
    pub file: PathBuf,
    pub dir: PathBuf,
    pub flags: Vec<String>,
    pub link: Vec<String>,
}

/// The objects of a project's files.
#[derive(Debug, Default)]
pub struct ProjectObjects {
    /// Each compiled entry's file (absolute) and object.
    pub objects: Vec<(PathBuf, PathBuf)>,
    /// The entries that did not compile here, with the compiler's first error line.
    pub failed: Vec<(PathBuf, String)>,
    /// The link flags the entries carry (`-l`, `-L`, `-pthread`), each once, in order.
    pub link: Vec<String>,
}

/// Compiles every unit into `work/objects` with `cc`, as the runner is
/// built ([`super::SANITIZED`]: no optimisation, debug information, the sanitizers, so that a
/// call into another file stops at its first fault too; warnings off, a project's `-Werror`
/// is for its own build).
pub fn compile(cc: &str, units: &[Unit], work: &Path) -> std::io::Result<ProjectObjects> {
    let dir = work.join("objects");
    std::fs::create_dir_all(&dir)?;
    let numbered: Vec<(usize, &Unit)> = units.iter().enumerate().collect();
    let results: Vec<(PathBuf, Result<PathBuf, String>, Vec<String>)> = numbered
        .par_iter()
        .map(|(k, e)| {
            let object = dir.join(format!("{k}.o"));
            let out = Command::new(cc)
                .args(super::SANITIZED)
                .arg("-c")
                .args(&e.flags)
                .arg(&e.file)
                .arg("-o")
                .arg(&object)
                .current_dir(&e.dir)
                .output();
            let result = match out {
                Ok(o) if o.status.success() => Ok(object),
                Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or("the compiler failed")
                    .trim()
                    .to_string()),
                Err(e) => Err(format!("{cc}: {e}")),
            };
            (e.file.clone(), result, e.link.clone())
        })
        .collect();
    let mut objects = ProjectObjects::default();
    for (file, result, link) in results {
        match result {
            Ok(object) => objects.objects.push((file, object)),
            Err(why) => objects.failed.push((file, why)),
        }
        for l in link {
            if !objects.link.contains(&l) {
                objects.link.push(l);
            }
        }
    }
    Ok(objects)
}

impl ProjectObjects {
    /// An archive at `path` of every object but those of `file` (its own code is the
    /// annotated copy the runner includes); `None` when there is no other object.
    pub fn archive_without(&self, file: &Path, path: &Path) -> std::io::Result<Option<PathBuf>> {
        let members: Vec<&PathBuf> = self
            .objects
            .iter()
            .filter(|(f, _)| f != file)
            .map(|(_, o)| o)
            .collect();
        if members.is_empty() {
            return Ok(None);
        }
        let _ = std::fs::remove_file(path);
        let out = Command::new("ar")
            .arg("rcs")
            .arg(path)
            .args(&members)
            .output()?;
        if !out.status.success() {
            return Err(std::io::Error::other(format!(
                "ar: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(Some(path.to_path_buf()))
    }
}
