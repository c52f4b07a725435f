//! Quickstart: write a kernel with `#[phaser::kernel]`, print its PTX, and (when a device is
//! available) launch it. `cargo run --bin dsl_quickstart`.

/// A device helper, inlined into every kernel that calls it.
#[phaser::device]
fn flip(parity: u32) -> u32 {
    parity ^ 1
}

/// One producer thread fills a shared array and arrives on a barrier; the whole block waits
/// and then copies the array out, scaled by `scale`. `N` (elements) is a compile-time value.
#[phaser::kernel(target = "sm_90a")]
fn scaled_copy(out: &mut [f32], scale: f32, #[comptime] N: u32) {
    let bar = T.alloc_barriers(1);
    let data = T.alloc_shared::<f32>([N]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    let mut phase = 0;
    if tid == 0 {
        for i in 0..N {
            data[i] = i as f32 * scale;
        }
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    }
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), phase);
    phase = flip(phase);
    let mut i = tid;
    while i < N {
        out[i] = data[i];
        i += T.block_dim();
    }
}

fn main() {
    // Each distinct `N` is built once and cached.
    match scaled_copy::ptx_for(64) {
        Ok(ptx) => println!("{ptx}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    let (dev, why) = phaser::Device::best();
    if let Some(why) = why {
        eprintln!("(no GPU: {why}; the simulator is used)");
    }
    let mut out = dev.alloc::<f32>(64).expect("alloc");
    match scaled_copy::launch(&dev, phaser::LaunchConfig::linear(1, 128), &mut out, 0.5, 64) {
        Ok(_) => println!("out[..4] = {:?}", &dev.download(&out).expect("download")[..4]),
        Err(e) => eprintln!("launch: {e}"),
    }
}
