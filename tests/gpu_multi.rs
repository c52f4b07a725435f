//! Several GPUs (issue 24 §1): enumeration, NCCL on Phaser buffers and streams, the
//! NVLink-multicast refusal, and (tests named `two_gpus_*`, which `.ci/gpu-run.sh` skips and
//! counts as skipped on a one-GPU machine; run by hand there they fail, never pass) peer
//! access, a kernel writing a peer's buffer through a peer mapping, the cross-device flag
//! protocol of `tests/multi_device.rs` launched together, a 2-rank all-reduce. Run by
//! `.ci/gpu-bundle`.

mod multi_kernels;

use multi_kernels::*;
use phaser::runtime::nccl::{run_ranks, ReduceOp};
use phaser::{launch_group, Arg, Device, DeviceId, LaunchConfig, RuntimeError};

fn gpu(i: usize) -> Device {
    Device::cuda(i).unwrap_or_else(|e| panic!("needs CUDA GPU {i}: {e}"))
}

fn two_gpus() -> (Device, Device) {
    assert!(Device::count().unwrap() >= 2, "needs 2 GPUs (run on nvidia-h200-x2)");
    (gpu(0), gpu(1))
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn every_gpu_is_a_device_numbered_by_its_ordinal() {
    let n = Device::count().unwrap();
    assert!(n >= 1, "the GPU machine has a GPU");
    let all = Device::all().unwrap();
    let ids: Vec<DeviceId> = all.iter().map(Device::id).collect();
    assert_eq!(ids, (0..n as u32).map(DeviceId).collect::<Vec<_>>());
    assert_eq!(all[0].upload(&[1u32]).unwrap().device_id(), DeviceId(0));
}

/// One rank: an all-reduce and a reduce-scatter of one rank are copies, an all-gather of one
/// rank is its own part; the data is read back.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_one_rank_communicator_reduces_and_gathers_phaser_buffers() {
    let dev = gpu(0);
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let out = run_ranks(std::slice::from_ref(&dev), |c| {
        let d = c.stream().device();
        let send = d.upload(&data)?;
        let mut reduced = d.alloc::<f32>(data.len())?;
        c.all_reduce(&send, &mut reduced, ReduceOp::Sum)?.wait()?;
        let mut gathered = d.alloc::<f32>(data.len())?;
        c.all_gather(&send, &mut gathered)?.wait()?;
        let mut scattered = d.alloc::<f32>(data.len())?;
        c.reduce_scatter(&send, &mut scattered, ReduceOp::Max)?.wait()?;
        let mut short = d.alloc::<f32>(data.len() - 1)?;
        let e = c.all_reduce(&send, &mut short, ReduceOp::Sum).err().expect("a length mismatch is refused");
        assert!(matches!(e, RuntimeError::SizeMismatch { .. }), "{e}");
        Ok((d.download(&reduced)?, d.download(&gathered)?, d.download(&scattered)?))
    })
    .unwrap();
    assert_eq!(out.len(), 1);
    let (reduced, gathered, scattered) = &out[0];
    assert_eq!((reduced, gathered, scattered), (&data, &data, &data));
}

/// `NCCL_NVLS_ENABLE=1` is refused before NCCL is called, naming the variable; unset, it is
/// set to 0.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn nvlink_multicast_is_refused() {
    let dev = gpu(0);
    std::env::set_var("NCCL_NVLS_ENABLE", "1");
    let e = run_ranks(std::slice::from_ref(&dev), |_| Ok(())).unwrap_err();
    std::env::remove_var("NCCL_NVLS_ENABLE");
    assert!(matches!(e, RuntimeError::NvlinkMulticast { variable: "NCCL_NVLS_ENABLE", .. }), "{e}");
    assert!(e.to_string().contains("`NCCL_NVLS_ENABLE=1`"), "{e}");
    run_ranks(std::slice::from_ref(&dev), |c| Ok(c.world_size())).unwrap();
    assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"));
}

#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_peer_access_and_a_kernel_writing_a_peers_buffer() {
    let (a, b) = two_gpus();
    assert!(a.can_access_peer(&b).unwrap(), "the H200s of one host are NVLink peers");
    let mut theirs = b.alloc::<u32>(N as usize).unwrap();
    let k = fill::kernel().unwrap();
    let cfg = LaunchConfig::linear(1, N);
    let e = a.launch(&k, cfg, &[Arg::buffer_mut(&mut theirs)]).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { buffer_on: DeviceId(1), used_on: DeviceId(0), .. }), "{e}");
    assert!(matches!(theirs.peer_mut(&a).unwrap_err(), RuntimeError::PeerAccess { .. }));
    a.enable_peer_access(&b).unwrap();
    {
        let mut view = theirs.peer_mut(&a).unwrap();
        a.launch(&k, cfg, &[Arg::from(&mut view)]).unwrap();
    }
    assert_eq!(b.download(&theirs).unwrap(), want());
}

/// The consumer on GPU 1 waits (`ld.acquire.sys`) for the flag the producer on GPU 0 raises
/// (`st.release.sys`) after writing the tile into GPU 1's memory; launched together.
#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_a_consumer_waits_for_a_producer_on_the_other_gpu() {
    let (a, b) = two_gpus();
    let mut h = Handoff::new(&a, &b, TileOn::Consumer);
    let (kp, kc) = (produce::kernel_for(1).unwrap(), consume::kernel().unwrap());
    h.run(&kp, &kc, TileArg::Buffer, launch_group).unwrap();
    assert_eq!(h.out(), want());
}

/// Rank `r` sends `r + 1` everywhere: the sum is 3 on both, the gather both parts in order.
#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_a_two_rank_all_reduce_and_all_gather() {
    let (a, b) = two_gpus();
    let devs = [a, b];
    let out = run_ranks(&devs, |c| {
        let d = c.stream().device();
        let send = d.upload(&vec![(c.rank() + 1) as f32; 256])?;
        let mut sum = d.alloc::<f32>(256)?;
        c.all_reduce(&send, &mut sum, ReduceOp::Sum)?.wait()?;
        let mut both = d.alloc::<f32>(512)?;
        c.all_gather(&send, &mut both)?.wait()?;
        Ok((d.download(&sum)?, d.download(&both)?))
    })
    .unwrap();
    let gathered: Vec<f32> = [1.0f32; 256].into_iter().chain([2.0; 256]).collect();
    for (sum, both) in &out {
        assert_eq!(sum, &vec![3.0f32; 256]);
        assert_eq!(both, &gathered);
    }
}

/// Two CTAs of one launch on one GPU: CTA 1 writes the tile and signals (`st.release.gpu`);
/// CTA 0 waits (`ld.acquire.gpu`), `fence.proxy.async.global`, then bulk-copies the tile
/// (`cp.async.bulk` global→shared) and writes it out: the bytes CTA 1 wrote.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_bulk_copy_of_a_tile_after_its_flag_on_one_gpu() {
    let dev = gpu(0);
    let k = bulk_handoff::kernel().unwrap();
    for round in 0..20 {
        let mut tile = dev.alloc::<u32>(N as usize).unwrap();
        let mut flag = dev.alloc::<u32>(1).unwrap();
        let mut out = dev.alloc::<u32>(N as usize).unwrap();
        let args = [Arg::buffer_mut(&mut tile), Arg::buffer_mut(&mut flag), Arg::buffer_mut(&mut out)];
        dev.launch(&k, LaunchConfig::linear(2, N), &args).unwrap();
        assert_eq!(dev.download(&out).unwrap(), want(), "round {round}");
    }
}

/// The producer on GPU 0 writes a tile of its own memory and raises its own flag
/// (`st.release.sys`); the consumer on GPU 1 waits for the flag and reads the tile through
/// peer mappings: `tma` with a TMA load through a tensor map over the mapping
/// (`Device::tensor_map_peer`), else a bulk copy from the mapped buffer.
fn two_gpus_peer_copy(tma: bool) {
    let (a, b) = two_gpus();
    let mut h = Handoff::new(&a, &b, TileOn::Producer);
    let kp = produce::kernel_for(1).unwrap();
    let (kc, tile_arg) = if tma {
        (consume_tma::kernel_for(1).unwrap(), TileArg::TensorMap)
    } else {
        (bulk_consume::kernel_for(1).unwrap(), TileArg::Buffer)
    };
    h.run(&kp, &kc, tile_arg, launch_group).unwrap();
    assert_eq!(h.out(), want());
}

#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_peer_bulk_copy() {
    two_gpus_peer_copy(false);
}

#[test]
#[ignore = "needs two GPUs: run by .ci/gpu-bundle on a machine with two"]
fn two_gpus_peer_tma() {
    two_gpus_peer_copy(true);
}
