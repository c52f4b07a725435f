//! The mutation suite: every injected protocol bug is flagged with an expected category, the
//! unmutated kernels produce no finding under any schedule, and `bench/mutations.md` is this
//! run's table (`UPDATE_MUTATIONS=1` rewrites it; so does `cargo run --release --bin mutations`).

use phaser_examples::mutate;

#[test]
fn checker_catches_every_mutant_and_flags_no_clean_kernel() {
    let suite = mutate::run_suite();
    let table = mutate::markdown(&suite);
    assert!(suite.mutants.len() >= 89, "only {} mutants", suite.mutants.len());
    // Every subject runs clean and is mutated.
    for s in mutate::subjects() {
        assert!(suite.clean.iter().any(|c| c.subject == s.name), "no clean run of {}", s.name);
        assert!(suite.mutants.iter().any(|m| m.subject == s.name), "no mutant of {}", s.name);
    }
    for c in &suite.clean {
        assert!(c.clean, "clean kernel `{}` was flagged or failed:\n{table}", c.subject);
    }
    let missed: Vec<String> =
        suite.mutants.iter().filter(|m| !m.caught).map(|m| format!("{}: {}", m.subject, m.mutation)).collect();
    assert!(missed.is_empty(), "missed mutants {missed:?}:\n{table}");

    let current = std::fs::read_to_string(mutate::TABLE_PATH).unwrap_or_default();
    if current != table {
        if std::env::var_os("UPDATE_MUTATIONS").is_some() {
            std::fs::write(mutate::TABLE_PATH, &table).unwrap();
        } else {
            panic!(
                "bench/mutations.md is stale: rerun with UPDATE_MUTATIONS=1 (or `cargo run --release --bin mutations`)"
            );
        }
    }
}

#[test]
fn subjects_are_the_examples_launches() {
    // A subject's kernel is what its example's setup launches: the same IR the example's
    // `kernels` lists (so a mutant is launched exactly where the original runs).
    for s in mutate::subjects() {
        let k = s.kernel().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert_eq!(k.name, s.name);
        let e = phaser_examples::gallery::find(s.example).unwrap();
        let listed = (e.kernels)(k.target).unwrap();
        assert!(listed.contains(&k), "{}: the launched kernel is not among {}'s kernels", s.name, s.example);
    }
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
