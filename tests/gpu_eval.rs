//! The GPU half of the constant evaluator's differential test (`tests/robust_props.rs`,
//! area "constant evaluator"): the same kind of table, every arithmetic, comparison,
//! conversion, shift and select op at every type with edge operands over-represented, runs on
//! the GPU; each result, with constant and with loaded operands, must equal the evaluator's
//! value bit for bit, and the simulator's. Results PTX leaves unspecified (integer division
//! by zero, `MIN / -1`) are listed, not judged. Run by `.ci/gpu-bundle`.

mod eval_table;

use eval_table::Entry;
use phaser::runtime::sim::SimConfig;
use phaser::Device;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// `n` entries drawn with a fixed seed.
fn entries(n: usize, seed: u8) -> Vec<Entry> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = eval_table::entry();
    (0..n).map(|_| strategy.new_tree(&mut runner).expect("an entry").current()).collect()
}

/// The mismatches of one device's results against the evaluator (entries PTX defines only).
fn mismatches(entries: &[Entry], results: &[(Option<u64>, u64)], device: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (e, &(constant, loaded)) in entries.iter().zip(results) {
        let want = e.expected();
        if !e.defined_by_ptx() {
            println!("unspecified by PTX: {e:?}: {device} {loaded:#x}, the evaluator {want:#x}");
            continue;
        }
        if loaded != want {
            out.push(format!("{device}, loaded operands: {e:?}: got {loaded:#x}, the evaluator says {want:#x}"));
        }
        if let Some(c) = constant.filter(|&c| c != want) {
            out.push(format!("{device}, constant operands: {e:?}: got {c:#x}, the evaluator says {want:#x}"));
        }
    }
    out
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_gpu_computes_what_the_evaluator_folds() {
    let gpu = Device::cuda(0).expect("needs a CUDA GPU");
    let sim = Device::sim(SimConfig::fast());
    let mut bad = Vec::new();
    let mut judged = 0;
    for batch in 0..8u8 {
        let table = entries(500, 0xE0 + batch);
        bad.extend(mismatches(&table, &eval_table::run(&gpu, &table), "GPU"));
        bad.extend(mismatches(&table, &eval_table::run(&sim, &table), "simulator"));
        judged += table.iter().filter(|e| e.defined_by_ptx()).count();
    }
    println!("{judged} entries judged on the GPU and in the simulator, {} mismatches", bad.len());
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

/// The table itself, without a GPU: drawing is deterministic and every form occurs, so the
/// GPU run covers the registry's ops (this half runs everywhere).
#[test]
fn the_table_covers_every_form() {
    let table: Vec<Entry> = (0..8u8).flat_map(|b| entries(500, 0xE0 + b)).collect();
    let again: Vec<Entry> = (0..8u8).flat_map(|b| entries(500, 0xE0 + b)).collect();
    assert_eq!(format!("{table:?}"), format!("{again:?}"), "a fixed seed draws the same table");
    for (op, ty) in eval_table::forms() {
        assert!(table.iter().any(|e| e.op == op && e.ty == ty), "{op:?} on {ty} is never drawn");
    }
}

/// No float-consuming instruction of the table's kernel reaches ptxas with a float immediate:
/// every op whose operands are all constants is folded by the evaluator (ptxas would fold it
/// by its own NaN rules: `cvt.rn.bf16.f64` of a NaN immediate gave `0x7fff` on the H200 where
/// the run-time result is the signed quiet NaN). Only moves and stores carry a constant's bits,
/// and no `cvt` takes an immediate at all (this half runs everywhere).
#[test]
fn no_float_consuming_instruction_takes_a_float_immediate() {
    let table: Vec<Entry> = (0..8u8).flat_map(|b| entries(500, 0xE0 + b)).collect();
    let (kernel, _) = eval_table::kernel(&table);
    let ptx = kernel.ptx().expect("the table kernel prints");
    let float_imm = |o: &str| o.starts_with("0f") || o.starts_with("0d") || o.starts_with("-0f") || o.starts_with("-0d");
    let literal = |o: &str| o.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    let mut bad = Vec::new();
    for inst in phaser::codegen::ptx_text::instructions(&ptx) {
        let carries_bits = inst.opcode.starts_with("mov.") || inst.opcode.starts_with("st.");
        let sources = inst.operands.iter().skip(1);
        if inst.opcode.starts_with("cvt.") && sources.clone().any(|o| literal(o)) {
            bad.push(format!("line {}: {inst}", inst.line));
        } else if !carries_bits && sources.clone().any(|o| float_imm(o)) {
            bad.push(format!("line {}: {inst}", inst.line));
        }
    }
    let cvts = phaser::codegen::ptx_text::count(&ptx, "cvt.*");
    assert!(cvts > 0, "the table's loaded forms convert at run time");
    assert!(bad.is_empty(), "{} instructions take a constant ptxas would fold:\n{}", bad.len(), bad.join("\n"));
}
