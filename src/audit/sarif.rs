//! The audit's SARIF 2.1.0 findings: dead code, constant conditions and equivalent mutants,
//! each proved.

use super::*;

/// SARIF 2.1.0 with the actionable findings only: an infeasible STMT label (dead code), an
/// infeasible DC/CC label (a condition that cannot take a value), an infeasible WM label (an
/// equivalent mutant). `origin` gives each label's (relative file, line).
/// `root` is the directory the origins' relative file names start from (`SRCROOT`).
pub fn sarif(
    rows: &[Row],
    origin: &BTreeMap<u64, (String, usize)>,
    root: &std::path::Path,
    version: &str,
) -> serde_json::Value {
    let rules = [
        ("covprune/dead-code", "Code no input reaches", "A statement-coverage objective is proved unreachable: the code after it is dead."),
        ("covprune/constant-condition", "Condition that cannot take a value", "A decision or condition is proved never to take this truth value: it is constant where it is evaluated."),
        ("covprune/equivalent-mutant", "Equivalent mutant", "No input distinguishes this mutant from the original: the mutation testing objective is infeasible."),
    ];
    let mut results = Vec::new();
    // Results with the same function, tag and predicate (one predicate at two places) get
    // their rank among those, by line, in the fingerprint: one fingerprint per result.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut infeasible: Vec<(&Row, &(String, usize), usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.status == Status::Infeasible) {
        let rule = match Criterion::of_tag(r.criterion()).map(Criterion::objective) {
            Some(Objective::Block) => 0,
            Some(Objective::DecisionOutcome | Objective::ConditionOutcome | Objective::Outcome) => {
                1
            }
            Some(Objective::Mutant) => 2,
            Some(Objective::Other) | None => continue,
        };
        if let Some(at) = origin.get(&r.id) {
            infeasible.push((r, at, rule));
        }
    }
    infeasible.sort_by(|a, b| (a.1, a.0.id).cmp(&(b.1, b.0.id)));
    for (r, (file, line), rule) in infeasible {
        let key = format!("{}\u{0}{}\u{0}{}", r.function, r.tag, r.predicate);
        let rank = seen.entry(key.clone()).or_insert(0);
        let base = if *rank == 0 {
            key
        } else {
            format!("{key}\u{0}{rank}")
        };
        *rank += 1;
        let fingerprint = crate::prune::journal::fingerprint(base.as_bytes(), rules[rule].0);
        let location = sarif_location(file);
        results.push(serde_json::json!({
            "ruleId": rules[rule].0,
            "ruleIndex": rule,
            "level": if rule == 2 { "note" } else { "warning" },
            "message": {"text": format!("l{} ({}) `{}` is infeasible in {}", r.id, r.tag, r.predicate, r.function)},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": {"startLine": (*line).max(1)}
            }}],
            "partialFingerprints": {"covpruneLabel/v1": fingerprint},
        }));
    }
    sarif_log(root, version, &rules, results)
}

/// A SARIF artifact location: a `file://` URI, or a name relative to `SRCROOT`.
pub fn sarif_location(file: &str) -> serde_json::Value {
    if std::path::Path::new(file).is_absolute() {
        serde_json::json!({"uri": file_uri(std::path::Path::new(file))})
    } else {
        serde_json::json!({"uri": encode_uri_path(file), "uriBaseId": "SRCROOT"})
    }
}

/// A SARIF 2.1.0 log of covprune's run: its rules (id, name, description) and results.
pub fn sarif_log(
    root: &std::path::Path,
    version: &str,
    rules: &[(&str, &str, &str)],
    results: Vec<serde_json::Value>,
) -> serde_json::Value {
    let mut root_uri = file_uri(root);
    if !root_uri.ends_with('/') {
        root_uri.push('/');
    }
    serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "covprune",
                "version": version,
                "informationUri": "https://example.invalid/covprune",
                "rules": rules.iter().map(|(id, name, text)| serde_json::json!({
                    "id": id,
                    "name": name.replace(' ', ""),
                    "shortDescription": {"text": name},
                    "fullDescription": {"text": text},
                })).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": root_uri}},
            "results": results,
        }]
    })
}

/// A path's characters as a URI path: unreserved characters and `/` kept, every other byte
/// percent-encoded (RFC 3986).
pub fn encode_uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `file://` URI of an absolute path.
pub(super) fn file_uri(path: &std::path::Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    format!("file://{}", encode_uri_path(&text))
}
