//! The runtime's JIT paths on the GPU (`runtime/src/cuda/jit.rs`): with line info the driver's
//! linker makes a cubin that carries the kernel's Rust lines, which the cubin cache keeps for
//! the next device (a fresh module cache); without it, the plain driver JIT.

use phaser::runtime::cuda::jit::{self, JitOptions, LoadPath};
use phaser::runtime::cuda::CudaDevice;
use phaser::{Device, Target};
use phaser_examples::gallery::{self, Size};

fn device(jit: JitOptions) -> Device {
    let mut d = CudaDevice::new(0).expect("needs a CUDA GPU");
    d.set_jit_options(jit);
    Device::Cuda(d)
}

fn last_path(dev: &Device) -> Option<LoadPath> {
    match dev {
        Device::Cuda(d) => d.modules.last_load().map(|s| s.path),
        Device::Sim(_) => None,
    }
}

fn run_seed(dev: &Device) {
    let e = gallery::find("seed_producer_consumer").unwrap();
    let r = gallery::run(&e, dev, Size::Quick, 7).unwrap();
    assert!(r.outcome.passed, "{}", r.outcome.detail);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn line_info_cubins_are_linked_once_then_loaded_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let with_cache = JitOptions { line_info: true, cubin_cache: Some(dir.path().to_path_buf()), prebuilt_dir: None };
    let first = device(with_cache.clone());
    run_seed(&first);
    assert_eq!(last_path(&first), Some(LoadPath::Linked));
    let cubins = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(cubins, 1, "one kernel, one cached cubin");
    // Another device object has an empty module cache: the cubin comes from disk.
    let second = device(with_cache);
    run_seed(&second);
    assert_eq!(last_path(&second), Some(LoadPath::CubinCacheHit));
    // The plain driver JIT.
    let plain = device(JitOptions::plain());
    run_seed(&plain);
    assert_eq!(last_path(&plain), Some(LoadPath::DriverPtx));
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_linked_cubin_carries_the_rust_line_table() {
    let _dev = Device::cuda(0).expect("needs a CUDA GPU");
    let k = gallery::seeds::producer_consumer(Target::Sm90a).unwrap();
    let ptx = phaser::codegen::emit_kernel(&k).unwrap();
    let cubin = jit::link_with_line_info(&ptx, k.name()).unwrap();
    let has = |needle: &[u8]| cubin.windows(needle.len()).any(|w| w == needle);
    assert!(cubin.starts_with(b"\x7fELF"));
    assert!(has(b".nv_debug_line_sass"), "no SASS line table in the linked cubin");
    // DWARF line tables keep a file as directory + name: look for both parts.
    assert!(has(b"seeds.rs") && has(b"examples/src/gallery"), "the line table does not name the Rust file");
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_jit_error_carries_the_jit_log() {
    let _dev = Device::cuda(0).expect("needs a CUDA GPU");
    let bad = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry broken() { bogus.instruction; }\n";
    let err = jit::link_with_line_info(bad, "broken").unwrap_err().to_string();
    assert!(err.contains("could not compile kernel `broken`") && err.contains("bogus"), "{err}");
}

/// Where each JIT path puts the 1024-byte-aligned dynamic shared window (`.extern .shared
/// .align 1024`) of a kernel that also has static shared memory: the layout every TMA and
/// wgmma kernel relies on (128-byte swizzle needs 1024-byte-aligned tiles). The driver's
/// linker placed it at 0x410 (16-byte aligned) on the H200 with driver 580 (2026-12-01), the
/// plain JIT at 0x800; so with line info asked for, such a kernel skips the linker.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_dynamic_window_is_1024_aligned_on_each_jit_path() {
    let k = window_probe();
    assert!(jit::has_dynamic_window(&phaser::codegen::emit_kernel(&k).unwrap()));
    for (name, opts) in
        [("plain", JitOptions::plain()), ("line info asked for", JitOptions { line_info: true, ..JitOptions::plain() })]
    {
        let dev = device(opts);
        let got = window_addresses(&dev, &k);
        eprintln!("{name}: static at {:#x}, dynamic window at {:#x}", got[0], got[1]);
        assert_eq!(got[1] % 1024, 0, "{name}: the dynamic window is not 1024-byte aligned");
        assert_eq!(last_path(&dev), Some(LoadPath::DriverPtx), "{name}: a dynamic window never takes the linker");
    }
}

/// A kernel with static shared memory and a dynamic window that stores both addresses.
fn window_probe() -> phaser::Kernel {
    use phaser::codegen::builder::KernelBuilder;
    use phaser::codegen::ir::{Type, Value};
    let mut k = KernelBuilder::new("window_probe", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let stat = k.alloc_shared("stat", Type::U32, 3);
    let dynamic = k.dynamic_shared(Type::U32, 0);
    let s = k.shared_base_addr(stat);
    let d = k.shared_base_addr(dynamic);
    k.st_shared(stat, Value::u32(0), Value::u32(1));
    k.st_global(out, Value::u32(0), s);
    k.st_global(out, Value::u32(1), d);
    k.finish().unwrap()
}

/// The static array's and the dynamic window's shared addresses, as `window_probe` sees them.
fn window_addresses(dev: &Device, k: &phaser::Kernel) -> Vec<u32> {
    use phaser::runtime::{Arg, LaunchConfig};
    let buf = dev.alloc::<u32>(2).unwrap();
    dev.launch(k, LaunchConfig::linear(1, 32).with_dynamic_shared(2048), &[Arg::buffer(&buf)]).unwrap();
    dev.download(&buf).unwrap()
}

/// The ptxas the prebuilt-cubin test assembles with: the project's finder, else the CUDA
/// toolkit's; without either the test fails (a missing tool is not a pass).
fn find_ptxas() -> std::path::PathBuf {
    let toolkit = std::path::PathBuf::from("/usr/local/cuda/bin/ptxas");
    phaser::codegen::ptxas::find()
        .or_else(|e| if toolkit.is_file() { Ok(toolkit) } else { Err(e) })
        .unwrap_or_else(|e| panic!("{e} (nor /usr/local/cuda/bin/ptxas): the prebuilt-cubin test assembles with it"))
}

/// Cubins prebuilt by `phaser emit --cubin-dir` (ptxas ahead of time) load without any JIT
/// (`LoadPath::Prebuilt`) and run correctly; one that does not load is ignored (the JIT runs);
/// a prebuilt cubin keeps the dynamic window 1024-byte aligned.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_prebuilt_cubin_from_the_cli_loads_without_jit() {
    let ptxas = find_ptxas();
    let dir = tempfile::tempdir().unwrap();
    let (out, prebuilt) = (dir.path().join("ptx"), dir.path().join("cubins"));
    // The CLI binary: cargo's (tests run here), else the one next to this test binary (the GPU
    // bundle copies both into .gpu/bin).
    let beside = std::env::current_exe().unwrap().with_file_name("phaser");
    let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_phaser"));
    let phaser_bin = [built, beside].into_iter().find(|p| p.is_file()).expect("the phaser CLI binary");
    let cli = std::process::Command::new(&phaser_bin)
        .env("PTXAS", &ptxas)
        .args(["emit", "--kernel", "seed_producer_consumer", "--out"])
        .arg(&out)
        .arg("--cubin-dir")
        .arg(&prebuilt)
        .output()
        .unwrap();
    assert!(cli.status.success(), "{}", String::from_utf8_lossy(&cli.stderr));
    let with_prebuilt = JitOptions { prebuilt_dir: Some(prebuilt.clone()), ..JitOptions::plain() };
    let dev = device(with_prebuilt.clone());
    run_seed(&dev);
    assert_eq!(last_path(&dev), Some(LoadPath::Prebuilt), "the CLI's cubin was not found or not loaded");
    // The same name holding something that does not load: ignored, the driver JIT runs.
    let cubins: Vec<_> = std::fs::read_dir(&prebuilt).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(cubins.len(), 1, "{cubins:?}");
    std::fs::write(&cubins[0], b"\x7fELF but not a cubin").unwrap();
    let dev = device(with_prebuilt.clone());
    run_seed(&dev);
    assert_eq!(last_path(&dev), Some(LoadPath::DriverPtx));
    // The dynamic window where the plain JIT puts it (the linker's misplacement is not ptxas's).
    let k = window_probe();
    let ptx = k.ptx_with(&phaser::codegen::EmitOptions {
        wait_timeout_ns: phaser::runtime::watchdog::Watchdog::DEFAULT.timeout_ns(),
        ..Default::default()
    });
    let ptx = ptx.unwrap();
    let name = jit::prebuilt_cubin_name(&ptx).unwrap();
    phaser::codegen::ptxas::assemble_to(&ptxas, &ptx, "sm_90a", &["-lineinfo"], &prebuilt.join(name)).unwrap();
    let dev = device(with_prebuilt);
    let got = window_addresses(&dev, &k);
    assert_eq!(last_path(&dev), Some(LoadPath::Prebuilt));
    eprintln!("prebuilt: static at {:#x}, dynamic window at {:#x}", got[0], got[1]);
    assert_eq!(got[1] % 1024, 0, "prebuilt: the dynamic window is not 1024-byte aligned");
}
