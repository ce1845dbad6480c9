//! The verdict cache: each function's proof results kept in an SQLite database (through
//! rusqlite, the only module that uses it), keyed by the digests of
//! [`crate::prune::cache_key`]. A key holds the tool's version and everything a result depends
//! on, so a stored result is reused only where proving again would give it; nothing is ever
//! trusted across versions or options.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::prune::FunctionResult;

/// The database's file name inside the cache directory.
pub const FILE_NAME: &str = "verdicts.sqlite";
/// The environment variable that names the default cache directory.
pub const DIR_ENV: &str = "COVPRUNE_CACHE_DIR";

#[derive(Debug, thiserror::Error)]
#[error("the verdict cache {path}: {message}")]
pub struct CacheError {
    pub path: String,
    pub message: String,
}

/// An open verdict cache.
pub struct VerdictCache {
    conn: Connection,
    path: PathBuf,
}

/// What `covprune cache stats` reports.
#[derive(Debug, Serialize)]
pub struct CacheStats {
    pub path: String,
    /// Stored function results.
    pub entries: u64,
    /// Distinct function names among them.
    pub functions: u64,
    /// The database file's size.
    pub bytes: u64,
    /// Results reused and results proved, over every run since the cache was made or cleared.
    pub hits: u64,
    pub misses: u64,
}

impl CacheStats {
    pub fn to_text(&self) -> String {
        format!(
            "{}\n{} results of {} functions, {} bytes; {} reused and {} proved since it was made\n",
            self.path, self.entries, self.functions, self.bytes, self.hits, self.misses
        )
    }
}

fn cache_error(path: &Path, e: &dyn std::fmt::Display) -> CacheError {
    CacheError {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The cache directory when none is given: `$COVPRUNE_CACHE_DIR`, else `$XDG_CACHE_HOME/covprune`,
/// else `~/.cache/covprune`, else `.covprune-cache` in the working directory.
pub fn default_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var(DIR_ENV) {
        return PathBuf::from(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("covprune");
    }
    if let Some(h) = var("HOME") {
        return PathBuf::from(h).join(".cache").join("covprune");
    }
    PathBuf::from(".covprune-cache")
}

impl VerdictCache {
    /// Opens (creating it if need be) the cache in directory `dir`.
    pub fn open(dir: &Path) -> Result<VerdictCache, CacheError> {
        let path = dir.join(FILE_NAME);
        let fail = |e: &dyn std::fmt::Display| cache_error(&path, e);
        std::fs::create_dir_all(dir)
            .map_err(|e| fail(&format!("cannot create {}: {e}", dir.display())))?;
        let conn = Connection::open(&path).map_err(|e| fail(&e))?;
        // Several runs may share a cache (CI jobs, shards): wait for a writer instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(60))
            .map_err(|e| fail(&e))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS verdicts (
                 key TEXT PRIMARY KEY,
                 function TEXT NOT NULL,
                 version TEXT NOT NULL,
                 result TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS counters (
                 name TEXT PRIMARY KEY,
                 value INTEGER NOT NULL
             );",
        )
        .map_err(|e| fail(&format!("not a covprune cache? {e}")))?;
        Ok(VerdictCache { conn, path })
    }

    fn fail(&self, e: impl std::fmt::Display) -> CacheError {
        cache_error(&self.path, &e)
    }

    /// The result stored under `key` for `function`, if any. A row that does not read back (a
    /// result of another format) is a miss.
    pub fn get(&self, key: &str, function: &str) -> Result<Option<FunctionResult>, CacheError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT result FROM verdicts WHERE key = ?1 AND function = ?2",
                params![key, function],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        Ok(text
            .and_then(|t| serde_json::from_str::<FunctionResult>(&t).ok())
            .filter(|r| r.function == function))
    }

    /// Stores results under their keys, in one transaction.
    pub fn put_all(&mut self, entries: &[(&str, &FunctionResult)]) -> Result<(), CacheError> {
        // The transaction borrows the connection: errors name the path field alone.
        let path = &self.path;
        let fail = |e: &dyn std::fmt::Display| cache_error(path, e);
        let tx = self.conn.transaction().map_err(|e| fail(&e))?;
        {
            let mut stmt = tx
                .prepare(
                    "INSERT OR REPLACE INTO verdicts (key, function, version, result)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(|e| fail(&e))?;
            for (key, result) in entries {
                let text = serde_json::to_string(result).map_err(|e| fail(&e))?;
                stmt.execute(params![
                    key,
                    result.function,
                    env!("CARGO_PKG_VERSION"),
                    text
                ])
                .map_err(|e| fail(&e))?;
            }
        }
        tx.commit().map_err(|e| fail(&e))
    }

    /// Adds a run's reused and proved counts to the cache's counters.
    pub fn count_use(&self, hits: u64, misses: u64) -> Result<(), CacheError> {
        for (name, n) in [("hits", hits), ("misses", misses)] {
            self.conn
                .execute(
                    "INSERT INTO counters (name, value) VALUES (?1, ?2)
                     ON CONFLICT(name) DO UPDATE SET value = value + ?2",
                    params![name, n as i64],
                )
                .map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    pub fn stats(&self) -> Result<CacheStats, CacheError> {
        let count = |sql: &str| -> Result<u64, CacheError> {
            self.conn
                .query_row(sql, [], |row| row.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
                .map_err(|e| self.fail(e))
        };
        let counter = |name: &str| -> Result<u64, CacheError> {
            self.conn
                .query_row(
                    "SELECT value FROM counters WHERE name = ?1",
                    params![name],
                    |row| row.get::<_, i64>(0),
                )
                .optional()
                .map(|n| n.unwrap_or(0).max(0) as u64)
                .map_err(|e| self.fail(e))
        };
        Ok(CacheStats {
            path: self.path.display().to_string(),
            entries: count("SELECT COUNT(*) FROM verdicts")?,
            functions: count("SELECT COUNT(DISTINCT function) FROM verdicts")?,
            bytes: std::fs::metadata(&self.path).map_or(0, |m| m.len()),
            hits: counter("hits")?,
            misses: counter("misses")?,
        })
    }

    /// Removes every stored result and the counters; returns how many results there were.
    pub fn clear(&self) -> Result<u64, CacheError> {
        let n = self
            .conn
            .execute("DELETE FROM verdicts", [])
            .map_err(|e| self.fail(e))?;
        self.conn
            .execute("DELETE FROM counters", [])
            .map_err(|e| self.fail(e))?;
        self.conn
            .execute_batch("VACUUM")
            .map_err(|e| self.fail(e))?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str) -> FunctionResult {
        FunctionResult {
            function: name.into(),
            occurrences: Vec::new(),
            context_infeasible: [3, 4].into(),
            groups: Vec::new(),
            copies: Vec::new(),
            run_implications: Default::default(),
            run_infeasible: Default::default(),
            call_sites: Default::default(),
            witnessed: None,
            stats: Default::default(),
        }
    }

    #[test]
    fn results_come_back_under_their_key_and_function_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = VerdictCache::open(dir.path()).unwrap();
        c.put_all(&[("k1", &result("f")), ("k2", &result("g"))])
            .unwrap();
        let back = c.get("k1", "f").unwrap().unwrap();
        assert_eq!(back.context_infeasible, [3, 4].into());
        assert!(
            c.get("k1", "g").unwrap().is_none(),
            "a key of another function"
        );
        assert!(c.get("k3", "f").unwrap().is_none());
        c.count_use(1, 2).unwrap();
        c.count_use(1, 0).unwrap();
        // A second connection sees what the first stored.
        let s = VerdictCache::open(dir.path()).unwrap().stats().unwrap();
        assert_eq!((s.entries, s.functions, s.hits, s.misses), (2, 2, 2, 2));
        assert_eq!(c.clear().unwrap(), 2);
        let s = c.stats().unwrap();
        assert_eq!((s.entries, s.hits), (0, 0));
    }

    #[test]
    fn a_file_that_is_not_a_cache_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            "not a database, just text\n".repeat(50),
        )
        .unwrap();
        assert!(VerdictCache::open(dir.path()).is_err());
    }
}
