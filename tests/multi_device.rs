//! Several simulated devices of one system (`Device::sim_system`): their ids, peer access and
//! peer mappings (a kernel on one device gets another's buffer only through one), and launches
//! of several devices in flight together (`launch_group`), where a kernel on one device waits
//! for a flag a kernel on another sets, with findings that name the device, CTA and line.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport};
use phaser::{
    launch_group, simulate_group, Arg, Device, DeviceId, GroupLaunch, Kernel, LaunchConfig, RuntimeError, Swizzle,
};

mod multi_kernels;

use multi_kernels::*;

/// Where the kernels are (their findings' lines).
const FILE: &str = "tests/multi_kernels/mod.rs";

/// The line of the kernels' file holding `marker` (a marker on a comment line of its own
/// names the statement below it).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("multi_kernels/mod.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap();
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

/// A step budget that ends a hang in seconds (the kernels here run a few thousand steps).
fn config() -> SimConfig {
    SimConfig { max_steps: 2_000_000, ..SimConfig::default() }
}

fn two() -> (Device, Device) {
    let mut devs = Device::sim_system(2, config());
    let b = devs.pop().unwrap();
    (devs.pop().unwrap(), b)
}

/// `produce` with `signal` on device 0 and the consumer `kc` on device 1 (its tile as
/// `tile_arg`), the tile and flag where `on` says, simulated together: the reports (the
/// consumer's first: it may wait for a producer that has not started yet) and what the
/// consumer wrote out.
fn handoff(on: TileOn, signal: u32, kc: &Kernel, tile_arg: TileArg) -> (Vec<SimReport>, Vec<u32>) {
    let (a, b) = two();
    let mut h = Handoff::new(&a, &b, on);
    let reports = h.run(&produce::kernel_for(signal).unwrap(), kc, tile_arg, simulate_group).unwrap();
    (reports, h.out())
}

/// No finding in any report, and the consumer wrote `want` out (`what`: how it read it).
fn assert_clean((reports, got): (Vec<SimReport>, Vec<u32>), want: &[u32], what: &str) {
    for r in &reports {
        assert!(r.findings.is_empty(), "{what}: {}", r.text());
    }
    assert_eq!(got, want, "{what}");
}

/// The global races of all the reports.
fn global_races(reports: &[SimReport]) -> Vec<&Finding> {
    reports.iter().flat_map(|r| &r.findings).filter(|f| f.category == Category::GlobalRace).collect()
}

#[test]
fn devices_of_a_system_are_numbered_and_so_are_their_buffers() {
    let devs = Device::sim_system(3, SimConfig::default());
    let ids: Vec<DeviceId> = devs.iter().map(Device::id).collect();
    assert_eq!(ids, [DeviceId(0), DeviceId(1), DeviceId(2)]);
    for d in &devs {
        assert_eq!(d.alloc::<u32>(4).unwrap().device_id(), d.id());
    }
    assert_eq!(Device::sim(SimConfig::default()).id(), DeviceId(0), "a simulator alone is device 0 of its system");
    // As many CUDA devices as the driver counts (none without a driver).
    assert_eq!(Device::all().unwrap().len(), Device::count().unwrap());
}

#[test]
fn another_devices_buffer_is_refused_without_a_peer_mapping() {
    let (a, b) = two();
    let mut theirs = b.alloc::<u32>(N as usize).unwrap();
    let e =
        a.launch(&fill::kernel().unwrap(), LaunchConfig::linear(1, N), &[Arg::buffer_mut(&mut theirs)]).unwrap_err();
    match &e {
        RuntimeError::WrongDevice { param, buffer_on, used_on, mapped_for } => {
            assert_eq!(
                (param.as_deref(), *buffer_on, *used_on, *mapped_for),
                (Some("out"), DeviceId(1), DeviceId(0), None),
                "{e}"
            );
        }
        other => panic!("expected WrongDevice, got {other}"),
    }
    assert_eq!(
        e.to_string(),
        "the buffer passed as `out` is on device 1, but it is used on device 0: a kernel is given a peer's buffer \
         only through a peer mapping (`Device::enable_peer_access`, then `buffer.peer(&device)`)"
    );
    let e = a.download(&theirs).unwrap_err();
    assert!(
        matches!(e, RuntimeError::WrongDevice { param: None, buffer_on: DeviceId(1), used_on: DeviceId(0), .. }),
        "{e}"
    );
    // A simulator of another system: not a peer at all.
    let stranger = Device::sim(SimConfig::default());
    let e = a.download(&stranger.alloc::<u32>(1).unwrap()).unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignBuffer { .. }), "{e}");
}

#[test]
fn a_peer_mapping_needs_peer_access_and_is_for_one_device() {
    let devs = Device::sim_system(3, SimConfig::default());
    let (a, b, c) = (&devs[0], &devs[1], &devs[2]);
    let mut theirs = b.alloc::<u32>(N as usize).unwrap();
    let e = theirs.peer_mut(a).unwrap_err();
    assert!(matches!(e, RuntimeError::PeerAccess { from: DeviceId(0), to: DeviceId(1), .. }), "{e}");
    assert!(e.to_string().contains("call `enable_peer_access` on device 0 with device 1 first"), "{e}");
    assert!(a.can_access_peer(b).unwrap() && !a.can_access_peer(a).unwrap());
    let e = a.enable_peer_access(a).unwrap_err();
    assert!(matches!(e, RuntimeError::PeerAccess { .. }), "{e}");
    let stranger = Device::sim(SimConfig::default());
    assert!(!a.can_access_peer(&stranger).unwrap());
    let e = a.enable_peer_access(&stranger).unwrap_err();
    assert!(matches!(e, RuntimeError::PeerAccess { .. }) && e.to_string().contains("different systems"), "{e}");
    a.enable_peer_access(b).unwrap();
    a.enable_peer_access(b).unwrap();
    assert!(matches!(theirs.peer(b).unwrap_err(), RuntimeError::PeerAccess { .. }), "a buffer's own device");
    // Access is one way: device 1 was not given device 0's memory.
    let mine = a.alloc::<u32>(1).unwrap();
    assert!(matches!(mine.peer(b).unwrap_err(), RuntimeError::PeerAccess { from: DeviceId(1), to: DeviceId(0), .. }));

    // Mapped for device 0: a kernel on device 0 writes device 1's memory.
    {
        let mut view = theirs.peer_mut(a).unwrap();
        assert_eq!((view.buffer_on(), view.mapped_for()), (DeviceId(1), DeviceId(0)));
        a.launch(&fill::kernel().unwrap(), LaunchConfig::linear(1, N), &[Arg::from(&mut view)]).unwrap();
    }
    assert_eq!(b.download(&theirs).unwrap(), want());
    // A mapping made for device 0 does not let device 2 use the buffer.
    c.enable_peer_access(b).unwrap();
    let mut view = theirs.peer_mut(a).unwrap();
    let e = c.launch(&fill::kernel().unwrap(), LaunchConfig::linear(1, N), &[Arg::from(&mut view)]).unwrap_err();
    assert!(
        matches!(
            &e,
            RuntimeError::WrongDevice {
                buffer_on: DeviceId(1),
                used_on: DeviceId(2),
                mapped_for: Some(DeviceId(0)),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("its peer mapping was made for device 0"), "{e}");
}

/// The producer on device 0 fills device 1's tile through a peer mapping and raises device
/// 1's flag; the consumer on device 1 waits for it. Launched together they finish and the
/// tile arrived; with the bugs of `produce`, the consumer's device reports them.
/// The buffers both kernels use are passed shared: the group holds every borrow until all its
/// launches are done.
fn flag_protocol(signal: u32) -> (Vec<SimReport>, Vec<u32>) {
    handoff(TileOn::Consumer, signal, &consume::kernel().unwrap(), TileArg::Buffer)
}

#[test]
fn a_consumer_on_one_device_waits_for_a_producer_on_another() {
    assert_clean(flag_protocol(1), &want(), "the consumer's plain loads");
}

#[test]
fn a_producer_that_never_signals_is_reported_on_the_consumers_device() {
    let (reports, _) = flag_protocol(0);
    assert!(reports[1].findings.is_empty(), "the producer finished: {}", reports[1].text());
    let r = &reports[0];
    let f = r.findings.iter().find(|f| f.category == Category::InfiniteLoop).unwrap_or_else(|| panic!("{}", r.text()));
    assert_eq!(f.device, Some(DeviceId(1)), "{}", r.text());
    assert_eq!(f.cta, [0, 0, 0]);
    let loc = f.loc.expect("a line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("marker: the consumer's wait")), "{}", r.text());
    assert!(f.to_string().contains("kernel `consume` on device 1 CTA [0, 0, 0]"), "{f}");
}

/// Launched one after the other, the consumer alone waits forever: the group is what lets
/// the two run together.
#[test]
fn the_consumer_alone_never_finishes() {
    let (a, b) = two();
    a.enable_peer_access(&b).unwrap();
    let tile = b.alloc::<u32>(N as usize).unwrap();
    let flag = b.alloc::<u32>(1).unwrap();
    let mut out = b.alloc::<u32>(N as usize).unwrap();
    let k = consume::kernel().unwrap();
    let r = b
        .simulate(&k, LaunchConfig::linear(1, N), &[Arg::buffer(&tile), Arg::buffer(&flag), Arg::buffer_mut(&mut out)])
        .unwrap();
    let f = r.findings.iter().find(|f| f.category == Category::InfiniteLoop).unwrap_or_else(|| panic!("{}", r.text()));
    assert_eq!(f.device, None, "a launch alone names no device");
}

#[test]
fn a_group_launch_returns_each_devices_report_or_the_error() {
    let (a, b) = two();
    let (kc, kp, kq) = (consume::kernel().unwrap(), produce::kernel_for(1).unwrap(), produce::kernel_for(0).unwrap());
    let mut h = Handoff::new(&a, &b, TileOn::Consumer);
    let reports = h.run(&kp, &kc, TileArg::Buffer, launch_group).unwrap();
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r.sim.as_ref().is_some_and(|s| s.findings.is_empty())));
    assert_eq!(h.out(), want());
    // A producer that never signals: the consumer's device reports it (a fresh flag).
    let e = Handoff::new(&a, &b, TileOn::Consumer).run(&kq, &kc, TileArg::Buffer, launch_group).unwrap_err();
    let f = e.findings().and_then(|f| f.first()).unwrap_or_else(|| panic!("{e}"));
    assert_eq!((f.category, f.device), (Category::InfiniteLoop, Some(DeviceId(1))), "{e}");
    // Without the peer mapping the producer's launch is refused before anything runs.
    let (sa, cfg) = (a.stream().unwrap(), LaunchConfig::linear(1, N));
    let e =
        launch_group(vec![GroupLaunch::new(&sa, &kp, cfg, [Arg::buffer(&h.tile), Arg::buffer(&h.flag)])]).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { buffer_on: DeviceId(1), used_on: DeviceId(0), .. }), "{e}");
    // Devices of two systems do not launch together.
    let stranger = Device::sim(SimConfig::default());
    let (ss, mut lone) = (stranger.stream().unwrap(), stranger.alloc::<u32>(N as usize).unwrap());
    let kf = fill::kernel().unwrap();
    let mut mine = a.alloc::<u32>(N as usize).unwrap();
    let e = launch_group(vec![
        GroupLaunch::new(&sa, &kf, cfg, [Arg::buffer_mut(&mut mine)]),
        GroupLaunch::new(&ss, &kf, cfg, [Arg::buffer_mut(&mut lone)]),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("belong to different systems"), "{e}");
}

/// The consumer's read of a tile whose flag did not publish it, on device 1, CTA 0, at its
/// line, naming the producer's line.
fn unpublished(signal: u32) {
    let (reports, _) = flag_protocol(signal);
    let r = &reports[0];
    let f = r.findings.iter().find(|f| f.category == Category::GlobalRace).unwrap_or_else(|| panic!("{}", r.text()));
    assert_eq!((f.device, f.cta), (Some(DeviceId(1)), [0, 0, 0]), "{f}");
    let loc = f.loc.expect("a line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("marker: the consumer's read")), "{f}");
    let producer = format!("{FILE}:{}", line_of("marker: the producer's tile"));
    assert!(
        f.message.contains(&format!("CTA (0, 0, 0) on device 0 wrote at {producer}")),
        "names the producer's write {producer}: {f}"
    );
}

#[test]
fn a_relaxed_flag_store_across_devices_is_found() {
    unpublished(2);
}

#[test]
fn a_release_at_gpu_scope_does_not_reach_another_device() {
    unpublished(3);
}

/// The producer on device 0 fills device 1's tile and raises its flag (a release at `.sys`);
/// the consumer on device 1 reads the tile through TMA, ordered by its `ORDER`.
fn tma_protocol(order: u32) -> (Vec<SimReport>, Vec<u32>) {
    handoff(TileOn::Consumer, 1, &consume_tma::kernel_for(order).unwrap(), TileArg::TensorMap)
}

#[test]
fn a_tma_load_after_the_flag_wait_and_the_proxy_fence_is_clean() {
    assert_clean(tma_protocol(1), &want(), "the TMA load");
}

/// The async proxy's read is a read of global memory at its issue: a TMA load issued before
/// the wait that acquires the producer's tile races with the producer's stores. Whichever of
/// the two comes second reports it (under this seed the producer's store, over the load's
/// read), naming its own device, CTA and line and the other's.
#[test]
fn a_tma_load_issued_before_the_flag_wait_is_a_global_race() {
    let (reports, _) = tma_protocol(0);
    let (tma, producer) = (line_of("marker: the early TMA load"), line_of("marker: the producer's tile"));
    let races = global_races(&reports);
    assert_eq!(races.len(), 1, "one race: {}\n{}", reports[0].text(), reports[1].text());
    let f = races[0];
    assert_eq!(f.cta, [0, 0, 0], "{f}");
    let loc = f.loc.expect("a line");
    let (own, other) = if f.device == Some(DeviceId(0)) {
        ((FILE, producer), format!("CTA (0, 0, 0) on device 1 read at {FILE}:{tma}:"))
    } else {
        assert_eq!(f.device, Some(DeviceId(1)), "{f}");
        ((FILE, tma), format!("CTA (0, 0, 0) on device 0 wrote at {FILE}:{producer}:"))
    };
    assert_eq!((loc.file, loc.line), own, "{f}");
    assert!(f.message.contains(&other), "names the other access ({other}): {f}");
}

/// A consumer on device 1 copies a tile of device 0's memory into shared memory (`tma`: with
/// a TMA load through a tensor map over the peer mapping, else a bulk copy from the mapped
/// buffer) while the producer on device 0 writes the tile and raises its flag (both in device
/// 0's memory): `order` 1 waits for the flag and fences the async proxy before the copy, 0
/// issues the copy before the wait. The reports (consumer's first) and what the consumer
/// copied out.
fn peer_copy(tma: bool, order: u32) -> (Vec<SimReport>, Vec<u32>) {
    if tma {
        handoff(TileOn::Producer, 1, &consume_tma::kernel_for(order).unwrap(), TileArg::TensorMap)
    } else {
        handoff(TileOn::Producer, 1, &bulk_consume::kernel_for(order).unwrap(), TileArg::Buffer)
    }
}

#[test]
fn a_bulk_copy_of_a_peers_tile_after_its_flag_reads_the_peers_bytes() {
    assert_clean(peer_copy(false, 1), &want(), "the bulk copy of device 0's tile, bit for bit");
}

#[test]
fn a_tma_load_through_a_map_over_a_peer_mapping_reads_the_peers_bytes() {
    assert_clean(peer_copy(true, 1), &want(), "the TMA load of device 0's tile, bit for bit");
}

/// The copy issued before the wait: one global race between the copy's read on device 1 and
/// the producer's write on device 0, found at whichever of the two the schedule made later,
/// naming the other's device, CTA and line.
fn copy_before_wait_races(tma: bool, copy_marker: &str) {
    let (reports, _) = peer_copy(tma, 0);
    let races = global_races(&reports);
    assert_eq!(races.len(), 1, "{}\n{}", reports[0].text(), reports[1].text());
    let f = races[0];
    let (copy, write) = (line_of(copy_marker), line_of("marker: the producer's tile"));
    let loc = f.loc.expect("a line");
    assert_eq!(loc.file, FILE, "{f}");
    let (device, other, other_device) = match loc.line {
        l if l == copy => (DeviceId(1), write, 0),
        l if l == write => (DeviceId(0), copy, 1),
        _ => panic!("the finding is at the copy or at the producer's write: {f}"),
    };
    assert_eq!((f.device, f.cta), (Some(device), [0, 0, 0]), "{f}");
    let (other_cta, other_at) = (format!("CTA (0, 0, 0) on device {other_device}"), format!("{FILE}:{other}"));
    assert!(f.message.contains(&other_cta), "names the other CTA and device: {f}");
    assert!(f.message.contains(&other_at), "names the other access's line {other_at}: {f}");
}

#[test]
fn a_bulk_copy_of_a_peers_tile_issued_before_its_flag_is_a_race() {
    copy_before_wait_races(false, "marker: the bulk copy");
}

#[test]
fn a_tma_load_of_a_peers_tile_issued_before_its_flag_is_a_race() {
    copy_before_wait_races(true, "marker: the early TMA load");
}

/// The copy issued after the flag's acquire but with no `fence.proxy.async.global` (`ORDER`
/// 2): the acquire orders the generic proxy only, so the async proxy's read is a global race,
/// found at the copy's line on the consumer's device, naming the producer's write, the flag's
/// acquire, the rule and the fix. The fenced twin (`ORDER` 1) is clean: the tests above.
fn copy_without_proxy_fence(tma: bool, copy_marker: &str) {
    let (reports, _) = peer_copy(tma, 2);
    let races = global_races(&reports);
    assert_eq!(races.len(), 1, "{}\n{}", reports[0].text(), reports[1].text());
    let f = races[0];
    assert_eq!((f.device, f.cta), (Some(DeviceId(1)), [0, 0, 0]), "{f}");
    let loc = f.loc.expect("a line");
    assert_eq!((loc.file, loc.line), (FILE, line_of(copy_marker)), "{f}");
    let producer = format!("CTA (0, 0, 0) on device 0 wrote at {FILE}:{}", line_of("marker: the producer's tile"));
    assert!(f.message.contains(&producer), "names the producer's write ({producer}): {f}");
    for part in [
        "(the async proxy)",
        "ordered before it only for the generic proxy",
        "missing `fence.proxy.async.global` between the acquire at",
        "PTX's memory model orders the async proxy's reads after a generic-proxy acquire only through a proxy fence",
        "put `T.ptx.fence.proxy_async(\"global\")` after the flag wait, before the TMA load or bulk copy",
    ] {
        assert!(f.message.contains(part), "says {part:?}: {f}");
    }
}

#[test]
fn a_bulk_copy_after_the_flag_wait_without_the_proxy_fence_is_a_race() {
    copy_without_proxy_fence(false, "marker: the bulk copy");
}

#[test]
fn a_tma_load_after_the_flag_wait_without_the_proxy_fence_is_a_race() {
    copy_without_proxy_fence(true, "marker: the unfenced TMA load");
}

#[test]
fn a_tensor_map_over_another_devices_memory_needs_a_peer_mapping_for_this_device() {
    let devs = Device::sim_system(3, SimConfig::default());
    let (a, b, c) = (&devs[0], &devs[1], &devs[2]);
    let theirs = b.alloc::<u32>(N as usize).unwrap();
    // Another device's plain buffer: refused, naming both devices.
    let e = a.tensor_map(&theirs, &[N as u64, 1], &[N, 1], Swizzle::None).unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::WrongDevice { param: None, buffer_on: DeviceId(1), used_on: DeviceId(0), mapped_for: None }
        ),
        "{e}"
    );
    // A view mapped for device 0 does not make a map for device 2.
    a.enable_peer_access(b).unwrap();
    c.enable_peer_access(b).unwrap();
    let view = theirs.peer(a).unwrap();
    let e = c.tensor_map_peer(&view, &[N as u64, 1], &[N, 1], Swizzle::None).unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::WrongDevice {
                buffer_on: DeviceId(1),
                used_on: DeviceId(2),
                mapped_for: Some(DeviceId(0)),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("its peer mapping was made for device 0"), "{e}");
    // Through the view for device 0: the map's base is the buffer's, and it must fit it.
    let map = a.tensor_map_peer(&view, &[N as u64, 1], &[N, 1], Swizzle::None).unwrap();
    assert!(map.buffer_alive());
    let e = a.tensor_map_peer(&view, &[N as u64, 2], &[N, 1], Swizzle::None).unwrap_err();
    assert!(e.to_string().contains("the buffer holds 128"), "{e}");
    // The map is device 0's: a launch on device 2 refuses it.
    let mut out = c.alloc::<u32>(N as usize).unwrap();
    let flag = c.alloc::<u32>(1).unwrap();
    let k = consume_tma::kernel_for(1).unwrap();
    let e = c
        .launch(&k, LaunchConfig::linear(1, N), &[Arg::TensorMap(&map), Arg::buffer(&flag), Arg::buffer_mut(&mut out)])
        .unwrap_err();
    assert!(matches!(e, RuntimeError::ForeignTensorMap { .. }), "{e}");
}

/// `gpu_multi.rs`'s one-GPU test in the simulator: on one device CTA 1 writes the tile and
/// signals, CTA 0 waits, fences the async proxy and bulk-copies it; clean, the bytes arrive.
#[test]
fn a_bulk_copy_of_a_tile_after_its_flag_between_two_ctas_of_one_device() {
    for seed in 0..8 {
        let dev = Device::sim(SimConfig { seed, ..config() });
        let mut tile = dev.alloc::<u32>(N as usize).unwrap();
        let mut flag = dev.alloc::<u32>(1).unwrap();
        let mut out = dev.alloc::<u32>(N as usize).unwrap();
        let args = [Arg::buffer_mut(&mut tile), Arg::buffer_mut(&mut flag), Arg::buffer_mut(&mut out)];
        let r = dev.simulate(&bulk_handoff::kernel().unwrap(), LaunchConfig::linear(2, N), &args).unwrap();
        assert!(r.findings.is_empty(), "seed {seed}: {}", r.text());
        assert_eq!(dev.download(&out).unwrap(), want(), "seed {seed}");
    }
}

/// The driver's peer copy (`Device::copy_from_peer`, `bench_peer_copy`'s baseline) in the
/// simulator: the peer's bytes, through a view made for this device only.
#[test]
fn a_peer_copy_reads_the_peers_buffer_through_a_mapping_for_this_device() {
    let devs = Device::sim_system(3, SimConfig::default());
    let (a, b, c) = (&devs[0], &devs[1], &devs[2]);
    let theirs = a.upload(&want()).unwrap();
    b.enable_peer_access(a).unwrap();
    c.enable_peer_access(a).unwrap();
    let mut mine = b.alloc::<u32>(N as usize).unwrap();
    let view = theirs.peer(b).unwrap();
    assert_eq!(b.copy_from_peer(&view, &mut mine).unwrap(), None, "the simulator reports no time");
    assert_eq!(b.download(&mine).unwrap(), want());
    let mut on_c = c.alloc::<u32>(N as usize).unwrap();
    let e = c.copy_from_peer(&view, &mut on_c).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { used_on: DeviceId(2), mapped_for: Some(DeviceId(1)), .. }), "{e}");
    let mut short = b.alloc::<u32>(N as usize - 1).unwrap();
    assert!(matches!(b.copy_from_peer(&view, &mut short).unwrap_err(), RuntimeError::SizeMismatch { .. }));
    // The destination must be this device's.
    let e = b.copy_from_peer(&view, &mut on_c).unwrap_err();
    assert!(matches!(e, RuntimeError::WrongDevice { buffer_on: DeviceId(2), used_on: DeviceId(1), .. }), "{e}");
}

/// Write-after-write across devices: the producer on device 0 writes device 1's tile
/// through a peer mapping and raises flag 0; `overwrite` on device 1 writes the same tile,
/// after waiting for flag 0 (`wait` 1) or not. The reports and the tile.
fn two_writers(wait: u32) -> (Vec<SimReport>, Vec<u32>) {
    let (a, b) = two();
    a.enable_peer_access(&b).unwrap();
    let tile = b.alloc::<u32>(N as usize).unwrap();
    let flag = b.alloc::<u32>(2).unwrap();
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let (kp, ko) = (produce::kernel_for(1).unwrap(), overwrite::kernel_for(wait).unwrap());
    let cfg = LaunchConfig::linear(1, N);
    let reports = {
        let (tile_view, flag_view) = (tile.peer(&a).unwrap(), flag.peer(&a).unwrap());
        simulate_group(vec![
            GroupLaunch::new(&sb, &ko, cfg, [Arg::buffer(&tile), Arg::buffer(&flag)]),
            GroupLaunch::new(&sa, &kp, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
        ])
        .unwrap()
    };
    let got = b.download(&tile).unwrap();
    (reports, got)
}

#[test]
fn two_devices_writing_one_tile_unordered_is_a_write_after_write_race_and_a_flag_orders_them() {
    assert_clean(two_writers(1), &(7..7 + N).collect::<Vec<u32>>(), "the second writer's tile stays");
    let (reports, _) = two_writers(0);
    let races = global_races(&reports);
    assert_eq!(races.len(), 1, "{}\n{}", reports[0].text(), reports[1].text());
    let f = races[0];
    let (first, second) = (line_of("marker: the producer's tile"), line_of("marker: the second writer's tile"));
    let loc = f.loc.expect("a line");
    let (device, other, other_device) = match loc.line {
        l if l == first => (DeviceId(0), second, 1),
        l if l == second => (DeviceId(1), first, 0),
        _ => panic!("the finding is at one of the two writes: {f}"),
    };
    assert_eq!((f.device, f.cta), (Some(device), [0, 0, 0]), "{f}");
    let other_at = format!("CTA (0, 0, 0) on device {other_device} also wrote at {FILE}:{other}");
    assert!(f.message.contains(&other_at), "names the other write ({other_at}): {f}");
    assert!(f.message.contains("write-after-write"), "{f}");
}
