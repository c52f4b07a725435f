//! DSL kernels against the builder and against Rust: the DSL seeds build the builder seeds'
//! synchronization skeleton and, simulated with the same setup, write bit-identical outputs;
//! the DSL `phase_tma` loop records the same table as the builder's TMA loop; `#[comptime]`
//! specializes (checked by running the specializations) and caches; `.loc` names the Rust
//! lines; build errors carry the Rust line; and the DSL constructs (device calls, `&&`
//! short-circuit, `if` values, comptime `if`, `let` copies) compute what the Rust would.

use phaser::codegen::ir::{walk_insts, Kernel, StmtKind};
use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::{Device, LaunchConfig, Target};
use phaser_examples::gallery::{self, dsl_seeds::*, seeds, tma_two_stage, Size, POISON_U32};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn sim(s: Strategy) -> Device {
    Device::sim(SimConfig::default().with_strategy(s))
}

/// The synchronization skeleton of a kernel: its ops with a synchronization effect (mbarrier
/// ops, barriers, fences, group commits and waits), by IR variant, in program order.
fn sync_ops(k: &Kernel) -> Vec<&'static str> {
    let mut v = Vec::new();
    walk_insts(k.body(), &mut |i, _| {
        if i.effects().sync.is_some() {
            v.push(i.variant_name());
        }
    });
    v
}

fn same_shape(a: &Kernel, b: &Kernel) {
    assert_eq!(sync_ops(a), sync_ops(b), "{} vs {}", a.name(), b.name());
    let pk = |k: &Kernel| k.params().iter().map(|p| (p.name.clone(), format!("{:?}", p.kind))).collect::<Vec<_>>();
    assert_eq!(pk(a), pk(b));
    let sh = |k: &Kernel| k.shared().iter().map(|s| (s.name.clone(), s.elem, s.len)).collect::<Vec<_>>();
    assert_eq!(sh(a), sh(b));
    assert_eq!(a.bounds().reqntid, b.bounds().reqntid);
}

#[test]
fn dsl_seeds_match_the_builder_seeds() {
    let t = Target::Sm90a;
    same_shape(&dsl_seed_thread_arrive_wait::kernel().unwrap(), &seeds::thread_arrive_wait(t).unwrap());
    same_shape(&dsl_seed_producer_consumer::kernel().unwrap(), &seeds::producer_consumer(t).unwrap());
    same_shape(&dsl_seed_phase_flip::kernel_for(ROUNDS).unwrap(), &seeds::phase_flip(t).unwrap());
}

#[test]
fn dsl_seeds_compute_what_the_builder_seeds_compute() {
    // The same setup launches both kernels; their outputs must be bit-identical.
    for name in ["seed_thread_arrive_wait", "seed_producer_consumer", "seed_phase_flip"] {
        let (builder, dsl) = (gallery::find(name).unwrap(), gallery::find(&format!("dsl_{name}")).unwrap());
        for s in STRATEGIES {
            let b = gallery::run(&builder, &sim(s), Size::Quick, 1).unwrap();
            let d = gallery::run(&dsl, &sim(s), Size::Quick, 1).unwrap();
            assert!(b.outcome.passed && d.outcome.passed, "{name} {s:?}: {} / {}", b.outcome.detail, d.outcome.detail);
            assert_eq!(b.digest, d.digest, "{name} {s:?}: the DSL and builder outputs differ");
        }
    }
}

/// Run `dsl_phase_tma` for `iters` iterations (through its typed `launch`) with one row of
/// spare output, which must stay poisoned.
fn dsl_phase_tma_rows(dev: &Device, iters: u32) -> Vec<u32> {
    let mut out = dev.upload(&vec![POISON_U32; PHASE_TMA_FIELDS * (iters as usize + 1)]).unwrap();
    dsl_phase_tma::launch(dev, LaunchConfig::linear(1, 32), &mut out, iters).unwrap();
    let got = dev.download(&out).unwrap();
    let (rows, spare) = got.split_at(PHASE_TMA_FIELDS * iters as usize);
    assert!(spare.iter().all(|&x| x == POISON_U32), "ITERS={iters}: wrote past its {iters} rows: {spare:?}");
    rows.to_vec()
}

#[test]
fn dsl_phase_tma_records_the_builder_tma_loops_table() {
    // The builder's TMA loop (tma_two_stage, real TMA completions) records the table in its
    // `table` output; the DSL loop (ordinary arrivals) must record the same rows.
    let e = gallery::find("tma_two_stage").unwrap();
    for s in STRATEGIES {
        let dev = sim(s);
        let mut p = (e.setup)(&dev, Size::Small, 3).unwrap();
        let out = gallery::run_problem(&dev, &mut p).unwrap();
        let h: &tma_two_stage::Host = p.host();
        let builder = out.get(0, h.table);
        assert!((e.check)(&p, &out).passed);
        assert_eq!(dsl_phase_tma_rows(&dev, h.iters as u32), builder, "{s:?}");
        // The gallery's dsl_phase_tma check accepts exactly the seed table's four rows.
        assert!(check_phase_tma(&builder[..4 * PHASE_TMA_FIELDS]).passed);
        assert!(!check_phase_tma(&builder[PHASE_TMA_FIELDS..5 * PHASE_TMA_FIELDS]).passed);
    }
}

#[test]
fn phase_tma_structure() {
    let k = dsl_phase_tma::kernel_for(4).unwrap();
    assert_eq!(
        sync_ops(&k),
        [
            "Mbarrier::Init",
            "Mbarrier::Init",
            "Sync::FenceMbarrierInit",
            "Sync::BarSync",
            "Mbarrier::Arrive",
            "Mbarrier::Wait",
            "Mbarrier::TestWait",
            "Sync::BarSync"
        ],
        "init x2, fence, sync, then per iteration: arrive, wait(phase_tma), probe, sync"
    );
    assert_eq!((k.shared()[0].name.as_str(), k.shared()[0].len), ("tma_bar", 2));
}

#[test]
fn comptime_specializes_and_caches() {
    // Each specialization runs its own number of iterations: 2 rows, then 6.
    let dev = sim(Strategy::RoundRobin);
    let (two, six) = (dsl_phase_tma_rows(&dev, 2), dsl_phase_tma_rows(&dev, 6));
    assert_eq!(two, tma_two_stage::expected_table(2));
    assert_eq!(six, tma_two_stage::expected_table(6));
    let before = dsl_phase_tma::specializations();
    for _ in 0..3 {
        dsl_phase_tma::kernel_for(2).unwrap();
        dsl_phase_tma::kernel_for(6).unwrap();
    }
    assert_eq!(dsl_phase_tma::specializations(), before, "each specialization is built once");
    dsl_phase_tma::kernel_for(9).unwrap();
    assert_eq!(dsl_phase_tma::specializations(), before + 1);
}

/// Line of the first line of this file containing `marker`.
fn line_of(marker: &str) -> u32 {
    include_str!("dsl_structure.rs").lines().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap() as u32
        + 1
}

#[phaser::device]
fn half_of(x: u32) -> u32 {
    x / 2 // LOC-DEVICE
}

#[phaser::kernel(target = "sm_90a")]
fn loc_probe(out: &mut [u32], #[comptime] COUNT: u32) {
    let bar = T.alloc_barriers(1);
    T.ptx.mbarrier.init(bar.ptr_to([0]), COUNT); // LOC-INIT
    let h = half_of(T.thread_idx());
    out[h] = 1; // LOC-STORE
}

#[test]
fn loc_directives_name_the_rust_lines() {
    let ptx = loc_probe::ptx_for(32).unwrap();
    assert!(ptx.contains(".file 1 \"examples/tests/dsl_structure.rs\""), "{ptx}");
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    let after = |l: u32, inst: &str| {
        let at = lines
            .iter()
            .position(|x| x.starts_with(&format!(".loc 1 {l} ")))
            .unwrap_or_else(|| panic!("no .loc for line {l}:\n{ptx}"));
        assert!(lines[at..].iter().take(6).any(|x| x.starts_with(inst)), "{inst} after .loc {l}:\n{ptx}");
    };
    after(line_of("LOC-INIT"), "mbarrier.init");
    after(line_of("LOC-DEVICE"), "div.u32");
    after(line_of("LOC-STORE"), "st.global.u32");
}

#[test]
fn comptime_dependent_errors_carry_the_rust_line() {
    let e = loc_probe::kernel_for(0).unwrap_err();
    let d = &e.diagnostics[0];
    let loc = d.loc.expect("a location");
    assert_eq!((loc.file, loc.line), ("examples/tests/dsl_structure.rs", line_of("LOC-INIT")), "{e}");
    assert!(d.message.contains("arrival count 0"), "{e}");
    assert!(
        e.to_string().starts_with(&format!("error: examples/tests/dsl_structure.rs:{}:", line_of("LOC-INIT"))),
        "{e}"
    );
    // The error is cached like a kernel: asking again gives the same answer.
    assert_eq!(loc_probe::kernel_for(0).unwrap_err(), e);
}

#[phaser::kernel(target = "sm_90a")]
fn constructs(out: &mut [u32], data: &[u32], n: u32, #[comptime] WIDE: u32) {
    let tid = T.thread_idx();
    // Short-circuit: data[tid] is only loaded when tid < n.
    if tid < n && data[tid] > 3 {
        out[0] = 1;
    }
    // Pure operands: no branch needed.
    let both = tid < n && tid > 2;
    let v = if both { tid } else { n + 1 };
    out[1] = v;
    if WIDE > 1 {
        out[2] = 70; // only built when WIDE > 1
    } else {
        out[2] = 80;
    }
    let mut acc = 0u32;
    for i in (0..WIDE * 4).step_by(2) {
        if i == 6 {
            continue;
        }
        acc += i;
    }
    out[3] = acc;
}

fn count_ifs(k: &Kernel) -> usize {
    fn walk(b: &[phaser::codegen::ir::Stmt]) -> usize {
        b.iter()
            .map(|s| match &s.kind {
                StmtKind::If { then_body, else_body, .. } => 1 + walk(then_body) + walk(else_body),
                StmtKind::Loop { body, latch } => walk(body) + walk(latch),
                _ => 0,
            })
            .sum()
    }
    walk(k.body())
}

/// `constructs` on one thread (`tid == 0`); returns `out[0..4]`.
fn run_constructs(wide: u32, data: &[u32], n: u32) -> Vec<u32> {
    let dev = sim(Strategy::RoundRobin);
    let mut out = dev.upload(&[POISON_U32; 4]).unwrap();
    let data = dev.upload(data).unwrap();
    constructs::launch(&dev, LaunchConfig::linear(1, 1), &mut out, &data, n, wide).unwrap();
    dev.download(&out).unwrap()
}

/// `constructs` in Rust, for thread 0.
fn constructs_in_rust(wide: u32, data: &[u32], n: u32) -> Vec<u32> {
    let tid = 0u32;
    let mut out = vec![POISON_U32; 4];
    if tid < n && data[tid as usize] > 3 {
        out[0] = 1;
    }
    out[1] = if tid < n && tid > 2 { tid } else { n + 1 };
    out[2] = if wide > 1 { 70 } else { 80 };
    out[3] = (0..wide * 4).step_by(2).filter(|&i| i != 6).sum();
    out
}

#[test]
fn constructs_compute_what_the_rust_computes() {
    for wide in [1, 2, 3] {
        for (data, n) in [(&[9u32][..], 1), (&[2], 1), (&[9], 0)] {
            assert_eq!(
                run_constructs(wide, data, n),
                constructs_in_rust(wide, data, n),
                "WIDE={wide} data={data:?} n={n}"
            );
        }
    }
    // `&&` short-circuits: with n = 0, `data[0]` is never loaded, so an empty buffer is fine
    // (a load would be an out-of-bounds finding, failing the launch).
    assert_eq!(run_constructs(1, &[], 0), constructs_in_rust(1, &[0], 0));
}

#[test]
fn constructs_build_the_expected_ir() {
    let narrow = constructs::kernel_for(1).unwrap();
    let ptx = phaser::codegen::emit_kernel(&narrow).unwrap();
    // ifs: the `&&` guard + the outer `if` + the `if` value + the loop's exit test + `continue`
    // (the comptime `if` adds none).
    assert_eq!(count_ifs(&narrow), 5, "{ptx}");
    assert_eq!(phaser::codegen::ptx_text::count(&ptx, "ld.global.u32"), 1, "{ptx}");
}

#[phaser::device]
fn same(x: u32) -> u32 {
    x
}

#[phaser::kernel(target = "sm_90a")]
fn no_alias(out: &mut [u32], n: u32) {
    let mut phase = 0;
    let waited = phase;
    let via_helper = same(phase);
    let plus_zero = phase + 0;
    let mut bound = n;
    for i in 0..bound {
        bound += 1; // the range was evaluated once, as in Rust
        out[i] = i;
    }
    phase ^= 1;
    out[0] = waited;
    out[1] = via_helper;
    out[2] = plus_zero;
    out[3] = phase;
}

#[test]
fn immutable_lets_copy_mutable_variables() {
    // `waited`, `via_helper` and `plus_zero` keep the value `phase` had (0) after `phase ^= 1`;
    // the loop runs `n` times although the body grows `bound`: what the Rust would do.
    let dev = sim(Strategy::RoundRobin);
    for n in [4u32, 6] {
        let mut out = dev.upload(&[POISON_U32; 8]).unwrap();
        no_alias::launch(&dev, LaunchConfig::linear(1, 1), &mut out, n).unwrap();
        let mut want = [POISON_U32; 8];
        for i in 0..n {
            want[i as usize] = i;
        }
        want[..4].copy_from_slice(&[0, 0, 0, 1]);
        assert_eq!(dev.download(&out).unwrap(), want, "n = {n}");
    }
}
