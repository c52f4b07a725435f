//! The GEMM kernel without a GPU: every configuration assembles for sm_90a with zero spill
//! bytes (and, where cuobjdump is installed next to ptxas, its SASS has the HGMMAs), bad
//! shapes and configurations are refused with the constraint named, and the simulator
//! reports wgmma as an unsupported op instead of failing some other way.

use phaser::codegen::{emit_kernel, ptxas};
use phaser::Device;
use phaser_examples::gemm::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn all_configs() -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        v.push(GemmConfig::new(layout));
        v.extend(sweep_configs(layout));
    }
    v
}

/// `ptxas -v` output and the cubin it wrote.
fn assemble_verbose(ptxas: &Path, ptx: &str, name: &str) -> (String, PathBuf) {
    let dir = std::env::temp_dir().join(format!("phaser-gemm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, cubin) = (dir.join(format!("{name}.ptx")), dir.join(format!("{name}.cubin")));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas).args(["-arch=sm_90a", "-v"]).arg(&src).arg("-o").arg(&cubin).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ptxas rejected {name}:\n{text}");
    (text, cubin)
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
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    let cuobjdump = ptxas.with_file_name("cuobjdump");
    let mut hgmma_checked = 0;
    for cfg in all_configs() {
        let k = gemm_kernel(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let ptx = emit_kernel(&k).unwrap();
        // Readable PTX: the pipeline's ops carry the Rust lines of gemm.rs.
        assert!(ptx.contains("// examples/src/gemm.rs:"), "{}", cfg.kernel_name());
        assert!(ptx.contains("setmaxnreg.dec.sync.aligned.u32 40;") && ptx.contains(".maxnreg 168"));
        let (verbose, cubin) = assemble_verbose(&ptxas, &ptx, &k.name);
        assert_eq!(spill_bytes(&verbose), (0, 0), "{} spills:\n{verbose}", k.name);
        assert!(!verbose.contains("C7508"), "setmaxnreg ignored (no register cap):\n{verbose}");
        if cuobjdump.is_file() {
            let out = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().unwrap();
            let sass = String::from_utf8_lossy(&out.stdout);
            let shape = format!("HGMMA.64x{}x16.F32.BF16", cfg.block_n);
            // Two copies of the K block (the peeled first one and the loop), 4 k16 steps each,
            // per m64 slice of the warpgroup.
            let want = 2 * 4 * (cfg.wg_m / 64) as usize;
            assert_eq!(sass.matches(&shape).count(), want, "{}:\n{sass}", k.name);
            // The shared window's base is read once, not per loop iteration.
            assert_eq!(sass.matches("SR_CgaCtaId").count(), 1, "{}", k.name);
            // No GPU-scope fence on the hot path: only the barrier-init fence of a cluster.
            assert_eq!(sass.matches("MEMBAR.ALL.GPU").count(), (cfg.cluster_m > 1) as usize, "{}", k.name);
            hgmma_checked += 1;
        }
    }
    if hgmma_checked == 0 {
        eprintln!("note: cuobjdump not found next to ptxas (pip install nvidia-cuda-cuobjdump): SASS not checked");
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
fn the_simulator_reports_wgmma_as_unsupported() {
    let dev = Device::sim(Default::default());
    let cfg = GemmConfig { cluster_m: 1, stages: 2, ..GemmConfig::new(BLayout::KMajor) };
    let shape = GemmShape::new(128, 256, 64);
    let a = random_bf16(128 * 64, 1);
    let b = random_bf16(256 * 64, 2);
    let bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
    let k = gemm_kernel(&cfg).unwrap();
    let e = launch(&dev, &k, &cfg, &bufs).expect_err("the simulator does not model wgmma yet").to_string();
    assert!(e.contains("unsupported op `wgmma"), "{e}");
    eprintln!("simulator: {e}");
}
