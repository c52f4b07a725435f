//! The mutation suite: every injected protocol bug is flagged with an expected category, and
//! the unmutated kernels produce no finding under any schedule.

#[test]
fn checker_catches_every_mutant_and_flags_no_clean_kernel() {
    let suite = phaser_examples::mutate::run_suite();
    let table = phaser_examples::mutate::markdown(&suite);
    assert!(suite.mutants.len() >= 80, "only {} mutants", suite.mutants.len());
    // The TMA, cluster and cp.async kernels are covered, clean and mutated.
    for subject in
        ["tma_two_stage", "stream_axpb_s2", "cluster_multicast_x2", "cluster_multicast_x4", "cp_async_mbarrier"]
    {
        assert!(suite.clean.iter().any(|c| c.subject == subject), "no clean run of {subject}");
        assert!(suite.mutants.iter().any(|m| m.subject == subject), "no mutant of {subject}");
    }
    for c in &suite.clean {
        assert!(c.clean, "clean kernel `{}` was flagged or failed:\n{table}", c.subject);
    }
    let missed: Vec<String> =
        suite.mutants.iter().filter(|m| !m.caught).map(|m| format!("{}: {}", m.subject, m.mutation)).collect();
    assert!(missed.is_empty(), "missed mutants {missed:?}:\n{table}");
}

#[test]
fn mutations_apply_where_they_say() {
    use phaser::codegen::ir::{walk_insts, Inst, MbarrierOp};
    use phaser_examples::mutate::Mutation;
    let count = |k: &phaser::Kernel| {
        let mut n = 0;
        walk_insts(&k.body, &mut |i, _| n += matches!(i, Inst::Mbarrier(MbarrierOp::Arrive { .. })) as usize);
        n
    };
    let mut k = phaser_examples::gallery::pipeline::fe_pipeline(phaser::Target::Sm90a).unwrap();
    let before = count(&k);
    assert!(Mutation::DropArrive(1).apply(&mut k));
    assert_eq!(count(&k), before - 1);
    assert!(!Mutation::DropArrive(5).apply(&mut k), "there is no sixth arrive");
}
