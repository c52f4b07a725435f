//! The mutation suite: inject one protocol bug at a time into the IR of a gallery kernel and
//! check that the simulator's checker names it with the one category of its cause, and flags
//! nothing on the unmutated kernels, under round-robin, random (5 seeds) and adversarial
//! schedules ([`schedules`]).
//!
//! `cargo run --release --bin mutations` prints the table and writes [`TABLE_PATH`]
//! (`bench/mutations.md`); the test `examples/tests/mutations.rs` fails when that file is
//! stale (`UPDATE_MUTATIONS=1` rewrites it). `--sites KERNEL` lists the instructions of a
//! subject a mutant can name; `--report KERNEL:N` prints the simulator's reports of a mutant.
//!
//! The pieces:
//! - [`subject`](mod@subject): the kernels (gallery launches at `Size::Small`), one line each.
//! - [`op`]: the statement kinds a mutant can name ([`ops`]) and the operand roles a mutator
//!   can change ([`Role`]).
//! - [`site`]: a mutant's target, an op kind plus (a piece of) the text of the Rust line that
//!   built it, never a position: an edit elsewhere cannot retarget a mutant, and a site whose
//!   line no longer yields the statements it names fails to resolve.
//! - [`mutator`]: what a mutant does to its target ([`Mutator`]): delete, execute twice, add to
//!   an operand, set it, flip its parity bit, use the other stage's barrier, an op-specific
//!   rewrite ([`mutator::Replace`]), move it past another statement of its block.
//! - [`verify`]: the check that a mutant changed its target and nothing else (a diff of the
//!   IR before and after: only statements of the target's line added, only the target gone).
//! - [`catalog`]: the mutants, each with its one expected category, and the few races (bugs
//!   whose symptom depends on the interleaving), each with its reason.
//!
//! # Adding mutants for a new op
//!
//! A new op family (the tensor-core and Blackwell ops, new DSL statements) adds an [`Op`] for
//! each instruction kind a mutant names, an arm in [`op::operand_mut`] for each operand a
//! generic mutator may change (the barrier operand comes from the IR, `Inst::barrier_mut`),
//! then mutants: a [`Site`], a [`Mutator`], the category. For `tcgen05.commit`, whose barrier
//! a commit-to-the-wrong-stage bug changes:
//!
//! ```ignore
//! // op.rs, in `ops`:
//! op!(TCGEN05_COMMIT, "tcgen05.commit", StmtKind::Inst(Inst::Tcgen05(Tcgen05Op::Commit { .. })));
//! // catalog.rs:
//! m("umma_pipeline", at(TCGEN05_COMMIT, "k.tcgen05_commit(full"), Delete, MissingArrival),
//! m("umma_pipeline", at(TCGEN05_COMMIT, "k.tcgen05_commit(full"), OtherStage(Role::Barrier), WrongParity),
//! ```
//!
//! A rewrite no generic mutator expresses is a `fn(&Inst) -> Option<Inst>` in
//! [`mutator::Replace`] (see [`mutator::expect_tx_to_arrive`]); a new subject is one line in
//! [`subject::subjects`]. Run `mutations --only KERNEL` to see what the checker reports for the
//! new mutants under every schedule before choosing their categories.

pub mod catalog;
pub mod mutator;
pub mod op;
pub mod site;
pub mod subject;
pub mod suite;
pub mod table;
pub mod verify;

pub use catalog::{mutants, Mutant};
pub use mutator::Mutator;
pub use op::{ops, Op, Role};
pub use site::{at, Site};
pub use subject::{subject, subjects, Subject};
pub use suite::{make_mutant, run, run_suite, schedules, MutantResult, Suite};
pub use table::markdown;

/// The suite's table, at the workspace root: `bench/mutations.md`.
pub const TABLE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/mutations.md");

/// Every instruction of `k` a site can name: the first [`ops`] kind it matches, its Rust line
/// and that line's text (for writing mutants: `mutations --sites KERNEL`).
pub fn sites(k: &phaser::codegen::Kernel) -> Vec<String> {
    use ops::*;
    const ALL: &[Op] = &[
        INIT,
        ARRIVE,
        REMOTE_ARRIVE,
        EXPECT_TX,
        WAIT,
        TRY_WAIT,
        TEST_WAIT,
        BAR_SYNC,
        BAR_ARRIVE,
        WARP_SYNC,
        FENCE_PROXY_ASYNC,
        FENCE_MBARRIER_INIT,
        CLUSTER_ARRIVE,
        CLUSTER_WAIT,
        ELECT,
        MAPA,
        BULK_LOAD,
        BULK_STORE,
        TMA_LOAD,
        TMA_LOAD_MULTICAST,
        TMA_STORE,
        BULK_COMMIT,
        BULK_WAIT,
        CP_ASYNC,
        CP_ASYNC_ARRIVE,
        CP_ASYNC_COMMIT,
        CP_ASYNC_WAIT,
        WGMMA_FENCE,
        WGMMA_MMA,
        WGMMA_COMMIT,
        WGMMA_WAIT,
        PACK_HALF2,
        FLAG_STORE,
        LD_SHARED,
        ST_SHARED,
        XOR,
        ADD,
        MOV_IMM,
        MOV_REG,
        LOOP,
        IF,
    ];
    let mut out = Vec::new();
    site::preorder(k.body(), &mut |id, s| {
        if let Some(op) = ALL.iter().find(|o| (o.matches)(&s.kind)) {
            let (line, text) = match s.loc {
                Some(l) => (site::short(&l), site::source_line(&l).unwrap_or_default()),
                None => ("?".into(), String::new()),
            };
            out.push(format!("{id:4} {:32} {line:28} {}", op.name, text.trim()));
        }
    });
    out
}
