//! Every DSL kernel's PTX assembles with ptxas for sm_90a. A missing ptxas fails the test:
//! a check that did not run is not a pass.

use phaser::codegen::ptxas;
use phaser_examples::gallery::dsl_seeds::*;

fn assemble(name: &str, ptx: &str) {
    if let Err(msg) = ptxas::assemble(&ptxas::require(), ptx, "sm_90a") {
        panic!("ptxas rejected {name}:\n{msg}\n--- PTX ---\n{ptx}");
    }
}

#[test]
fn every_dsl_gallery_kernel_assembles() {
    let mut n = 0;
    for e in phaser_examples::gallery::examples().iter().filter(|e| e.name.starts_with("dsl_")) {
        for k in (e.kernels)(phaser::Target::Sm90a).unwrap() {
            assemble(k.name(), &phaser::codegen::emit_kernel(&k).unwrap());
            n += 1;
        }
    }
    assert_eq!(
        n, 9,
        "the four DSL seed kernels, three dsl_pipeline_axpb specializations, dsl_row_reduce and dsl_cluster_reduce"
    );
}

#[test]
fn specializations_assemble() {
    for rounds in [1, 2, 7] {
        assemble(&format!("phase_flip_{rounds}"), &dsl_seed_phase_flip::ptx_for(rounds).unwrap());
        assemble(&format!("phase_tma_{rounds}"), &dsl_phase_tma::ptx_for(rounds).unwrap());
    }
}

#[phaser::device]
fn is_leader(lane: u32) -> bool {
    lane == 0
}

#[phaser::device]
fn wait_flip(bar: Barrier, mut parity: u32) -> u32 {
    T.ptx.mbarrier.try_wait(bar, parity);
    parity ^= 1;
    parity
}

#[phaser::device]
fn twice(x: u32) -> u32 {
    let y = wait_identity(x);
    y * 2
}

#[phaser::device]
fn wait_identity(x: u32) -> u32 {
    x
}

#[phaser::kernel(target = "sm_90a")]
fn more_constructs(out: &mut [i32], h: &[half::f16], n: u32, bias: i32) {
    let tid = T.thread_idx();
    let bars = T.alloc_barriers(2);
    let mut parity = 0;
    let grade = if tid < 4 {
        -1
    } else if tid < 8 {
        0
    } else {
        bias
    };
    let mut i = 0;
    loop {
        if i >= n {
            break;
        }
        i += 1;
        if i == 3 {
            continue;
        }
        out[i] = grade * 2 - 7;
    }
    if is_leader(T.lane_idx()) {
        parity = wait_flip(bars.ptr_to([tid % 2]), parity);
    }
    let widened = h[tid] as f32 * 0.5;
    out[0] = widened as i32 + twice(parity) as i32;
    let neg = -bias;
    out[1] = neg.max(-3).min(3) >> 1;
    if tid >= 32 {
        return;
    }
    out[2] = (tid != 0) as i32;
}

#[test]
fn more_constructs_assemble() {
    let ptx = more_constructs::ptx().unwrap();
    assemble("more_constructs", &ptx);
    assert!(phaser::codegen::ptx_text::has(&ptx, "cvt.f32.f16 %f*, %rs*"), "{ptx}");
    if std::env::var_os("SHOW_PTX").is_some() {
        println!("{ptx}");
    }
}
