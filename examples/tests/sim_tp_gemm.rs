//! The tensor-parallel GEMM with its all-gather fused (`gallery/gemm_allgather_dsl.rs`,
//! host side `gemm/tp.rs`) on 2 and 4 simulated devices: clean, C bit-exact; and the
//! protocol's bugs, each found with its device, CTA and line, beside its clean twin:
//! a relaxed flag store (a mutant of the push's signal), a rank that never pushes (a mutant
//! that deletes the signal; and a rank that skips its push launch), a reused epoch.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport};
use phaser::{Device, DeviceId};
use phaser_examples::gemm::tp::{TpGemm, TpKernels, TpTiles};
use phaser_examples::mutate::mutator::{release_to_relaxed, Delete, Replace};
use phaser_examples::mutate::{at, make_mutant, ops, Mutant, Mutator};

const FILE: &str = "examples/src/gallery/gemm_allgather_dsl.rs";

/// The line of the kernels' file holding `marker`.
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("../src/gallery/gemm_allgather_dsl.rs").lines().collect();
    lines.iter().position(|l| l.contains(marker)).unwrap() as u32 + 1
}

fn tiles() -> TpTiles {
    TpTiles::gallery()
}

/// `ranks` simulated devices of one system.
fn system(ranks: usize) -> Vec<Device> {
    Device::sim_system(ranks as u32, SimConfig::default())
}

/// Two m-blocks per rank at 2 ranks (the walk crosses from its own rows to the peer's), one
/// at 4; one 128-column tile; two K blocks.
fn shape(ranks: usize) -> (u32, u32, u32) {
    let bm = tiles().block_m();
    let m = if ranks == 2 { 4 * bm } else { ranks as u32 * bm };
    (m, tiles().block_n, 128)
}

fn text(reports: &[SimReport]) -> String {
    reports.iter().map(|r| r.text()).collect::<Vec<_>>().join("\n")
}

fn assert_clean(reports: &[SimReport]) {
    for r in reports {
        assert!(r.findings.is_empty(), "{}", r.text());
    }
}

fn findings(reports: &[SimReport], category: Category) -> Vec<&Finding> {
    reports.iter().flat_map(|r| r.findings.iter()).filter(|f| f.category == category).collect()
}

/// The kernels with the push's signal rewritten by `mutator`.
fn push_mutant(mutator: Box<dyn Mutator>) -> TpKernels {
    let k = TpKernels::new(tiles()).unwrap();
    let m = Mutant {
        subject: "allgather_push",
        site: at(ops::FLAG_STORE, "T.flag.signal(flags"),
        mutator,
        expect: Category::GlobalRace,
        race: None,
    };
    let (push, _) = make_mutant(&m, &k.push).unwrap();
    TpKernels { push, gemm: k.gemm }
}

fn clean(ranks: usize) {
    let devs = system(ranks);
    let tp = TpGemm::new(devs.iter().collect(), tiles(), shape(ranks), 7).unwrap();
    let reports = tp.simulate(&TpKernels::new(tiles()).unwrap(), 1, None).unwrap();
    assert_eq!(reports.len(), ranks * ranks, "a GEMM and ranks - 1 pushes per rank");
    assert_clean(&reports);
    tp.check().unwrap().unwrap();
}

#[test]
fn two_ranks_gather_and_multiply_clean_and_exact() {
    clean(2);
}

#[test]
fn four_ranks_gather_and_multiply_clean_and_exact() {
    clean(4);
}

/// Two ranks on one device (what `gpu_tp_gemm`'s one-GPU test runs): the pushes write the
/// other rank's buffers directly, no peer mapping; clean and exact.
#[test]
fn two_ranks_on_one_device_clean_and_exact() {
    let dev = system(1).pop().unwrap();
    let tp = TpGemm::new(vec![&dev, &dev], tiles(), shape(2), 7).unwrap();
    let reports = tp.simulate(&TpKernels::new(tiles()).unwrap(), 1, None).unwrap();
    assert_eq!(reports.len(), 4);
    assert_clean(&reports);
    tp.check().unwrap().unwrap();
}

/// A GEMM's TMA load of a peer's m-block after a flag its pusher stored relaxed: the read of
/// the pushed rows is a race, reported on the reading rank at the A load, naming the push's
/// store and the relaxed store of the flag.
#[test]
fn a_relaxed_flag_store_is_a_race_at_the_tma_load() {
    let devs = system(2);
    let tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    let kernels = push_mutant(Box::new(Replace("release -> relaxed", release_to_relaxed)));
    let reports = tp.simulate(&kernels, 1, None).unwrap();
    let races = findings(&reports, Category::GlobalRace);
    let f = races.first().unwrap_or_else(|| panic!("{}", text(&reports)));
    let loc = f.loc.expect("a line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("marker: the A load")), "{f}");
    assert!(f.device == Some(DeviceId(0)) || f.device == Some(DeviceId(1)), "{f}");
    let store = format!("{FILE}:{}", line_of("marker: the push's store"));
    assert!(f.message.contains(&format!("wrote at {store}")), "names the push's store: {f}");
    assert!(f.message.contains("with a relaxed store and no `fence.acq_rel` before it"), "{f}");
    let signal = format!("{FILE}:{}", line_of("marker: the push's signal"));
    assert!(f.message.contains(&signal), "names the flag's store: {f}");
}

/// The GEMM's `fence.proxy.async.global` after the gather wait deleted: the flag's acquire
/// orders the generic proxy only, so the TMA load of the pushed rows is a race, reported at
/// the A load with the rule and the fix (its twin: every clean test here).
#[test]
fn a_gather_without_the_proxy_fence_is_a_race_at_the_tma_load() {
    let devs = system(2);
    let tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    let k = TpKernels::new(tiles()).unwrap();
    let m = Mutant {
        subject: "gemm_allgather_dsl",
        site: at(ops::FENCE_PROXY_ASYNC, "T.ptx.fence.proxy_async(\"global\")"),
        mutator: Box::new(Delete),
        expect: Category::GlobalRace,
        race: None,
    };
    let (gemm, _) = make_mutant(&m, &k.gemm).unwrap();
    let reports = tp.simulate(&TpKernels { push: k.push, gemm }, 1, None).unwrap();
    let races = findings(&reports, Category::GlobalRace);
    let f = races.first().unwrap_or_else(|| panic!("{}", text(&reports)));
    let loc = f.loc.expect("a line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("marker: the A load")), "{f}");
    let store = format!("{FILE}:{}", line_of("marker: the push's store"));
    assert!(f.message.contains(&format!("wrote at {store}")), "names the push's store: {f}");
    let wait = format!("the acquire at {FILE}:{}", line_of("marker: the gather wait"));
    assert!(f.message.contains(&wait), "names the gather wait: {f}");
    assert!(f.message.contains("missing `fence.proxy.async.global`"), "{f}");
    assert!(f.message.contains("put `T.ptx.fence.proxy_async(\"global\")` after the flag wait"), "{f}");
}

/// The signal deleted: the peer's GEMM waits on a flag nobody will raise, reported at the
/// wait on the waiting device (its first CTA at least).
#[test]
fn a_push_that_never_signals_is_a_wait_nobody_satisfies() {
    let devs = system(2);
    let tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    let reports = tp.simulate(&push_mutant(Box::new(Delete)), 1, None).unwrap();
    never_satisfied(&reports, &[DeviceId(0), DeviceId(1)]);
}

/// Rank 1 never launches its push: rank 0's GEMM waits forever on rank 1's m-blocks; rank 1's
/// GEMM (rank 0 pushed) finishes.
#[test]
fn a_rank_that_skips_its_push_is_a_wait_nobody_satisfies() {
    let devs = system(2);
    let tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    let reports = tp.simulate(&TpKernels::new(tiles()).unwrap(), 1, Some(1)).unwrap();
    never_satisfied(&reports, &[DeviceId(0)]);
}

fn never_satisfied(reports: &[SimReport], devices: &[DeviceId]) {
    let hangs = findings(reports, Category::InfiniteLoop);
    assert!(!hangs.is_empty(), "{}", text(reports));
    for d in devices {
        let f =
            hangs.iter().find(|f| f.device == Some(*d)).unwrap_or_else(|| panic!("device {d:?}: {}", text(reports)));
        let loc = f.loc.expect("a line");
        assert_eq!((loc.file, loc.line), (FILE, line_of("marker: the gather wait")), "{f}");
        assert!(f.to_string().contains("gemm_allgather_dsl"), "{f}");
    }
    assert!(hangs.iter().all(|f| devices.contains(&f.device.unwrap())), "{}", text(reports));
}

/// Two steps: the second with the first's epoch passes its waits on the flags the first
/// raised, before this step's pushes wrote: the GEMM's TMA read and the push's store race
/// (whichever is second reports it, naming the other). The twin: the second step's epoch is 2.
#[test]
fn a_reused_epoch_lets_the_last_steps_flag_satisfy_this_wait() {
    let devs = system(2);
    let mut tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    let kernels = TpKernels::new(tiles()).unwrap();
    assert_clean(&tp.simulate(&kernels, 1, None).unwrap());
    tp.poison_c().unwrap();
    let reports = tp.simulate(&kernels, 1, None).unwrap();
    let races = findings(&reports, Category::GlobalRace);
    let f = races.first().unwrap_or_else(|| panic!("{}", text(&reports)));
    let (load, store) = (line_of("marker: the A load"), line_of("marker: the push's store"));
    let loc = f.loc.expect("a line");
    assert_eq!(loc.file, FILE, "{f}");
    let other = if loc.line == load {
        format!("wrote at {FILE}:{store}:")
    } else {
        assert_eq!(loc.line, store, "the race is between the A load and the push's store: {f}");
        format!("read at {FILE}:{load}:")
    };
    assert!(f.message.contains(&other), "names the other access ({other}): {f}");

    let devs = system(2);
    let mut tp = TpGemm::new(devs.iter().collect(), tiles(), shape(2), 7).unwrap();
    assert_clean(&tp.simulate(&kernels, 1, None).unwrap());
    tp.poison_c().unwrap();
    assert_clean(&tp.simulate(&kernels, 2, None).unwrap());
    tp.check().unwrap().unwrap();
}

/// Refused shapes: a rank's slice of part of an m-block.
#[test]
fn a_slice_of_part_of_an_m_block_is_refused() {
    let devs = system(2);
    let e = TpGemm::new(devs.iter().collect(), tiles(), (3 * 128, 128, 128), 7).err().expect("refused");
    assert!(e.to_string().contains("M = 384 is not a multiple of 2 ranks x 128 rows"), "{e}");
}

/// Both kernels assemble for sm_90a (what the GPU JITs) without spills.
#[test]
fn both_kernels_assemble_without_spills() {
    let ptxas = phaser::codegen::ptxas::require();
    let dir = tempfile::tempdir().unwrap();
    let k = TpKernels::new(tiles()).unwrap();
    for kernel in [&k.push, &k.gemm] {
        let ptx = phaser::codegen::emit_kernel(kernel).unwrap();
        let cubin = dir.path().join(format!("{}.cubin", kernel.name()));
        let text = phaser::codegen::ptxas::assemble_to(&ptxas, &ptx, "sm_90a", &["-v"], &cubin)
            .unwrap_or_else(|e| panic!("ptxas rejected {}:\n{e}", kernel.name()));
        let spills = text.lines().find(|l| l.contains("bytes spill stores")).expect("ptxas -v reports spills");
        assert!(spills.contains(" 0 bytes spill stores, 0 bytes spill loads"), "{}: {spills}", kernel.name());
    }
}
