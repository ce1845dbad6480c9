//! Tests of the calling contexts' budgets and paths.

use super::*;
use crate::prune::PruneConfig;
use std::time::{Duration, Instant};

fn units_of(config: &PruneConfig) -> u64 {
    copy_budget(config, Instant::now())
        .units
        .expect("a resource limit gives a deterministic budget")
}

#[test]
fn the_copies_budget_is_a_constant_capped_by_the_functions_budget() {
    let mut config = PruneConfig {
        function_budget_s: 120,
        ..PruneConfig::default()
    };
    config.solver.timeout_ms = 2000;
    config.solver.rlimit = 5_000_000;
    let per_ms = config.solver.units_per_ms();
    assert!(per_ms > 0);
    assert_eq!(units_of(&config), COPY_BUDGET_MS * per_ms);
    // A 64th of a small function budget caps it.
    config.function_budget_s = 8;
    assert_eq!(units_of(&config), 125 * per_ms);
    // Without a resource limit, the same milliseconds of wall time.
    config.solver.rlimit = 0;
    let b = copy_budget(&config, Instant::now());
    assert_eq!(b.units, None);
    assert_eq!(b.wall, Some(Duration::from_millis(125)));
}

fn site(caller: &str, stmt: u32) -> CallSite {
    CallSite {
        caller: caller.into(),
        block: 0,
        stmt,
    }
}

#[test]
fn complete_paths_are_every_way_down_from_the_only_entry() {
    // f calls g once and m twice; m calls g.
    let mut sites = BTreeMap::from([
        ("g".to_string(), vec![site("f", 0), site("m", 0)]),
        ("m".to_string(), vec![site("f", 1), site("f", 2)]),
    ]);
    let paths = complete_paths(&sites, "f", "g", MAX_CONTEXT_DEPTH).unwrap();
    assert_eq!(paths.len(), 3);
    assert!(paths.contains(&vec![site("f", 2), site("m", 0)]));
    // Deeper than allowed.
    assert!(complete_paths(&sites, "f", "g", 1).is_none());
    // Another entry (e, whose callers are unknown) also calls m.
    sites.get_mut("m").unwrap().push(site("e", 0));
    assert!(complete_paths(&sites, "f", "g", MAX_CONTEXT_DEPTH).is_none());
    // Recursion through g.
    let recursive = BTreeMap::from([("g".to_string(), vec![site("f", 0), site("g", 3)])]);
    assert!(complete_paths(&recursive, "f", "g", MAX_CONTEXT_DEPTH).is_none());
}
