//! LTest's `.labels` side file (8 comma-separated columns; extra columns kept): reading with
//! line-numbered errors, and atomic writing.

use std::path::{Path, PathBuf};

/// `# id, status, tag, origin_loc, current_loc, emitter, drivers, exec_time`
pub const COLUMNS: &str = "# id, status, tag, origin_loc, current_loc, emitter, drivers, exec_time";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRow {
    pub id: u64,
    pub status: String,
    pub tag: String,
    pub origin_loc: String,
    pub current_loc: String,
    pub emitter: String,
    pub drivers: String,
    pub exec_time: String,
    /// Columns after the eighth (covprune writes `duplicate-of:` / `subsumed-by:` there).
    pub extra: Vec<String>,
}

impl LabelRow {
    /// Whether a `measure` run recorded coverage in this row (covered, or covering tests).
    pub fn is_measured(&self) -> bool {
        self.status == "covered" || !self.drivers.trim().is_empty()
    }

    /// A row covprune writes for a label the file did not list.
    pub fn unknown(id: u64, tag: &str, origin_loc: &str) -> LabelRow {
        LabelRow {
            id,
            status: "unknown".into(),
            tag: tag.to_string(),
            origin_loc: origin_loc.to_string(),
            current_loc: String::new(),
            emitter: "covprune".into(),
            drivers: String::new(),
            exec_time: "0.".into(),
            extra: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelsFile {
    pub rows: Vec<LabelRow>,
}

#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Statuses LTest's tools accept.
const STATUSES: &[&str] = &["unknown", "covered", "uncoverable", "unreachable"];

pub fn read(path: &Path) -> Result<LabelsFile, LabelsError> {
    let text = std::fs::read_to_string(path).map_err(|e| LabelsError::Read {
        path: path.to_path_buf(),
        source: e,
    })?;
    parse(&text, path)
}

pub fn parse(text: &str, path: &Path) -> Result<LabelsFile, LabelsError> {
    let bad = |line: usize, message: String| LabelsError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut rows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<String> = line.split(',').map(|c| c.trim().to_string()).collect();
        if cols.len() < 8 {
            return Err(bad(
                i + 1,
                format!(
                    "expected 8 comma-separated columns ({COLUMNS}), found {}",
                    cols.len()
                ),
            ));
        }
        let id: u64 = cols[0]
            .parse()
            .map_err(|_| bad(i + 1, format!("label id `{}` is not a number", cols[0])))?;
        if !seen.insert(id) {
            return Err(bad(i + 1, format!("label id {id} appears twice")));
        }
        if !STATUSES.contains(&cols[1].as_str()) {
            return Err(bad(
                i + 1,
                format!(
                    "unknown status `{}` (expected one of {})",
                    cols[1],
                    STATUSES.join(", ")
                ),
            ));
        }
        rows.push(LabelRow {
            id,
            status: cols[1].clone(),
            tag: cols[2].clone(),
            origin_loc: cols[3].clone(),
            current_loc: cols[4].clone(),
            emitter: cols[5].clone(),
            drivers: cols[6].clone(),
            exec_time: cols[7].clone(),
            extra: cols[8..].to_vec(),
        });
    }
    Ok(LabelsFile { rows })
}

impl LabelsFile {
    pub fn row_mut(&mut self, id: u64) -> Option<&mut LabelRow> {
        self.rows.iter_mut().find(|r| r.id == id)
    }

    pub fn to_text(&self) -> String {
        let mut out = String::from("# covprune-updated coverage data\n");
        out.push_str(COLUMNS);
        out.push('\n');
        for r in &self.rows {
            let mut cols = vec![
                r.id.to_string(),
                r.status.clone(),
                r.tag.clone(),
                r.origin_loc.clone(),
                r.current_loc.clone(),
                r.emitter.clone(),
                r.drivers.clone(),
                r.exec_time.clone(),
            ];
            cols.extend(r.extra.iter().cloned());
            out.push_str(&cols.join(", "));
            out.push('\n');
        }
        out
    }
}

/// Writes `text` to `path` through a temporary file and a rename, so that readers never see a
/// half-written file and a crash leaves the old one intact.
pub fn write_atomic(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

impl LabelsFile {
    /// Records a prune run's verdicts: a row per label (added when missing), `uncoverable`
    /// for the infeasible ones with where they are now (`file_name:LINE`), and each label's
    /// pollution in the first extra column; rows sorted by id. The proof's time is written
    /// with `timings` only, so that outputs are reproducible.
    pub fn record_verdicts(
        &mut self,
        verdicts: &[crate::prune::LabelVerdict],
        file_name: &str,
        timings: bool,
    ) {
        // Rows by id (files of a million labels: no linear search per label).
        let mut row_of: std::collections::HashMap<u64, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id, i))
            .collect();
        for v in verdicts {
            let current = if v.loc.line > 0 {
                format!("{file_name}:{}", v.loc.line)
            } else {
                String::new()
            };
            let i = *row_of.entry(v.id).or_insert_with(|| {
                self.rows.push(LabelRow::unknown(v.id, &v.tag, &current));
                self.rows.len() - 1
            });
            let row = &mut self.rows[i];
            if v.status == crate::prune::Status::Infeasible {
                row.status = "uncoverable".into();
                row.emitter = "covprune".into();
                row.current_loc = current;
                // Times differ run to run: only with --timings, so that outputs are reproducible.
                row.exec_time = if timings {
                    format!("{:.3}", v.time_ms as f64 / 1000.0)
                } else {
                    "0.".into()
                };
            }
            let col = crate::report::ledger::pollution_column(&v.status);
            if row.extra.is_empty() {
                row.extra.push(col);
            } else {
                row.extra[0] = col;
            }
        }
        self.rows.sort_by_key(|r| r.id);
    }
}

impl LabelsFile {
    /// Checks the rows against the program: every label of the program must have its row, of
    /// the same criterion. Returns the rows the compiled program lacks (in code the
    /// preprocessor dropped or in functions that were not lowered: they stay unknown).
    pub fn check_against(&self, program: &crate::ir::Program) -> Result<Vec<u64>, String> {
        use std::collections::{BTreeMap, BTreeSet};
        let ir_ids: BTreeSet<u64> = program.label_ids().collect();
        let file_ids: BTreeSet<u64> = self.rows.iter().map(|r| r.id).collect();
        if let Some(missing) = ir_ids.difference(&file_ids).next() {
            return Err(format!("l{missing} of the program is missing from it"));
        }
        let tags: BTreeMap<u64, &str> = self.rows.iter().map(|r| (r.id, r.tag.as_str())).collect();
        for f in &program.functions {
            for (_, s) in f.labels() {
                if let crate::ir::StmtKind::Label { id, tag, .. } = &s.kind {
                    if let Some(t) = tags.get(id).filter(|t| **t != tag.as_str()) {
                        return Err(format!(
                            "l{id} is {tag} in the program but {t} in the labels file (annotate again rather than edit it)"
                        ));
                    }
                }
            }
        }
        Ok(file_ids.difference(&ir_ids).copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ltest_rows_and_keeps_extra_columns() {
        let text = "# id, status, tag, origin_loc, current_loc, emitter, drivers, exec_time\n\
                    1, unknown, CC, sample.c:5, , LAnnot, , 0.\n\
                    2, covered, CC, sample.c:5, sample_CC.c:17, LReplay, 1 2 3, 0., extra\n";
        let f = parse(text, Path::new("x.labels")).unwrap();
        assert_eq!(f.rows.len(), 2);
        assert_eq!(f.rows[1].drivers, "1 2 3");
        assert_eq!(f.rows[1].extra, vec!["extra".to_string()]);
    }

    #[test]
    fn malformed_rows_name_the_line() {
        let err = parse("1, unknown, CC\n", Path::new("x.labels")).unwrap_err();
        assert!(err.to_string().starts_with("x.labels:1:"), "{err}");
        let err = parse("1, maybe, CC, a, b, c, d, e\n", Path::new("x.labels")).unwrap_err();
        assert!(err.to_string().contains("unknown status"), "{err}");
        let err = parse("x, unknown, CC, a, b, c, d, e\n", Path::new("y.labels")).unwrap_err();
        assert!(err.to_string().contains("not a number"), "{err}");
    }
}
