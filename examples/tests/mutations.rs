//! The mutation suite: every injected protocol bug is reported with its one expected category
//! (under every schedule, or under one for the listed races), the unmutated kernels produce no
//! finding under any schedule, and `bench/mutations.md` is this run's table
//! (`UPDATE_MUTATIONS=1` rewrites it; so does `cargo run --release --bin mutations`).

use phaser::codegen::ir::{walk_insts, Inst, KernelParts, MbarrierOp, Stmt};
use phaser::codegen::Kernel;
use phaser::runtime::sim::Category;
use phaser_examples::mutate::{self, at, make_mutant, mutator::*, ops, Mutant, Mutator, Role};

#[test]
fn checker_names_every_mutant_and_flags_no_clean_kernel() {
    let suite = mutate::run_suite();
    let table = mutate::markdown(&suite);
    assert!(suite.mutants.len() >= 120, "only {} mutants", suite.mutants.len());
    assert_eq!(mutate::schedules().len(), 7, "round-robin, 5 random seeds, adversarial");
    // Every subject runs clean and is mutated.
    for s in mutate::subjects() {
        assert!(suite.clean.iter().any(|c| c.subject == s.name), "no clean run of {}", s.name);
        assert!(suite.mutants.iter().any(|m| m.subject == s.name), "no mutant of {}", s.name);
    }
    for c in &suite.clean {
        assert!(c.clean(), "clean kernel `{}` was flagged or failed:\n{table}", c.subject);
    }
    let missed: Vec<String> = suite
        .mutants
        .iter()
        .filter(|m| !m.caught())
        .map(|m| format!("{} {} {} ({}): {:?}", m.subject, m.line, m.mutation, m.expect, m.error))
        .collect();
    assert!(missed.is_empty(), "mutants not reported with their category {missed:#?}:\n{table}");
    // A race is the exception, with its reason; everything else shows under every schedule.
    let races: Vec<&str> = suite.mutants.iter().filter_map(|m| m.race).collect();
    assert!(races.len() * 20 <= suite.mutants.len(), "{} of {} mutants are races", races.len(), suite.mutants.len());
    assert!(races.iter().all(|why| why.len() > 40), "a race without its reason: {races:?}");

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
fn mutants_name_causes_not_symptoms() {
    // A bare deadlock is the expected category only where the bug is a barrier every thread
    // must reach (a `bar.sync` count, a cluster barrier missing its arrive); mbarrier bugs name
    // their cause.
    let bare_sync = [ops::BAR_SYNC.name, ops::CLUSTER_ARRIVE.name, ops::CLUSTER_WAIT.name];
    for m in mutate::mutants() {
        if m.expect == Category::Deadlock {
            assert!(bare_sync.contains(&m.site.op.name), "{} {}: a deadlock names no cause", m.subject, m.site);
        }
        assert!(m.expect != Category::Unsupported && m.expect != Category::InfiniteLoop, "{} {}", m.subject, m.site);
    }
    // The simulator's bug classes are each expected by more than one mutant. (An uninitialized
    // shared read is reported with the wrong parity that let the reader through, which is the
    // category those mutants expect; `tests/sim_findings.rs` checks the read itself.)
    let cats: Vec<Category> = mutate::mutants().iter().map(|m| m.expect).collect();
    for c in [
        Category::ExitedCtaAccess,
        Category::EarlyPhaseCompletion,
        Category::InvalidInitCount,
        Category::TxImbalance,
        Category::MissingArrival,
        Category::WrongParity,
        Category::StaleParity,
        Category::ArrivalOverflow,
    ] {
        assert!(cats.iter().filter(|&&x| x == c).count() >= 2, "too few mutants expect {c}");
    }
}

#[test]
fn subjects_are_the_examples_launches() {
    // A subject's kernel is what its example's setup launches: the same IR the example's
    // `kernels` lists (so a mutant is launched exactly where the original runs).
    for s in mutate::subjects() {
        let k = s.kernel().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert_eq!(k.name(), s.name);
        let e = phaser_examples::gallery::find(s.example).unwrap();
        let listed = (e.kernels)(k.target()).unwrap();
        assert!(listed.contains(&k), "{}: the launched kernel is not among {}'s kernels", s.name, s.example);
    }
}

fn fe_pipeline() -> Kernel {
    phaser_examples::gallery::pipeline::fe_pipeline(phaser::Target::Sm90a).unwrap()
}

fn arrives(k: &Kernel) -> usize {
    let mut n = 0;
    walk_insts(k.body(), &mut |i, _| n += matches!(i, Inst::Mbarrier(MbarrierOp::Arrive { .. })) as usize);
    n
}

fn mutant(site: mutate::Site, mutator: impl Mutator + 'static) -> Mutant {
    Mutant { subject: "fe_pipeline", site, mutator: Box::new(mutator), expect: Category::MissingArrival, race: None }
}

#[test]
fn a_site_names_its_instruction_by_rust_line() {
    let k = fe_pipeline();
    // The consumer's release, named by its line, whatever its position.
    let (_, loc) = at(ops::ARRIVE, "k.mbarrier_arrive(e);").resolve(&k).unwrap();
    let text = mutate::site::source_line(&loc).unwrap();
    assert!(text.contains("k.mbarrier_arrive(e);") && loc.file.ends_with("gallery/pipeline.rs"), "{text}");
    let (_, producer) = at(ops::ARRIVE, "k.mbarrier_arrive(f);").resolve(&k).unwrap();
    assert!(producer.line < loc.line, "the producer's arrive comes first in the file");
    // Two `phase ^= 1` lines: a site must say which one, and how many there are.
    let e = at(ops::XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").resolve(&k).unwrap_err();
    assert!(e.contains("expected 1") && e.contains("found 2"), "{e}");
    at(ops::XOR, "let x = k.xor(Value::Reg(phase), Value::u32(1));").nth(1, 2).resolve(&k).unwrap();
    // A line that is gone, or that no longer emits that kind of instruction, fails loudly
    // instead of retargeting.
    let e = at(ops::ARRIVE, "k.mbarrier_arrive(gone);").resolve(&k).unwrap_err();
    assert!(e.contains("found 0"), "{e}");
    let e = at(ops::WAIT, "k.mbarrier_arrive(e);").resolve(&k).unwrap_err();
    assert!(e.contains("found 0"), "{e}");
}

#[test]
fn a_mutant_changes_its_instruction_and_nothing_else() {
    let k = fe_pipeline();
    let (m, _) = make_mutant(&mutant(at(ops::ARRIVE, "k.mbarrier_arrive(e);"), Delete), &k).unwrap();
    assert_eq!(arrives(&m), arrives(&k) - 1);
    let (m, _) = make_mutant(&mutant(at(ops::ARRIVE, "k.mbarrier_arrive(e);"), Duplicate), &k).unwrap();
    assert_eq!(arrives(&m), arrives(&k) + 1);
    // An offset on a register operand adds its `add` at the instruction's line.
    let site = at(ops::INIT, "k.mbarrier_init(e, Value::u32(32));").nth(1, 2);
    let (m, _) = make_mutant(&mutant(site, Offset(Role::Count, -1)), &k).unwrap();
    let mut counts = Vec::new();
    walk_insts(m.body(), &mut |i, _| {
        if let Inst::Mbarrier(MbarrierOp::Init { count, .. }) = i {
            counts.push(count.as_imm_i128());
        }
    });
    assert_eq!(counts, [Some(32), Some(32), Some(32), Some(31)], "only the second `empty` init changed");
    // An operand the instruction does not have: a clear error.
    let e = make_mutant(&mutant(at(ops::ARRIVE, "k.mbarrier_arrive(e);"), Offset(Role::Bytes, 16)), &k).unwrap_err();
    assert!(e.contains("no Bytes operand"), "{e}");
}

/// A mutator that deletes its target and, by mistake, the statement after it.
struct Sloppy;

impl Mutator for Sloppy {
    fn describe(&self) -> String {
        "delete two".into()
    }
    fn rewrite(&self, _: &Stmt, _: &mut Fresh) -> Result<Vec<Stmt>, String> {
        unreachable!()
    }
    fn apply(&self, k: &mut KernelParts, id: usize) -> Result<(), String> {
        let (block, i) = mutate::site::locate(&mut k.body, id).unwrap();
        block.drain(i..i + 2);
        Ok(())
    }
}

#[test]
fn a_mutation_that_changes_more_than_its_instruction_is_rejected() {
    let k = fe_pipeline();
    let e = make_mutant(&mutant(at(ops::WAIT, "k.mbarrier_wait(f, Value::Reg(phase));"), Sloppy), &k).unwrap_err();
    assert!(e.contains("removed a statement other than its target"), "{e}");
    // A move may not cross a statement that computes what the moved one reads: the consumer's
    // release uses the `empty` address computed after the load.
    let to = at(ops::LD_SHARED, "let v = k.ld_shared(buf, j);");
    let e = make_mutant(&mutant(at(ops::ARRIVE, "k.mbarrier_arrive(e);"), Move { to, after: false }), &k).unwrap_err();
    assert!(e.contains("crosses a statement using the same registers"), "{e}");
}
