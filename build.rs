//! Build script: a digest of the prover's own sources (`src/`, `encoders/src/`), so that the
//! verdict cache never reuses a result across builds whose code differs, even when the
//! package version is the same (a development build, a patched install).

use std::path::Path;

use sha2::{Digest, Sha256};

fn add_tree(dir: &Path, h: &mut Sha256) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            add_tree(&p, h);
        } else if let Ok(bytes) = std::fs::read(&p) {
            h.update(p.to_string_lossy().as_bytes());
            h.update([0]);
            h.update(&bytes);
            h.update([0]);
        }
    }
}

fn main() {
    let mut h = Sha256::new();
    for dir in ["src", "encoders/src"] {
        println!("cargo:rerun-if-changed={dir}");
        add_tree(Path::new(dir), &mut h);
    }
    let digest: String = h
        .finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=COVPRUNE_SOURCE_DIGEST={digest}");
}
