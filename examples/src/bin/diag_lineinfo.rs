//! Does the kernel's Rust line reach the NVIDIA tools? Modes for the GPU run's line-info steps
//! (`.ci/gpu-run.sh`, `LINEINFO=1`), each printing `expected: <file>:<line>` first so the step
//! can look for exactly that line in the tool's output:
//!
//! - `oob`: a kernel whose load at a known Rust line reads 1 GiB past its buffer. Under
//!   `compute-sanitizer --tool memcheck` the report should name that line; under `cuda-gdb`
//!   the illegal-address exception should stop there.
//! - `cubin DIR`: the cubin the runtime's line-info JIT (`cuLinkCreate` with
//!   `CU_JIT_GENERATE_LINE_INFO`) makes from a gallery kernel, written to DIR for
//!   `nvdisasm -g` / `cuobjdump`, which should show `examples/src/gallery/...rs` lines.
//! - `profile`: one launch of `stream_axpb` (quick size) for `ncu --import-source yes`, whose
//!   source page should show the kernel's Rust file.

use phaser::codegen::builder::{GlobalPtr, KernelBuilder};
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::codegen::{emit_kernel, Target};
use phaser::{Arg, Device, LaunchConfig};
use phaser_examples::gallery;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("oob") => oob(),
        Some("cubin") => cubin(args.get(1).map(String::as_str).unwrap_or("lineinfo")),
        Some("profile") => profile(),
        _ => Err("usage: diag_lineinfo oob | cubin DIR | profile".into()),
    }
}

fn oob() -> Result<(), Box<dyn std::error::Error>> {
    let dev = Device::cuda(0)?;
    let mut k = KernelBuilder::new("lineinfo_oob", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    // 2^28 u32 = 1 GiB past the start of a 32-element buffer: memcheck names the load, and
    // without the tool the load faults (illegal address).
    let far = k.add(tid, Value::u32(1 << 28));
    let line = load_far_store_near(&mut k, out, far, tid);
    let k = k.finish()?;
    println!("expected: {}:{line}", file!());
    let buf = dev.upload(&[0u32; 32])?;
    match dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&buf)]) {
        Ok(_) => println!("the out-of-bounds load did not fault (memcheck reports it if it ran under the tool)"),
        Err(e) => println!("launch error, as expected: {e}"),
    }
    Ok(())
}

/// `out[near] = out[far]` on one Rust line, which it returns. A faulting load, not a store: a
/// store is fire-and-forget, so the warp may exit before its fault comes back, and then a live
/// cuda-gdb has no warp to stop at; the store needs the load's value, so the warp waits at it
/// for the fault. Whichever of the two instructions a tool names, the line is this one.
#[rustfmt::skip]
fn load_far_store_near(k: &mut KernelBuilder, out: GlobalPtr, far: Value, near: Value) -> u32 {
    let v = k.ld_global(out, far); k.st_global(out, near, v); line!()
}

fn cubin(dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    // A current context for the JIT.
    let _dev = Device::cuda(0)?;
    std::fs::create_dir_all(dir)?;
    let stream = gallery::find("stream_axpb").ok_or("no stream_axpb example")?;
    for k in [gallery::seeds::producer_consumer(Target::Sm90a)?, (stream.kernels)(Target::Sm90a)?.remove(0)] {
        let ptx = emit_kernel(&k)?;
        // nvdisasm -g prints `//## File "<file>", line N`: expect the file.
        let file = k.wait_sites().first().and_then(|s| s.loc).map(|l| l.file).unwrap_or_default();
        println!("expected: \"{file}\"");
        let bytes = phaser::runtime::cuda::jit::link_with_line_info(&ptx, k.name())?;
        let path = std::path::Path::new(dir).join(format!("{}.cubin", k.name()));
        std::fs::write(&path, &bytes)?;
        println!(
            "wrote {} ({} bytes, linked by the driver with CU_JIT_GENERATE_LINE_INFO)",
            path.display(),
            bytes.len()
        );
    }
    Ok(())
}

fn profile() -> Result<(), Box<dyn std::error::Error>> {
    let dev = Device::cuda(0)?;
    let e = gallery::find("stream_axpb").ok_or("no stream_axpb example")?;
    println!("expected: examples/src/gallery/stream_axpb.rs");
    let r = gallery::run(&e, &dev, gallery::Size::Quick, 1)?;
    println!("stream_axpb quick: {}", if r.outcome.passed { "ok" } else { "WRONG OUTPUT" });
    Ok(())
}
