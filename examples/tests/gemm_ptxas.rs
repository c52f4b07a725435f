//! The GEMM kernel without a GPU: every configuration assembles for sm_90a with zero spill
//! bytes and its SASS (cuobjdump, required next to ptxas) has the HGMMAs, bad
//! shapes and configurations are refused with the constraint named, and the persistent tile
//! walk covers every tile once (in the simulator; the GEMM itself runs there in sim_gemm.rs).

use phaser::codegen::{emit_kernel, ptx_text, ptxas};
use phaser::Device;
use phaser_examples::gemm::{self, *};

fn all_configs() -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        v.push(GemmConfig::new(layout));
        v.extend(sweep_configs(layout));
        v.extend(phaser_examples::gemm_choice::choice_candidates(layout));
    }
    // Split-K is the DSL GEMM's (`split_k_kernels_assemble_without_spills`).
    v.retain(|c| gemm::builder_unsupported(c).is_none());
    v.sort_by_key(|c| c.kernel_name());
    v.dedup();
    v
}

/// `ptxas -v`'s messages and the SASS instructions of each PTX module, in order: assembled
/// together (`ptxas::assemble_each`: one ptxas and one cuobjdump run for all the modules of
/// one header, since cuobjdump costs about 0.8 s per cubin), each as if alone.
fn assemble_all(ptxs: &[String]) -> Vec<(String, Vec<(u32, String)>)> {
    let (ptxas, cuobjdump) = (ptxas::require(), ptxas::require_cuobjdump());
    let dir = tempfile::tempdir().unwrap();
    let refs: Vec<&str> = ptxs.iter().map(String::as_str).collect();
    let assembled =
        ptxas::assemble_each(&ptxas, &cuobjdump, "sm_90a", dir.path(), &refs).unwrap_or_else(|e| panic!("{e}"));
    assembled
        .into_iter()
        .map(|a| {
            let insts = instructions(&a.sass);
            (a.messages, insts)
        })
        .collect()
}

/// `N bytes spill stores, M bytes spill loads` of ptxas -v.
fn spill_bytes(verbose: &str) -> (u64, u64) {
    let line = verbose.lines().find(|l| l.contains("bytes spill stores")).expect("ptxas -v reports spills");
    let nums: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    // "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    (nums[nums.len() - 2], nums[nums.len() - 1])
}

#[test]
fn every_config_assembles_without_spills_and_uses_hgmma() {
    let mut kernels = Vec::new();
    for cfg in all_configs() {
        let k = gemm_kernel(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let ptx = emit_kernel(&k).unwrap();
        // Readable PTX: the pipeline's ops carry the Rust lines of gemm.rs.
        assert!(ptx.contains("// examples/src/gemm.rs:"), "{}", cfg.kernel_name());
        assert!(
            ptx_text::has(&ptx, "setmaxnreg.dec.sync.aligned.u32 40") && ptx_text::has_directive(&ptx, ".maxnreg 168")
        );
        kernels.push((cfg, ptx));
    }
    let ptxs: Vec<String> = kernels.iter().map(|(_, p)| p.clone()).collect();
    for ((cfg, ptx), (verbose, insts)) in kernels.iter().zip(assemble_all(&ptxs)) {
        let name = cfg.kernel_name();
        assert_eq!(spill_bytes(&verbose), (0, 0), "{name} spills:\n{verbose}");
        assert!(!verbose.contains("C7508"), "setmaxnreg ignored (no register cap):\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{name}: ptxas serialized the wgmmas: {serialized:#?}");
        let shape = format!("HGMMA.64x{}x16.F32.BF16", cfg.block_n);
        // Two copies of the K block (the peeled first one and the loop), 4 k16 steps each,
        // per m64 slice of the warpgroup.
        let want = 2 * 4 * (cfg.wg_m / 64) as usize;
        let listing = || insts.iter().map(|(_, i)| i.as_str()).collect::<Vec<_>>().join("\n");
        assert_eq!(count_with_modifiers(&insts, &shape), want, "{name}:\n{}", listing());
        // The shared window's base is read once, not per loop iteration.
        assert_eq!(insts.iter().filter(|(_, i)| i.contains("SR_CgaCtaId")).count(), 1, "{name}");
        // No GPU-scope fence on the hot path: only the barrier-init fence of a cluster.
        assert_eq!(count_with_modifiers(&insts, "MEMBAR.ALL.GPU"), (cfg.cluster_m > 1) as usize, "{name}");
    }
}

#[test]
fn shapes_that_break_tma_constraints_are_refused() {
    let p = |m, n, k| GemmShape::new(m, n, k).problem();
    assert!(p(128, 128, 100).unwrap().contains("K must be a multiple of 8"), "{:?}", p(128, 128, 100));
    assert!(p(128, 1001, 64).unwrap().contains("N must be a multiple of 8"));
    assert!(p(0, 8, 8).unwrap().contains("at least 1"));
    for s in check_shapes() {
        assert_eq!(s.problem(), None, "{s}");
    }
    assert!(check_shapes().len() >= 10);
    assert!(check_shapes().iter().any(|s| s.m % 128 != 0 && s.n % 256 != 0 && s.k % 64 != 0), "a ragged shape");
    // The host refuses before touching the device.
    let dev = Device::sim(Default::default());
    let e = GemmBuffers::new(
        &dev,
        GemmShape::new(8, 8, 12),
        BLayout::KMajor,
        &[half::bf16::ZERO; 96],
        &[half::bf16::ZERO; 96],
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("K = 12") && e.to_string().contains("multiple of 8"), "{e}");
}

#[test]
fn configs_that_do_not_fit_are_refused() {
    let big = GemmConfig { stages: 5, ..GemmConfig::new(BLayout::KMajor) };
    assert!(big.problem().unwrap().contains("shared memory"), "{:?}", big.problem());
    let e = gemm_kernel(&big).unwrap_err().to_string();
    assert!(e.contains("GEMM configuration") && e.contains("232448"), "{e}");
    let odd = GemmConfig { block_n: 96, ..GemmConfig::new(BLayout::KMajor) };
    assert!(odd.problem().unwrap().contains("multiple of 64"));
    for c in all_configs() {
        assert_eq!(c.problem(), None, "{}", c.kernel_name());
        assert!(c.dynamic_smem_bytes() + 1024 <= MAX_SMEM_BYTES);
    }
}

#[test]
fn tile_walk_covers_every_tile_once() {
    use phaser::{Arg, LaunchConfig};
    let dev = Device::sim(Default::default());
    for (cluster_m, group_m) in [(1, 8), (2, 8), (2, 3), (1, 1)] {
        let cfg = GemmConfig { cluster_m, group_m, ..GemmConfig::new(BLayout::KMajor) };
        let k = tile_walk_kernel(&cfg).unwrap();
        for (m, n, ctas) in [(1000u32, 1000u32, 4u32), (128, 256, 2), (4096, 2048, 6), (300, 8, 2)] {
            let tiles_m = m.div_ceil(cfg.block_m() * cluster_m) * cluster_m;
            let tiles_n = n.div_ceil(cfg.block_n);
            let total = (tiles_m * tiles_n) as usize;
            let out = dev.alloc::<u32>(3 * total + 3).unwrap();
            let count = dev.alloc::<u32>(1).unwrap();
            let cfg_launch = LaunchConfig::linear(ctas, 32);
            dev.launch(&k, cfg_launch, &[Arg::buffer(&out), Arg::buffer(&count), Arg::scalar(m), Arg::scalar(n)])
                .unwrap();
            let got = dev.download(&out).unwrap();
            assert_eq!(dev.download(&count).unwrap()[0] as usize, total, "cluster {cluster_m}, {m}x{n}");
            let mut seen = std::collections::HashMap::new();
            for e in got[..3 * total].chunks(3) {
                let (cta, m0, n0) = (e[0], e[1], e[2]);
                assert!(m0 % cfg.block_m() == 0 && n0 % cfg.block_n == 0 && m0 < tiles_m * cfg.block_m() && n0 < n);
                assert!(seen.insert((m0, n0), cta).is_none(), "tile ({m0}, {n0}) computed twice");
                // The CTA of rank r in a cluster takes row r of the cluster's rows.
                assert_eq!((m0 / cfg.block_m()) % cluster_m, cta % cluster_m);
            }
            // The CTAs of a cluster walk the same columns in the same order.
            if cluster_m == 2 {
                for (&(m0, n0), &cta) in &seen {
                    let peer_m0 = if cta % 2 == 0 { m0 + cfg.block_m() } else { m0 - cfg.block_m() };
                    assert_eq!(seen.get(&(peer_m0, n0)), Some(&(cta ^ 1)), "({m0}, {n0})");
                }
            }
        }
    }
}

#[test]
fn comparison_fails_on_poison_and_error() {
    let shape = GemmShape::new(2, 8, 64);
    let c: Vec<half::bf16> = (0..16).map(|i| half::bf16::from_f32(i as f32)).collect();
    let all = || (0..2).flat_map(|i| (0..8).map(move |j| (i, j)));
    assert!(compare(&c, &shape, all(), |i, j| (i * 8 + j) as f64).passed());
    // One bf16 ulp at 8 (0.0625) is within 2 * 2^-8 * 8 + 64 * 2^-18; four are not.
    assert!(compare(&c, &shape, all(), |i, j| (i * 8 + j) as f64 + if i * 8 + j == 8 { 0.0625 } else { 0.0 }).passed());
    let off = compare(&c, &shape, all(), |i, j| (i * 8 + j) as f64 + if i * 8 + j == 8 { 0.25 } else { 0.0 });
    assert!(!off.passed() && off.at.0 == 1 && off.at.1 == 0, "{off:?}");
    let mut poisoned = c.clone();
    poisoned[5] = POISON;
    assert!(compare(&poisoned, &shape, all(), |i, j| (i * 8 + j) as f64).worst.is_infinite());
    assert!(compare(&c, &shape, all(), |_, _| f64::NAN).worst.is_infinite(), "a poisoned reference fails too");
}

// ---- the DSL GEMM (examples/src/gallery/gemm_dsl.rs) against the builder's ----------------

/// The instructions of a SASS listing, one `(address, instruction)` per line (no encodings,
/// no NOPs).
fn instructions(listing: &str) -> Vec<(u32, String)> {
    let insts: Vec<(u32, String)> = listing
        .lines()
        .filter_map(|l| {
            // `        /*0120*/                   @P0 BRA 0x2b0 ;   /* 0x... */`
            let rest = l.trim().strip_prefix("/*")?;
            let (addr, inst) = rest.split_once("*/")?;
            let addr = u32::from_str_radix(addr, 16).ok()?;
            let inst = inst.split("/*").next().unwrap_or("").trim().trim_end_matches(';').trim();
            (!inst.is_empty() && !inst.starts_with("NOP")).then(|| (addr, inst.to_string()))
        })
        .collect();
    assert!(!insts.is_empty(), "no SASS instructions in:\n{listing}");
    insts
}

/// How many instructions are `op` (opcode with modifiers, e.g. `HGMMA.64x256x16.F32.BF16`),
/// whatever their predicate, operands and further modifiers.
fn count_with_modifiers(insts: &[(u32, String)], op: &str) -> usize {
    insts
        .iter()
        .filter(|(_, i)| {
            let mnemonic = i.split_whitespace().find(|w| !w.starts_with('@')).unwrap_or("");
            mnemonic == op || mnemonic.strip_prefix(op).is_some_and(|rest| rest.starts_with('.'))
        })
        .count()
}

/// The opcode of an instruction, without its predicate and modifiers (`@!P1 SYNCS.ARRIVE...`
/// -> `SYNCS`).
fn opcode(inst: &str) -> &str {
    let mut words = inst.split_whitespace();
    let first = words.next().unwrap_or("");
    let op = if first.starts_with('@') { words.next().unwrap_or("") } else { first };
    op.split('.').next().unwrap_or(op)
}

/// The consumer's mainloop: from the target of the first backward branch after the last
/// HGMMA (the loop over K blocks 1..) to that branch.
fn mainloop(sass: &[(u32, String)]) -> Vec<&str> {
    let last = sass.iter().rposition(|(_, i)| i.contains("HGMMA")).expect("HGMMAs");
    let (bra, target) = sass[last..]
        .iter()
        .find_map(|(a, i)| {
            let t = i.split("BRA ").nth(1)?.trim().strip_prefix("0x")?;
            let t = u32::from_str_radix(t, 16).ok()?;
            (t < *a).then_some((*a, t))
        })
        .expect("the mainloop's backward branch");
    sass.iter().filter(|(a, _)| (target..=bra).contains(a)).map(|(_, i)| i.as_str()).collect()
}

fn count(insts: &[&str], op: &str) -> usize {
    insts.iter().filter(|i| opcode(i) == op).count()
}

/// Every configuration both GEMMs implement that the DSL GEMM does (two consumer warpgroups
/// or one, no split-K; N-major B without a cluster).
fn dsl_configs() -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        v.push(GemmConfig::new(layout));
        v.extend(sweep_configs(layout));
        v.extend(phaser_examples::gemm_choice::choice_candidates(layout));
    }
    // Without split-K and the 192-row tile: compared with the builder GEMM's (split-K and the
    // 192-row tile have their own tests below).
    v.retain(|c| gemm::dsl::unsupported(c).is_none() && gemm::builder_unsupported(c).is_none());
    v.sort_by_key(|c| c.kernel_name());
    v.dedup();
    v
}

/// imm-trans-b of each `wgmma.mma_async` of `ptx` (the last immediate after the
/// accumulator), in program order: 1 where B is MN-major.
fn trans_b(ptx: &str) -> Vec<String> {
    ptx_text::find_all(ptx, "wgmma.mma_async.*")
        .iter()
        .map(|inst| {
            let ops = &inst.operands;
            let after = ops.iter().rposition(|o| o.starts_with('{')).expect("the accumulator list") + 1;
            ops[after..].iter().rfind(|o| !o.starts_with('%')).expect("imm-trans-b").to_string()
        })
        .collect()
}

/// The DSL GEMM assembles for sm_90a with zero spill bytes in every configuration (either B
/// layout), its PTX carries the DSL's Rust lines, its wgmmas transpose B exactly where B is
/// N-major (as the builder GEMM's do), and (at 4 stages) its SASS is the builder
/// GEMM's where it matters: the same HGMMAs (2 copies of the K block x 4 k16 steps x m64 slabs), and in the
/// mainloop the same HGMMA / WARPGROUP (arrive, depbar) / SYNCS (mbarrier) instructions with
/// at most a few more uniform-datapath instructions (each m64 slab's A descriptor is built from
/// its own sub-tile, where the builder adds the slab's offset to one descriptor).
#[test]
fn dsl_gemm_assembles_without_spills_and_issues_the_builders_hgmmas() {
    let configs = dsl_configs();
    assert!(configs.len() >= 10, "{} configurations", configs.len());
    let n_major = configs.iter().filter(|c| c.b_layout == BLayout::NMajor).count();
    assert!(n_major >= 4, "{n_major} N-major configurations");
    // Every DSL kernel, and the builder's beside it at 4 stages (the SASS comparison at one
    // depth per tile shape and cluster size: the depth only changes the ring's size).
    let (mut ptxs, mut kernels) = (Vec::new(), Vec::new());
    for cfg in configs {
        let name = cfg.kernel_name();
        let k = gemm::dsl::kernel(&cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ptx = emit_kernel(&k).unwrap();
        assert!(
            ptx.contains("// examples/src/gallery/gemm_dsl.rs:")
                && ptx.contains(".file 1 \"examples/src/gallery/gemm_dsl.rs\""),
            "{name}"
        );
        assert!(ptx_text::has_directive(&ptx, ".maxnreg 168") && ptx_text::has_directive(&ptx, ".reqntid 384, 1, 1"));
        assert!(
            ptx_text::has(&ptx, "setmaxnreg.dec.sync.aligned.u32 40")
                && ptx_text::has(&ptx, "setmaxnreg.inc.sync.aligned.u32 232")
        );
        assert_eq!(k.declared_dynamic_bytes(), cfg.dynamic_smem_bytes(), "{name}: the builder's shared memory");
        let builder = gemm_kernel(&cfg).unwrap();
        let builder_ptx = emit_kernel(&builder).unwrap();
        let trans = if cfg.b_layout == BLayout::NMajor { "1" } else { "0" };
        let ours_trans = trans_b(&ptx);
        assert_eq!(ours_trans.len(), 2 * 4 * (cfg.wg_m / 64) as usize, "{name}: wgmmas in the PTX");
        assert!(ours_trans.iter().all(|t| t == trans), "{name}: imm-trans-b {ours_trans:?}, want {trans}");
        assert_eq!(ours_trans, trans_b(&builder_ptx), "{name}: the builder's imm-trans-b");
        let builder_at = (cfg.stages == 4).then(|| {
            ptxs.push(builder_ptx);
            ptxs.len() - 1
        });
        ptxs.push(ptx);
        kernels.push((cfg, ptxs.len() - 1, builder_at));
    }
    let assembled = assemble_all(&ptxs);
    for (cfg, at, builder_at) in kernels {
        let name = cfg.kernel_name();
        let (verbose, ours) = &assembled[at];
        assert_eq!(spill_bytes(verbose), (0, 0), "{name} spills:\n{verbose}");
        assert!(!verbose.contains("C7508"), "setmaxnreg ignored (no register cap):\n{verbose}");
        let serialized = ptxas::wgmma_serialization(verbose, &ptxs[at]);
        assert!(serialized.is_empty(), "{name}: ptxas serialized the wgmmas: {serialized:#?}");
        let Some(builder_at) = builder_at else { continue };
        let theirs = &assembled[builder_at].1;
        let shape = format!("HGMMA.64x{}x16.F32.BF16", cfg.block_n);
        let hgmma = |s: &[(u32, String)]| count_with_modifiers(s, &shape);
        assert_eq!(hgmma(ours), 2 * 4 * (cfg.wg_m / 64) as usize, "{name}");
        assert_eq!(hgmma(ours), hgmma(theirs), "{name}");
        // The transposed B in the SASS too, on every HGMMA of both GEMMs.
        let tnsp = |s: &[(u32, String)]| s.iter().filter(|(_, i)| i.contains("HGMMA") && i.contains("tnspB")).count();
        let want_tnsp = if cfg.b_layout == BLayout::NMajor { hgmma(ours) } else { 0 };
        assert_eq!((tnsp(ours), tnsp(theirs)), (want_tnsp, want_tnsp), "{name}: HGMMAs with tnspB");
        let (ours_loop, theirs_loop) = (mainloop(ours), mainloop(theirs));
        for op in ["HGMMA", "WARPGROUP", "SYNCS", "BAR", "LDS", "STS"] {
            assert_eq!(count(&ours_loop, op), count(&theirs_loop, op), "{name}: {op} in the mainloop");
        }
        let extra_slabs = (cfg.wg_m / 64 - 1) as usize;
        assert!(
            ours_loop.len() <= theirs_loop.len() + 2 + 4 * extra_slabs,
            "{name}: the DSL mainloop has {} instructions, the builder's {}:\n{}\n---\n{}",
            ours_loop.len(),
            theirs_loop.len(),
            ours_loop.join("\n"),
            theirs_loop.join("\n")
        );
        eprintln!(
            "{name}: SASS {} instructions (builder {}), mainloop {} (builder {})",
            ours.len(),
            theirs.len(),
            ours_loop.len(),
            theirs_loop.len()
        );
    }
}

/// The FP8 DSL GEMMs (both scalings, the gallery's configurations; blockwise with one and with
/// two accumulator fragments in flight) assemble for sm_90a with no spills, their k32 e4m3
/// wgmmas unserialized, as QGMMAs: blockwise one site of 4 k-steps (a fresh fragment per K
/// block) or, two fragments, three (block 0 before the loop, then one per fragment in the
/// loop's two-block turn); per-tensor two of 4 per slab (the first K block and the rest).
/// With two fragments the promotion of one waits with `wait_group 1` (the other's block still
/// running) and reads the other fragment's registers than the wgmmas in flight write.
#[test]
fn fp8_dsl_gemms_assemble_without_spills_and_use_qgmma() {
    use phaser_examples::gallery::gemm_fp8_dsl::{kernel_release, tiles, Issue, Output, Release, Scales, Scaling};
    let (warp, wg) = (Release::PerWarp, Release::PerWarpgroup);
    let mut warpgroup_syncs = Vec::new();
    let variants = [
        (Scaling::Blockwise, 1, Scales::Global, Output::Bf16, Issue::Together, warp),
        (Scaling::Blockwise, 2, Scales::Global, Output::Bf16, Issue::Together, warp),
        (Scaling::Blockwise, 1, Scales::Shared, Output::Bf16, Issue::Together, warp),
        (Scaling::Blockwise, 1, Scales::Shared, Output::E4m3, Issue::Together, warp),
        (Scaling::PerTensor, 1, Scales::Global, Output::Bf16, Issue::Together, warp),
        (Scaling::Blockwise, 1, Scales::Global, Output::Bf16, Issue::Turns, warp),
        (Scaling::Blockwise, 1, Scales::Shared, Output::Bf16, Issue::Turns, warp),
        (Scaling::Blockwise, 1, Scales::Shared, Output::Bf16, Issue::Together, wg),
    ];
    let ptxs: Vec<String> = variants
        .iter()
        .map(|&(scaling, frags, scales, output, issue, release)| {
            let k = kernel_release(scaling, &tiles(scaling), frags, scales, output, issue, release)
                .unwrap_or_else(|e| panic!("{scaling:?}: {e}"));
            emit_kernel(&k).unwrap()
        })
        .collect();
    for ((scaling, frags, scales, output, issue, release), (ptx, (verbose, insts))) in
        variants.into_iter().zip(ptxs.iter().zip(assemble_all(&ptxs)))
    {
        let t = tiles(scaling);
        let what = format!("{scaling:?}, {frags} fragment(s), {scales:?} scales, {output:?} C, {issue:?}, {release:?}");
        // Shared scales release per warp (`bar.warp.sync` before lane 0's arrivals) or per
        // warpgroup (one `bar.sync` of its 128 threads before one thread's).
        let ptx_lines = |op: &str| ptx.lines().filter(|l| l.trim_start().starts_with(op)).count();
        if scales == Scales::Shared {
            let warp_syncs = ptx_lines("bar.warp.sync");
            assert_eq!(warp_syncs > 0, release == warp, "{what}: bar.warp.sync {warp_syncs}:\n{ptx}");
            if (output, issue) == (Output::Bf16, Issue::Together) {
                let wg_syncs =
                    ptx.lines().filter(|l| l.trim_start().starts_with("bar.sync") && l.contains(", 128;")).count();
                warpgroup_syncs.push((release, wg_syncs));
            }
        }
        let ptx = ptx.as_str();
        // Turns: the grant and the hand-off arrive on the other's barrier, the turn and the
        // last untaken turn sync on one's own, each over both warpgroups (256 threads).
        let turn_ops =
            |op: &str| ptx.lines().filter(|l| l.trim_start().starts_with(op) && l.contains(", 256;")).count();
        let turns = if issue == Issue::Turns { 2 } else { 0 };
        assert_eq!((turn_ops("bar.arrive"), turn_ops("bar.sync")), (turns, turns), "{what}:\n{ptx}");
        // The e4m3 output: one `cvt` per packed pair (64 per thread of a 64 x 128 slab: 32)
        // stored to shared memory by `st.shared.u16`, no stmatrix; bf16: a stmatrix.x4 per 16 columns.
        let cvts = ptx_text::count(&ptx, "cvt.rn.satfinite.e4m3x2.f32");
        let stmatrix = ptx.lines().filter(|l| l.trim_start().starts_with("stmatrix.")).count();
        match output {
            Output::E4m3 => {
                assert_eq!((cvts, stmatrix), (32, 0), "{what}: e4m3 pairs and stmatrix:\n{ptx}");
                assert_eq!(ptx_text::count(&ptx, "st.shared.u16"), 32, "{what}:\n{ptx}");
            }
            Output::Bf16 => assert_eq!((cvts, stmatrix), (0, (t.block_n / 16 * (t.wg_m / 64)) as usize), "{what}"),
        }
        // Shared scales: the consumers read them with `ld.shared` only (two A, one B per K
        // block), never from global memory; the producer loads the B scale and TMAs A's.
        let scale_loads_global = ptx_text::count(&ptx, "ld.global.nc.f32");
        match (scaling, scales) {
            (Scaling::Blockwise, Scales::Shared) => {
                assert_eq!(scale_loads_global, 1, "{what}: only the producer's B-scale load is global:\n{ptx}");
                assert_eq!(ptx_text::count(&ptx, "ld.shared.f32"), 3, "{what}:\n{ptx}");
            }
            (Scaling::Blockwise, Scales::Global) => assert_eq!(scale_loads_global, 3 * frags as usize, "{what}"),
            (Scaling::PerTensor, _) => assert_eq!(scale_loads_global, 0, "{what}"),
        }
        let mnemonic = format!("wgmma.mma_async.sync.aligned.m64n{}k32.f32.e4m3.e4m3", t.block_n);
        let sites = match scaling {
            Scaling::Blockwise => 4 * (2 * frags as usize - 1),
            Scaling::PerTensor => 2 * 4 * (t.wg_m / 64) as usize,
        };
        let in_ptx = ptx.lines().filter(|l| l.trim_start().starts_with(&mnemonic)).count();
        assert_eq!(in_ptx, sites, "{what}:\n{ptx}");
        let waits_one = ptx_text::count(&ptx, "wgmma.wait_group.sync.aligned 1");
        assert_eq!(waits_one, if scaling == Scaling::Blockwise { 2 * (frags as usize - 1) } else { 1 }, "{what}");
        assert_eq!(spill_bytes(&verbose), (0, 0), "{what} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{what}: ptxas serialized the wgmmas: {serialized:#?}");
        let qgmma = insts.iter().filter(|(_, i)| opcode(i) == "QGMMA").count();
        let listing = || insts.iter().map(|(_, i)| i.as_str()).collect::<Vec<_>>().join("\n");
        assert_eq!(qgmma, sites, "{what}:\n{}", listing());
        // Each fragment is its own registers: the QGMMAs' accumulators name `frags` distinct
        // first registers (one per fragment), so one can be promoted while the other is written.
        let accumulators: std::collections::BTreeSet<&str> = insts
            .iter()
            .filter(|(_, i)| opcode(i) == "QGMMA")
            .filter_map(|(_, i)| i.split_whitespace().nth(1).map(|r| r.trim_end_matches(',')))
            .collect();
        let want = if scaling == Scaling::Blockwise { frags as usize } else { (t.wg_m / 64) as usize };
        assert_eq!(accumulators.len(), want, "{what}: QGMMA accumulators {accumulators:?}");
        // ptxas kept the waits as written: a promotion waits for all but the newest group.
        let depbar_one = insts.iter().filter(|(_, i)| i.starts_with("WARPGROUP.DEPBAR.LE gsb0, 0x1")).count();
        assert_eq!(depbar_one, waits_one, "{what}: WARPGROUP.DEPBAR.LE 1 in the SASS:\n{}", listing());
    }
    // The release per warpgroup is one 128-thread `bar.sync` more than the epilogue's.
    assert_eq!(warpgroup_syncs.len(), 2, "{warpgroup_syncs:?}");
    assert_eq!(warpgroup_syncs[1].1, warpgroup_syncs[0].1 + 1, "{warpgroup_syncs:?}");
}

/// The 192-wide blockwise tile (`blockwise_tiles(192)`, shared scales: two B scales a stage)
/// assembles for sm_90a with no spills in the consumers' 232 registers (a 96-register fragment
/// and a 96-register accumulator), its four k32 wgmmas a K block unserialized QGMMAs of N =
/// 192 on one accumulator; the producer loads both B scales (two `ld.global.nc.f32`), the
/// consumers read two A and two B scales from shared memory, and the epilogue stores 12
/// stmatrix.x4 (three 64-column sub-tiles).
#[test]
fn fp8_blockwise_192_wide_assembles_without_spills() {
    use phaser_examples::gallery::gemm_dsl::Tiles;
    use phaser_examples::gallery::gemm_fp8_dsl::{blockwise_tiles, kernel_with, Scales, Scaling};
    let variants = [
        blockwise_tiles(192),
        Tiles { cluster: 1, ..blockwise_tiles(192) },
        Tiles { split: 3, ..blockwise_tiles(192) },
    ];
    let ptxs: Vec<String> = variants
        .iter()
        .map(|t| {
            emit_kernel(&kernel_with(Scaling::Blockwise, t, 1, Scales::Shared).unwrap_or_else(|e| panic!("{e}")))
                .unwrap()
        })
        .collect();
    for ((t, ptx), (verbose, insts)) in variants.iter().zip(&ptxs).zip(assemble_all(&ptxs)) {
        let what = format!("192 wide, cluster {}, split {}", t.cluster, t.split);
        let mma = ptx
            .lines()
            .filter(|l| l.trim_start().starts_with("wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3"))
            .count();
        assert_eq!(mma, 4, "{what}:\n{ptx}");
        assert_eq!(ptx_text::count(ptx, "ld.global.nc.f32"), 2, "{what}: the producer's two B-scale loads:\n{ptx}");
        assert_eq!(ptx_text::count(ptx, "ld.shared.f32"), 4, "{what}:\n{ptx}");
        let stmatrix = ptx.lines().filter(|l| l.trim_start().starts_with("stmatrix.")).count();
        assert_eq!(stmatrix, if t.split > 1 { 0 } else { 12 }, "{what}");
        assert_eq!(spill_bytes(&verbose), (0, 0), "{what} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{what}: ptxas serialized the wgmmas: {serialized:#?}");
        assert_eq!(insts.iter().filter(|(_, i)| opcode(i) == "QGMMA").count(), 4, "{what}");
        eprintln!("{what}: {}", verbose.lines().filter(|l| l.contains("registers")).collect::<Vec<_>>().join(" | "));
    }
}

/// The FP8 blockwise GEMM's split-K (3 slices; one fragment with global and shared scales, two
/// fragments with global) assembles for sm_90a with no spills and its QGMMAs unserialized, as
/// many as without split-K, and stores its promoted f32 partials with `st.global.v2.f32` (one
/// per register pair of the 64 x 128 slab: 32), no stmatrix and no TMA store of C.
#[test]
fn fp8_split_k_kernels_assemble_without_spills() {
    use phaser_examples::gallery::gemm_dsl::Tiles;
    use phaser_examples::gallery::gemm_fp8_dsl::{kernel_with, tiles, Scales, Scaling};
    let t = Tiles { split: 3, ..tiles(Scaling::Blockwise) };
    let variants = [(1, Scales::Global), (1, Scales::Shared), (2, Scales::Global)];
    let mut ptxs = Vec::new();
    for (frags, scales) in variants {
        let k = kernel_with(Scaling::Blockwise, &t, frags, scales).unwrap_or_else(|e| panic!("{e}"));
        let what = format!("{} split 3 ({frags} fragment(s), {scales:?} scales)", k.name());
        let ptx = emit_kernel(&k).unwrap();
        assert_eq!(ptx_text::count(&ptx, "st.global.v2.f32"), (t.block_n / 4) as usize, "{what}: partial stores");
        assert_eq!(ptx.lines().filter(|l| l.trim_start().starts_with("stmatrix.")).count(), 0, "{what}");
        assert_eq!(ptx_text::count(&ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"), 0, "{what}");
        // The reduction, `gemm_splitk_reduce`, may be its programmatic dependent (`ReduceLaunch`).
        assert_eq!(ptx_text::count(&ptx, "griddepcontrol.launch_dependents;"), 1, "{what}");
        ptxs.push(ptx);
    }
    let unsplit = kernel_with(Scaling::Blockwise, &tiles(Scaling::Blockwise), 1, Scales::Shared)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ptx_text::count(&emit_kernel(&unsplit).unwrap(), "griddepcontrol.launch_dependents;"),
        0,
        "no split, no dependent"
    );
    for (((frags, scales), ptx), (verbose, insts)) in variants.into_iter().zip(&ptxs).zip(assemble_all(&ptxs)) {
        let what = format!("split 3 ({frags} fragment(s), {scales:?} scales)");
        assert_eq!(spill_bytes(&verbose), (0, 0), "{what} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{what}: ptxas serialized the wgmmas: {serialized:#?}");
        let qgmma = insts.iter().filter(|(_, i)| opcode(i) == "QGMMA").count();
        assert_eq!(qgmma, 4 * (2 * frags as usize - 1), "{what}: QGMMAs");
    }
}

/// Split-K's kernels assemble for sm_90a with zero spill bytes: the DSL GEMM with 2, 4 and 8
/// slices (K-major, with and without a cluster; N-major without, its HGMMAs with tnspB) issues
/// the same HGMMAs as without split-K and
/// stores its f32 partials with `st.global.v2.f32` from the fragment (one per register pair
/// of every m64 slab; no TMA store, no `stmatrix`, and no staging tiles in its shared memory),
/// and the reduction kernel assembles; the GEMM releases the reduction, its programmatic
/// dependent, and the reduction waits for the GEMM's memory before its first global read.
#[test]
fn split_k_kernels_assemble_without_spills() {
    let n_major = GemmConfig { b_layout: BLayout::NMajor, ..gemm::dsl::config(false) };
    let (mut ptxs, mut configs) = (Vec::new(), Vec::new());
    for base in [gemm::dsl::config(true), gemm::dsl::config(false), n_major] {
        for split_k in [2, 4, 8] {
            let cfg = GemmConfig { split_k, ..base };
            let name = cfg.kernel_name();
            let kernels = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
            // No staging tiles: the stages are all of its shared memory.
            let stages_bytes = cfg.stages * cfg.stage_bytes();
            assert_eq!(kernels.gemm.declared_dynamic_bytes(), stages_bytes, "{name}: shared memory");
            assert_eq!(cfg.dynamic_smem_bytes(), stages_bytes, "{name}: the launch's shared memory");
            let ptx = emit_kernel(&kernels.gemm).unwrap();
            let stores = ptx_text::count(&ptx, "st.global.v2.f32");
            assert_eq!(stores, (cfg.wg_m / 64 * cfg.block_n / 4) as usize, "{name}: partial stores");
            assert_eq!(ptx_text::count(&ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16"), 0, "{name}");
            assert_eq!(ptx_text::count(&ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"), 0, "{name}");
            let reduce = kernels.reduce.as_ref().expect("a reduction");
            let reduce_ptx = emit_kernel(reduce).unwrap();
            assert_eq!(
                ptx_text::count(&reduce_ptx, "cvt.rn.bf16.f32"),
                2,
                "reduce {name}: one rounding per element of the pair"
            );
            // The reduction may be the GEMM's programmatic dependent (`ReduceLaunch`): the GEMM
            // releases it once, and it waits for the GEMM's memory before its first global read.
            assert_eq!(ptx_text::count(&ptx, "griddepcontrol.launch_dependents;"), 1, "{name}");
            assert_eq!(ptx_text::count(&reduce_ptx, "griddepcontrol.wait;"), 1, "reduce {name}");
            let (wait, first_read) = (reduce_ptx.find("griddepcontrol.wait;"), reduce_ptx.find("ld.global"));
            assert!(
                wait.is_some() && first_read.is_some() && wait < first_read,
                "reduce {name}: the wait after a read:\n{reduce_ptx}"
            );
            ptxs.push(ptx);
            ptxs.push(reduce_ptx);
            configs.push(cfg);
        }
    }
    assert_eq!(configs.len(), 9);
    let assembled = assemble_all(&ptxs);
    for (c, cfg) in configs.iter().enumerate() {
        let name = cfg.kernel_name();
        let ((verbose, insts), (reduce_verbose, _)) = (&assembled[2 * c], &assembled[2 * c + 1]);
        assert_eq!(spill_bytes(verbose), (0, 0), "{name} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(verbose, &ptxs[2 * c]);
        assert!(serialized.is_empty(), "{name}: ptxas serialized the wgmmas: {serialized:#?}");
        let shape = format!("HGMMA.64x{}x16.F32.BF16", cfg.block_n);
        let hgmmas = 2 * 4 * (cfg.wg_m / 64) as usize;
        assert_eq!(count_with_modifiers(insts, &shape), hgmmas, "{name}");
        let tnsp = insts.iter().filter(|(_, i)| i.contains("HGMMA") && i.contains("tnspB")).count();
        assert_eq!(tnsp, if cfg.b_layout == BLayout::NMajor { hgmmas } else { 0 }, "{name}: HGMMAs with tnspB");
        assert_eq!(spill_bytes(reduce_verbose), (0, 0), "reduce {name} spills:\n{reduce_verbose}");
    }
}

/// Every decode candidate (`gemm_choice::decode_candidates`) of the 128-row tile (two consumer
/// warpgroups; {32, 64, 128, 256} columns, the deepest ring that fits, split-K into 1..16 slices,
/// reduced by a second launch, in the kernel by the last slice or by every slice) assembles for
/// sm_90a with zero spill bytes and unserialized wgmmas, with the HGMMAs of its tile (the
/// 64-row tile's: the next test, run beside it); the candidates that differ only in their
/// split count are one program to ptxas, held so in their PTX, and one of them is assembled.
/// The in-kernel reductions' kernels release-store and acquire-load their flags
/// (`st.release.gpu` / `ld.acquire.gpu`) and have no reduction launch; the others have no
/// flag access at all.
#[test]
fn decode_candidates_assemble_without_spills() {
    let cands = phaser_examples::gemm_choice::decode_candidates(BLayout::KMajor);
    assert!(cands.iter().any(|c| c.split_k == 16 && c.reduce == SplitReduce::InKernel && c.block_n == 64));
    assert!(cands.iter().any(|c| c.stages == 8), "a ring deeper than the model's 6: {cands:?}");
    // The narrow tiles without split-K: 32 columns (C from the registers) and 64 (one staging
    // sub-tile), on both tile heights.
    for (consumers, block_n) in [(1, 32), (2, 32), (1, 64), (2, 64)] {
        let narrow = |c: &&GemmConfig| (c.consumers, c.block_n, c.split_k) == (consumers, block_n, 1);
        assert!(cands.iter().any(|c| narrow(&c)), "{consumers} warpgroup(s) x {block_n} columns, no split: {cands:?}");
    }
    assemble_decode_candidates(cands.into_iter().filter(|c| c.consumers == 2).collect());
}

/// The same for the 64-row tile's decode candidates (one consumer warpgroup): 256 threads
/// (`.reqntid`) with `.maxnreg 248`, both in-kernel reductions among them.
#[test]
fn decode_candidates_of_the_64_row_tile_assemble_without_spills() {
    let cands: Vec<GemmConfig> = phaser_examples::gemm_choice::decode_candidates(BLayout::KMajor)
        .into_iter()
        .filter(|c| c.consumers == 1)
        .collect();
    for reduce in [SplitReduce::InKernel, SplitReduce::EverySlice] {
        let one_wg = |c: &&GemmConfig| c.block_n == 256 && c.split_k == 8 && c.reduce == reduce;
        assert!(cands.iter().any(|c| one_wg(&c)), "a 64 x 256 tile, 8 slices, {reduce:?}: {cands:?}");
    }
    assemble_decode_candidates(cands);
}

/// N-major B's decode candidates (both tile heights; no 32-column tile, which is K-major
/// only), which the model now scores for N-major shapes too: the same checks, and every HGMMA
/// takes B transposed (`tnspB`).
#[test]
fn decode_candidates_of_n_major_b_assemble_without_spills() {
    let cands = phaser_examples::gemm_choice::decode_candidates(BLayout::NMajor);
    assert!(cands.iter().all(|c| c.b_layout == BLayout::NMajor && c.block_n != gemm::NARROW_BLOCK_N), "{cands:?}");
    for consumers in [1, 2] {
        assert!(
            cands.iter().any(|c| c.consumers == consumers && c.split_k == 16),
            "{consumers} warpgroup(s): {cands:?}"
        );
    }
    assemble_decode_candidates(cands);
}

/// Assemble each of `cands` and check it (the three tests above). The split count enters a
/// kernel only as integer immediates (its slice arithmetic), so of the candidates that differ
/// only in it, one is assembled (the first) and each other's PTX is held to differ from that
/// one's in integer literals and comments alone: ptxas sees the same program.
fn assemble_decode_candidates(cands: Vec<GemmConfig>) {
    assert!(!cands.is_empty());
    let mut ptxs: Vec<String> = Vec::new();
    let mut assembled_cfgs: Vec<GemmConfig> = Vec::new();
    let same_but_split = |a: &GemmConfig, b: &GemmConfig| {
        a.split_k > 1 && b.split_k > 1 && GemmConfig { split_k: b.split_k, ..*a } == *b
    };
    for cfg in &cands {
        let name = cfg.kernel_name();
        let kernels = gemm::dsl::kernels(cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fixup = cfg.split_k > 1 && cfg.reduce != SplitReduce::TwoLaunch;
        assert_eq!(kernels.reduce.is_some(), cfg.split_k > 1 && !fixup, "{name}: the reduction launch");
        let ptx = emit_kernel(&kernels.gemm).unwrap();
        let releases = ptx_text::count(&ptx, "st.release.gpu.global.u32");
        let acquires = ptx_text::count(&ptx, "ld.acquire.gpu.global.u32");
        assert_eq!((releases > 0, acquires > 0), (fixup, fixup), "{name}: flag accesses {releases} / {acquires}");
        // Only a GEMM followed by the reduction's launch releases a programmatic dependent.
        let dependents = ptx_text::count(&ptx, "griddepcontrol.launch_dependents;");
        assert_eq!(dependents, usize::from(kernels.reduce.is_some()), "{name}: launch_dependents");
        let threads = if cfg.consumers == 1 { ".reqntid 256, 1, 1" } else { ".reqntid 384, 1, 1" };
        let maxnreg = if cfg.consumers == 1 { ".maxnreg 248" } else { ".maxnreg 168" };
        assert!(ptx.contains(threads) && ptx.contains(maxnreg), "{name}: {threads}, {maxnreg}");
        match assembled_cfgs.iter().position(|a| same_but_split(a, cfg)) {
            Some(at) => {
                let differ = differs_beyond_integer_literals(&ptxs[at], &ptx);
                assert!(differ.is_none(), "{name} against {}: {differ:?}", assembled_cfgs[at].kernel_name());
            }
            None => {
                ptxs.push(ptx);
                assembled_cfgs.push(*cfg);
            }
        }
    }
    assert!(assembled_cfgs.len() < cands.len(), "no candidate differs from another only in its split");
    for ((cfg, ptx), (verbose, insts)) in assembled_cfgs.iter().zip(&ptxs).zip(assemble_all(&ptxs)) {
        let name = cfg.kernel_name();
        assert_eq!(spill_bytes(&verbose), (0, 0), "{name} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{name}: ptxas serialized the wgmmas: {serialized:#?}");
        let shape = format!("HGMMA.64x{}x16.F32.BF16", cfg.block_n);
        let hgmmas = 2 * 4 * (cfg.wg_m / 64) as usize;
        assert_eq!(count_with_modifiers(&insts, &shape), hgmmas, "{name}");
        let tnsp = insts.iter().filter(|(_, i)| i.contains("HGMMA") && i.contains("tnspB")).count();
        assert_eq!(tnsp, if cfg.b_layout == BLayout::NMajor { hgmmas } else { 0 }, "{name}: HGMMAs with tnspB");
    }
}

/// The first pair of lines of `a` and `b` that differ in more than integer literals (comment
/// lines aside), or a different line count; `None` when they are the same program but for
/// immediates.
fn differs_beyond_integer_literals(a: &str, b: &str) -> Option<String> {
    let code = |s: &str| -> Vec<String> {
        s.lines().map(str::trim).filter(|l| !l.starts_with("//")).map(str::to_string).collect()
    };
    let (a, b) = (code(a), code(b));
    if a.len() != b.len() {
        return Some(format!("{} lines against {}", a.len(), b.len()));
    }
    let tokens = |l: &str| -> Vec<String> {
        l.split(|c: char| c.is_whitespace() || ",;[]{}()+".contains(c))
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    let literal = |t: &str| t.parse::<i64>().is_ok();
    a.iter().zip(&b).find_map(|(x, y)| {
        let (tx, ty) = (tokens(x), tokens(y));
        let same = tx.len() == ty.len() && tx.iter().zip(&ty).all(|(p, q)| p == q || (literal(p) && literal(q)));
        (!same).then(|| format!("`{x}` against `{y}`"))
    })
}

#[test]
fn ptx_that_differs_in_a_register_or_an_opcode_is_not_the_same_program() {
    let base = "// kernel a\n\tmul.lo.u32 %r53, %r52, 16;\n\tdiv.u32 %r83, %r58, 16;\n";
    assert_eq!(differs_beyond_integer_literals(base, &base.replace("16", "2").replace("kernel a", "kernel b")), None);
    assert!(differs_beyond_integer_literals(base, &base.replace("%r52", "%r51")).is_some());
    assert!(differs_beyond_integer_literals(base, &base.replace("div.u32", "rem.u32")).is_some());
    assert!(differs_beyond_integer_literals(base, &format!("{base}\tret;\n")).is_some());
}

/// The 192-row tile (three consumer warpgroups): the chooser's candidates (192 x {128, 192},
/// K-major with and without a cluster, N-major without) and split-K reduced in the kernel
/// both ways assemble for sm_90a with 512 threads (`.reqntid`), `.maxnreg 128`, the
/// producer's 40 and the consumers' 152 registers (`setmaxnreg`), zero spill bytes, their
/// wgmmas unserialized, one HGMMA per k16 step and copy of the K block. Past the host's
/// refusal (`Tiles::register_problem`), 192 x 256 does not assemble at all: ptxas asks for 154
/// registers, the refusal's numbers (128 accumulator + 32 over 128).
#[test]
fn the_192_row_tile_assembles_within_128_registers() {
    use phaser_examples::gallery::gemm_dsl::{self, Reduce, Tiles};
    let mut tiles: Vec<(String, Tiles)> = [BLayout::KMajor, BLayout::NMajor]
        .into_iter()
        .flat_map(phaser_examples::gemm_choice::choice_candidates)
        .filter(|c| c.consumers == 3)
        .map(|c| (c.kernel_name(), gemm::dsl::tiles(&c)))
        .collect();
    assert_eq!(tiles.len(), 6, "192 x {{128, 192}}: K-major c1, c2, N-major c1: {tiles:?}");
    let split = Tiles {
        block_n: 128,
        wg_m: 64,
        stages: 3,
        cluster: 1,
        group_m: 8,
        split: 3,
        b_n_major: false,
        reduce: Reduce::LastSlice,
        consumers: 3,
        a_box_rows: None,
    };
    tiles.push(("192x128 k3f".into(), split));
    tiles.push(("192x128 k3e".into(), Tiles { reduce: Reduce::EverySlice, ..split }));
    let mut ptxs = Vec::new();
    for (name, t) in &tiles {
        let k = t.kernel().unwrap_or_else(|e| panic!("{name}: {e}"));
        let ptx = emit_kernel(&k).unwrap();
        assert!(
            ptx_text::has_directive(&ptx, ".maxnreg 128") && ptx_text::has_directive(&ptx, ".reqntid 512, 1, 1"),
            "{name}"
        );
        assert!(
            ptx_text::has(&ptx, "setmaxnreg.dec.sync.aligned.u32 40")
                && ptx_text::has(&ptx, "setmaxnreg.inc.sync.aligned.u32 152"),
            "{name}"
        );
        ptxs.push(ptx);
    }
    for (((name, t), ptx), (verbose, insts)) in tiles.iter().zip(&ptxs).zip(assemble_all(&ptxs)) {
        assert_eq!(spill_bytes(&verbose), (0, 0), "{name} spills:\n{verbose}");
        let serialized = ptxas::wgmma_serialization(&verbose, ptx);
        assert!(serialized.is_empty(), "{name}: ptxas serialized the wgmmas: {serialized:#?}");
        assert_eq!(count_with_modifiers(&insts, &format!("HGMMA.64x{}x16.F32.BF16", t.block_n)), 2 * 4, "{name}");
    }
    // The refused tile, built past the refusal.
    let wide = Tiles { block_n: 256, split: 1, reduce: Reduce::SecondLaunch, ..split };
    let why = wide.register_problem().expect("refused");
    assert!(why.contains("128 accumulator registers per consumer thread + 32 for the rest, over the 128"), "{why}");
    let k = gemm_dsl::gemm_dsl::kernel_for(256, 64, 3, 1, 8, 1, 0, 0, 3, 64).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = ptxas::assemble_to(
        &ptxas::require(),
        &emit_kernel(&k).unwrap(),
        "sm_90a",
        &["-v"],
        &dir.path().join("wide.cubin"),
    )
    .expect_err("192 x 256 does not fit 128 registers");
    assert!(e.to_string().contains("C7602") && e.to_string().contains("154"), "{e}");
}
