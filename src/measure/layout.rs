//! How a project is built, read from its build directory (the compilation database's), and
//! how `project measure` builds it again without touching it: the sources copied with the
//! annotated files in place, and a build directory of its own configured afresh with the
//! recording compiler (CMake, Meson, autotools), or, for a tree built in place by plain
//! makefiles, the tree copied as it is.
//!
//! A generated build directory holds absolute paths to the sources and to itself: copied, it
//! would compile the originals and write into the user's build directory. Configured again in
//! the copy, it holds only the copy's paths.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::MeasureError;

/// The build system of a project, as its build directory shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// CMake: the build directory holds `CMakeCache.txt`.
    CMake {
        source: PathBuf,
        /// The generator, the build type and the project's own cache entries (`-D` options).
        generator: Option<String>,
        defines: Vec<String>,
    },
    /// Meson: the build directory holds `meson-info/meson-info.json`.
    Meson { source: PathBuf },
    /// Autotools: the build directory holds `config.status`; configured again with the
    /// arguments it records.
    Autotools { source: PathBuf, args: String },
    /// Anything else (plain makefiles, scripts): the tree holding the sources and the build
    /// directory, copied as it is.
    InPlace,
}

impl Layout {
    /// The layout of the build whose compilation database is in `db_dir`, for sources under
    /// `root`.
    pub fn detect(db_dir: &Path) -> Layout {
        if let Ok(cache) = std::fs::read_to_string(db_dir.join("CMakeCache.txt")) {
            if let Some(layout) = cmake_layout(&cache) {
                return layout;
            }
        }
        if let Ok(info) = std::fs::read_to_string(db_dir.join("meson-info/meson-info.json")) {
            let source = serde_json::from_str::<serde_json::Value>(&info)
                .ok()
                .and_then(|v| v["directories"]["source"].as_str().map(PathBuf::from));
            if let Some(source) = source {
                return Layout::Meson { source };
            }
        }
        if db_dir.join("config.status").is_file() {
            let args = Command::new("./config.status")
                .arg("--config")
                .current_dir(db_dir)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
            let source = configure_dir(db_dir);
            if let (Some(args), Some(source)) = (args, source) {
                return Layout::Autotools { source, args };
            }
        }
        Layout::InPlace
    }

    /// The sources' directory a fresh configure starts from (None: copied in place).
    pub fn source(&self) -> Option<&Path> {
        match self {
            Layout::CMake { source, .. }
            | Layout::Meson { source }
            | Layout::Autotools { source, .. } => Some(source),
            Layout::InPlace => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Layout::CMake { .. } => "CMake",
            Layout::Meson { .. } => "Meson",
            Layout::Autotools { .. } => "autotools",
            Layout::InPlace => "in place",
        }
    }

    /// Configures a build of the copied sources `tree` in `build` (new, empty, or `tree`
    /// itself for autotools built in the source directory) with `cc`, the recording compiler;
    /// its output goes to `log`.
    pub fn configure(
        &self,
        tree: &Path,
        build: &Path,
        cc: &Path,
        log: &Path,
    ) -> Result<(), MeasureError> {
        let mut cmd = match self {
            Layout::CMake {
                generator, defines, ..
            } => {
                let mut c = Command::new("cmake");
                c.arg("-S").arg(tree).arg("-B").arg(build);
                if let Some(g) = generator {
                    c.arg("-G").arg(g);
                }
                c.args(defines);
                c.arg(format!("-DCMAKE_C_COMPILER={}", cc.display()));
                c
            }
            Layout::Meson { .. } => {
                let mut c = Command::new("meson");
                c.arg("setup").arg(build).arg(tree);
                c
            }
            Layout::Autotools { args, .. } => {
                // The recorded arguments are shell words; the compiler named last wins.
                let mut c = Command::new("/bin/sh");
                c.arg("-c")
                    .arg(format!(
                        "{} {args} CC={}",
                        super::shell::sh_quote(&tree.join("configure").display().to_string()),
                        super::shell::sh_quote(&cc.display().to_string())
                    ))
                    .current_dir(build);
                c
            }
            Layout::InPlace => return Ok(()),
        };
        std::fs::create_dir_all(build)?;
        let out = std::fs::File::create(log)?;
        let status = cmd
            .env("CC", cc)
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .status()
            .map_err(|e| {
                MeasureError::Build(format!(
                    "cannot run the {} configure step: {e}",
                    self.name()
                ))
            })?;
        if !status.success() {
            return Err(MeasureError::Build(format!(
                "the {} configure step of the copy failed ({status}); its last lines:\n{}",
                self.name(),
                super::shell::tail(log, 15)
            )));
        }
        Ok(())
    }
}

/// The source directory, generator and `-D` options of a CMake cache. The options kept are
/// the project's own entries and the build type, not those CMake computes; an entry whose value
/// names the old source or build directory is left out.
fn cmake_layout(cache: &str) -> Option<Layout> {
    let mut source = None;
    let mut generator = None;
    let mut build_dir = None;
    let mut entries = Vec::new();
    for line in cache.lines() {
        if line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let Some((name, ty)) = key.split_once(':') else {
            continue;
        };
        match name {
            "CMAKE_HOME_DIRECTORY" => source = Some(PathBuf::from(value)),
            "CMAKE_GENERATOR" => generator = Some(value.to_string()),
            "CMAKE_CACHEFILE_DIR" => build_dir = Some(value.to_string()),
            _ => entries.push((name.to_string(), ty.to_string(), value.to_string())),
        }
    }
    let source = source?;
    let src_text = source.display().to_string();
    let keep = |(name, ty, value): &(String, String, String)| {
        let own = !name.starts_with("CMAKE_") && !name.contains("_BINARY_DIR")
            || name == "CMAKE_BUILD_TYPE"
            || name == "CMAKE_C_FLAGS";
        let plain = matches!(ty.as_str(), "BOOL" | "STRING");
        let elsewhere = value.contains(&src_text)
            || build_dir
                .as_ref()
                .is_some_and(|b| value.contains(b.as_str()));
        own && plain && !elsewhere && !value.is_empty()
    };
    let defines = entries
        .iter()
        .filter(|e| keep(e))
        .map(|(name, ty, value)| format!("-D{name}:{ty}={value}"))
        .collect();
    Some(Layout::CMake {
        source,
        generator,
        defines,
    })
}

/// The directory holding the `configure` script an autotools build directory was configured
/// with (`srcdir` of its `Makefile`, relative to it or absolute).
fn configure_dir(db_dir: &Path) -> Option<PathBuf> {
    let makefile = std::fs::read_to_string(db_dir.join("Makefile")).ok()?;
    let srcdir = makefile.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "srcdir").then(|| v.trim().to_string())
    })?;
    let dir = db_dir.join(srcdir);
    let dir = dir.canonicalize().unwrap_or(dir);
    dir.join("configure").is_file().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cmake_cache_gives_its_source_generator_and_the_projects_options() {
        let cache = "# comment\n\
            //Build type\n\
            CMAKE_BUILD_TYPE:STRING=Debug\n\
            CMAKE_HOME_DIRECTORY:INTERNAL=/home/u/lib\n\
            CMAKE_GENERATOR:INTERNAL=Unix Makefiles\n\
            CMAKE_CACHEFILE_DIR:INTERNAL=/home/u/lib/build\n\
            CMAKE_C_COMPILER:FILEPATH=/usr/bin/cc\n\
            LIB_WITH_TESTS:BOOL=ON\n\
            LIB_DATA:STRING=/home/u/lib/data\n\
            lib_BINARY_DIR:STATIC=/home/u/lib/build\n";
        assert_eq!(
            cmake_layout(cache),
            Some(Layout::CMake {
                source: PathBuf::from("/home/u/lib"),
                generator: Some("Unix Makefiles".into()),
                defines: vec![
                    "-DCMAKE_BUILD_TYPE:STRING=Debug".into(),
                    "-DLIB_WITH_TESTS:BOOL=ON".into()
                ],
            })
        );
        assert_eq!(cmake_layout("FOO:BOOL=ON\n"), None);
    }
}
