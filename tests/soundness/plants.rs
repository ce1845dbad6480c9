//! Planted faults in the claim paths, each caught by the harness that reaches its path: a
//! path no plant reaches has no test of its soundness. (The alias-blind and escape-blind
//! encodings, unproved loop facts and calls blind to their own writes have theirs beside
//! their harnesses.)

use super::*;

/// The exposure rule without its analysis of what runs before a call: locals whose address
/// outside code kept (`ext_keep(q)`) keep their bytes across its later calls.
#[test]
fn the_memory_harness_catches_an_exposure_rule_blind_to_what_ran_before() {
    let mut config = harness_config();
    config.encode.plants.exposure_blind = true;
    let caught = first_seed_with_a_false_claim(&config, "expb", |t| t.contains("ext_keep(q)"));
    assert!(
        caught.is_some(),
        "no false claim found with an exposure rule blind to what ran before, in 120 memory programs"
    );
}

/// Floating-point ranges that take a box they leave undecided as refuted.
#[test]
fn the_float_harness_catches_ranges_that_take_undecided_boxes_as_refuted() {
    let mut config = harness_config();
    config.solver.timeout_ms = 2_000;
    config.faults.ranges_undecided_refute = true;
    let caught = first_false_claim(&config, "rngf", 40, |seed| Some(generate_floats(seed)));
    assert!(
        caught.is_some(),
        "no false claim found with ranges that refute undecided boxes, in 40 float programs"
    );
}

/// Bounds on floating-point values at loop heads taken as facts without their proofs.
#[test]
fn the_loop_harness_catches_unproved_float_loop_facts() {
    let mut config = harness_config();
    config.solver.timeout_ms = 2_000;
    config.faults.unproved_float_loop_facts = true;
    let caught = first_false_claim(&config, "lfff", 60, |seed| {
        Some(loops::generate_loops(seed))
    });
    assert!(
        caught.is_some(),
        "no false claim found with unproved float loop facts in 60 loop programs"
    );
}

/// Calling-context copies the budget left undecided taken as proving their labels infeasible.
#[test]
fn the_context_harness_catches_undecided_copies_taken_as_proofs() {
    let mut config = harness_config();
    config.faults.copies_undecided = true;
    config.faults.undecided_copies_hold = true;
    let caught = first_false_claim(&config, "ctxf", 40, |seed| {
        Some(generate_full(seed, true, false, true))
    });
    assert!(
        caught.is_some(),
        "no false claim found with undecided copies taken as proofs in 40 context programs"
    );
}
