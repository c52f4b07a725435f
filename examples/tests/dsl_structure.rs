//! Structural checks of DSL kernels (the simulator is not available yet, so no launches):
//! the DSL seeds build the same ops as the builder seeds, `#[comptime]` specializes and caches,
//! `.loc` names the Rust lines, build errors carry the Rust line, and the DSL constructs
//! (device calls, `&&` short-circuit, `if` values, comptime `if`) build what they should.

use phaser::codegen::ir::{walk_insts, Inst, Kernel, StmtKind};
use phaser::Target;
use phaser_examples::gallery::{dsl_seeds::*, seeds};

/// The synchronization skeleton of a kernel: mbarrier, barrier and fence ops in program order.
fn sync_ops(k: &Kernel) -> Vec<String> {
    let mut v = Vec::new();
    walk_insts(&k.body, &mut |i, _| match i {
        Inst::Mbarrier(op) => v.push(format!("{op:?}").split([' ', '{', '(']).next().unwrap().to_string()),
        Inst::Sync(op) => v.push(format!("{op:?}").split([' ', '{', '(']).next().unwrap().to_string()),
        _ => {}
    });
    v
}

fn same_shape(a: &Kernel, b: &Kernel) {
    assert_eq!(sync_ops(a), sync_ops(b), "{} vs {}", a.name, b.name);
    let pk = |k: &Kernel| k.params.iter().map(|p| (p.name.clone(), format!("{:?}", p.kind))).collect::<Vec<_>>();
    assert_eq!(pk(a), pk(b));
    let sh = |k: &Kernel| k.shared.iter().map(|s| (s.name.clone(), s.elem, s.len)).collect::<Vec<_>>();
    assert_eq!(sh(a), sh(b));
    assert_eq!(a.bounds.reqntid, b.bounds.reqntid);
}

#[test]
fn dsl_seeds_match_the_builder_seeds() {
    let t = Target::Sm90a;
    same_shape(&dsl_seed_thread_arrive_wait::kernel().unwrap(), &seeds::thread_arrive_wait(t).unwrap());
    same_shape(&dsl_seed_producer_consumer::kernel().unwrap(), &seeds::producer_consumer(t).unwrap());
    same_shape(&dsl_seed_phase_flip::kernel_for(4).unwrap(), &seeds::phase_flip(t).unwrap());
}

#[test]
fn phase_tma_structure() {
    let k = dsl_phase_tma::kernel_for(4).unwrap();
    assert_eq!(
        sync_ops(&k),
        ["Init", "Init", "FenceMbarrierInit", "BarSync", "Arrive", "Wait", "TestWait", "BarSync"],
        "init x2, fence, sync, then per iteration: arrive, wait(phase_tma), probe, sync"
    );
    let ptx = dsl_phase_tma::ptx_for(4).unwrap();
    assert!(ptx.contains("mbarrier.try_wait.parity.shared::cta.b64"));
    assert!(ptx.contains("mbarrier.test_wait.parity.shared::cta.b64"));
    assert_eq!(k.shared[0].name, "tma_bar");
    assert_eq!(k.shared[0].len, 2);
}

#[test]
fn phase_tma_host_check_uses_the_seed_table() {
    let good: Vec<u32> = PHASE_TMA_TABLE.iter().flatten().copied().collect();
    assert_eq!(good, [0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 2, 0, 1, 0, 1, 3, 1, 1, 0, 0]);
    assert!(check_phase_tma(&good).0);
    let mut bad = good.clone();
    bad[3] = 0; // iteration 0: barrier parity after completion must be 1
    assert!(!check_phase_tma(&bad).0);
    assert!(!check_phase_tma(&good[..15]).0);
}

#[test]
fn comptime_specializes_and_caches() {
    let a = dsl_phase_tma::ptx_for(2).unwrap();
    let b = dsl_phase_tma::ptx_for(6).unwrap();
    assert!(a.contains("setp.ge.u32") && a.contains(", 2;") && b.contains(", 6;"), "loop bound is the comptime value");
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
    walk(&k.body)
}

#[test]
fn constructs_build_the_expected_ir() {
    let narrow = constructs::kernel_for(1).unwrap();
    let wide = constructs::kernel_for(2).unwrap();
    let ptx = |k: &Kernel| phaser::codegen::emit_kernel(k).unwrap();
    assert!(ptx(&narrow).contains(", 80;") && !ptx(&narrow).contains(", 70;"), "comptime `if` keeps one branch");
    assert!(ptx(&wide).contains(", 70;") && !ptx(&wide).contains(", 80;"));
    // ifs: the `&&` guard + the outer `if` + the `if` value + the loop's exit test + `continue`
    // (the comptime `if` adds none).
    assert_eq!(count_ifs(&narrow), 5, "{}", ptx(&narrow));
    let loads = ptx(&narrow).matches("ld.global.u32").count();
    assert_eq!(loads, 1);
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
    // Stores of `waited`, `via_helper`, `plus_zero` must not read `phase`'s register, which
    // the `xor` updates; only `out[3]` does.
    let ptx = no_alias::ptx().unwrap();
    let xor = ptx.lines().find(|l| l.contains("xor.b32")).unwrap();
    let phase_reg = xor.split_whitespace().nth(2).unwrap().trim_end_matches(',').to_string();
    let stores: Vec<&str> = ptx.lines().filter(|l| l.contains("st.global.u32")).collect();
    assert_eq!(stores.len(), 5, "{ptx}");
    let reading_phase = stores.iter().filter(|l| l.trim_end_matches(';').ends_with(&format!(" {phase_reg}"))).count();
    assert_eq!(reading_phase, 1, "only out[3] = phase reads the live register:\n{ptx}");
    // The loop compares against a copy of `bound`, not the register the body increments.
    let k = no_alias::kernel().unwrap();
    assert!(k.num_regs > 0);
    let cmp = ptx.lines().find(|l| l.contains("setp.ge.u32")).unwrap();
    let add_bound = ptx.lines().filter(|l| l.trim_start().starts_with("add.u32")).count();
    assert!(add_bound >= 1, "{cmp}");
}
