//! The build record `annotate` writes beside an annotated file (`STEM_labels.build.json`):
//! where the original file is and the preprocessor flags it was annotated with, so that the
//! annotated file preprocesses and builds the same from any directory without extra flags.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::frontend::PreprocessOptions;

pub const SCHEMA: &str = "covprune-build/1";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub schema: String,
    /// The original file, absolute.
    pub original: PathBuf,
    /// Absolute: the original file's directory first (its local headers), then the user's `-I`.
    pub include_dirs: Vec<PathBuf>,
    pub defines: Vec<String>,
    pub force_includes: Vec<PathBuf>,
    pub std: Option<String>,
    pub cc: Option<String>,
    /// The compilation database the original's flags came from (its entry is looked up).
    pub compile_commands: Option<PathBuf>,
}

/// Where the record of an annotated file lives.
pub fn path_of(annotated: &Path) -> PathBuf {
    annotated.with_extension("build.json")
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    })
}

impl BuildRecord {
    /// The record of `original` preprocessed with `opts` (paths made absolute).
    pub fn new(original: &Path, opts: &PreprocessOptions) -> BuildRecord {
        let original = absolute(original);
        let mut include_dirs = vec![original
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)];
        for d in &opts.include_dirs {
            let d = absolute(d);
            if !include_dirs.contains(&d) {
                include_dirs.push(d);
            }
        }
        BuildRecord {
            schema: SCHEMA.into(),
            original,
            include_dirs,
            defines: opts.defines.clone(),
            force_includes: opts.force_includes.iter().map(|p| absolute(p)).collect(),
            std: opts.std.clone(),
            cc: opts.cc.clone(),
            compile_commands: opts.compile_commands.as_deref().map(absolute),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a build record serialises") + "\n"
    }

    /// The options for the annotated file: the user's flags first (they win), then the
    /// record's.
    pub fn merge_into(&self, user: &PreprocessOptions) -> PreprocessOptions {
        let mut out = user.clone();
        for d in &self.include_dirs {
            if !out.include_dirs.contains(d) {
                out.include_dirs.push(d.clone());
            }
        }
        let mut defines: Vec<String> = Vec::new();
        for d in self.defines.iter().chain(&user.defines) {
            if !defines.contains(d) {
                defines.push(d.clone());
            }
        }
        out.defines = defines;
        let mut force = self.force_includes.clone();
        for f in &user.force_includes {
            if !force.contains(f) {
                force.push(f.clone());
            }
        }
        out.force_includes = force;
        out.std = user.std.clone().or_else(|| self.std.clone());
        out.cc = user.cc.clone().or_else(|| self.cc.clone());
        if out.compile_commands.is_none() {
            out.compile_commands = self.compile_commands.clone();
        }
        out.database_entry = Some(self.original.clone());
        out
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: not a covprune build record ({why}); annotate the file again, or delete it")]
pub struct BuildRecordError {
    pub path: PathBuf,
    pub why: String,
}

/// The record beside `annotated`, if there is one.
pub fn read_beside(annotated: &Path) -> Result<Option<BuildRecord>, BuildRecordError> {
    let path = path_of(annotated);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let bad = |why: String| BuildRecordError {
        path: path.clone(),
        why,
    };
    let record: BuildRecord = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if record.schema != SCHEMA {
        return Err(bad(format!(
            "schema `{}`, expected `{SCHEMA}`",
            record.schema
        )));
    }
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_flags_come_first_and_the_records_follow() {
        let rec = BuildRecord {
            schema: SCHEMA.into(),
            original: "/src/p.c".into(),
            include_dirs: vec!["/src".into()],
            defines: vec!["A=1".into()],
            force_includes: vec![],
            std: Some("gnu89".into()),
            cc: None,
            compile_commands: None,
        };
        let user = PreprocessOptions {
            include_dirs: vec!["/mine".into()],
            std: Some("c99".into()),
            ..PreprocessOptions::default()
        };
        let m = rec.merge_into(&user);
        assert_eq!(
            m.include_dirs,
            vec![PathBuf::from("/mine"), PathBuf::from("/src")]
        );
        assert_eq!(m.std.as_deref(), Some("c99"));
        assert_eq!(m.defines, vec!["A=1".to_string()]);
        assert_eq!(m.database_entry, Some(PathBuf::from("/src/p.c")));
        // Merging twice changes nothing more (workers merge options they were given).
        assert_eq!(rec.merge_into(&m).include_dirs, m.include_dirs);
    }
}
