//! Several simulated devices of one system (`Device::sim_system`): their ids, peer access and
//! peer mappings (a kernel on one device gets another's buffer only through one), and launches
//! of several devices in flight together (`launch_group`), where a kernel on one device waits
//! for a flag a kernel on another sets, with findings that name the device, CTA and line.

use phaser::runtime::sim::{Category, SimConfig, SimReport};
use phaser::{launch_group, simulate_group, Arg, Device, DeviceId, GroupLaunch, LaunchConfig, RuntimeError};

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
    let (a, b) = two();
    a.enable_peer_access(&b).unwrap();
    let tile = b.alloc::<u32>(N as usize).unwrap();
    let flag = b.alloc::<u32>(1).unwrap();
    let mut out = b.alloc::<u32>(N as usize).unwrap();
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let (kp, kc) = (produce::kernel_for(signal).unwrap(), consume::kernel().unwrap());
    let cfg = LaunchConfig::linear(1, N);
    let (tile_view, flag_view) = (tile.peer(&a).unwrap(), flag.peer(&a).unwrap());
    // The consumer first: it waits for a producer that has not started yet.
    let reports = simulate_group(vec![
        GroupLaunch::new(&sb, &kc, cfg, [Arg::buffer(&tile), Arg::buffer(&flag), Arg::buffer_mut(&mut out)]),
        GroupLaunch::new(&sa, &kp, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
    ])
    .unwrap();
    let got = b.download(&out).unwrap();
    (reports, got)
}

#[test]
fn a_consumer_on_one_device_waits_for_a_producer_on_another() {
    let (reports, got) = flag_protocol(1);
    for r in &reports {
        assert!(r.findings.is_empty(), "{}", r.text());
    }
    assert_eq!(got, want());
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
    a.enable_peer_access(&b).unwrap();
    let tile = b.alloc::<u32>(N as usize).unwrap();
    let flag = b.alloc::<u32>(1).unwrap();
    let mut out = b.alloc::<u32>(N as usize).unwrap();
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let cfg = LaunchConfig::linear(1, N);
    let (kc, kp, kq) = (consume::kernel().unwrap(), produce::kernel_for(1).unwrap(), produce::kernel_for(0).unwrap());
    {
        let (tile_view, flag_view) = (tile.peer(&a).unwrap(), flag.peer(&a).unwrap());
        let reports = launch_group(vec![
            GroupLaunch::new(&sb, &kc, cfg, [Arg::buffer(&tile), Arg::buffer(&flag), Arg::buffer_mut(&mut out)]),
            GroupLaunch::new(&sa, &kp, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
        ])
        .unwrap();
        assert_eq!(reports.len(), 2);
        assert!(reports.iter().all(|r| r.sim.as_ref().is_some_and(|s| s.findings.is_empty())));
    }
    assert_eq!(b.download(&out).unwrap(), want());
    let flag = b.alloc::<u32>(1).unwrap();
    let (tile_view, flag_view) = (tile.peer(&a).unwrap(), flag.peer(&a).unwrap());
    let e = launch_group(vec![
        GroupLaunch::new(&sb, &kc, cfg, [Arg::buffer(&tile), Arg::buffer(&flag), Arg::buffer_mut(&mut out)]),
        GroupLaunch::new(&sa, &kq, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
    ])
    .unwrap_err();
    let f = e.findings().and_then(|f| f.first()).unwrap_or_else(|| panic!("{e}"));
    assert_eq!((f.category, f.device), (Category::InfiniteLoop, Some(DeviceId(1))), "{e}");
    // Without the peer mapping the producer's launch is refused before anything runs.
    let e = launch_group(vec![GroupLaunch::new(&sa, &kp, cfg, [Arg::buffer(&tile), Arg::buffer(&flag)])]).unwrap_err();
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
    let (a, b) = two();
    a.enable_peer_access(&b).unwrap();
    let tile = b.alloc::<u32>(N as usize).unwrap();
    let flag = b.alloc::<u32>(1).unwrap();
    let mut out = b.alloc::<u32>(N as usize).unwrap();
    let map = b.tensor_map(&tile, &[N as u64, 1], &[N, 1], phaser::runtime::Swizzle::None).unwrap();
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let (kp, kc) = (produce::kernel_for(1).unwrap(), consume_tma::kernel_for(order).unwrap());
    let cfg = LaunchConfig::linear(1, N);
    let (tile_view, flag_view) = (tile.peer(&a).unwrap(), flag.peer(&a).unwrap());
    let reports = simulate_group(vec![
        GroupLaunch::new(&sb, &kc, cfg, [Arg::from(&map), Arg::buffer(&flag), Arg::buffer_mut(&mut out)]),
        GroupLaunch::new(&sa, &kp, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
    ])
    .unwrap();
    let got = b.download(&out).unwrap();
    (reports, got)
}

#[test]
fn a_tma_load_after_the_flag_wait_and_the_proxy_fence_is_clean() {
    let (reports, got) = tma_protocol(1);
    for r in &reports {
        assert!(r.findings.is_empty(), "{}", r.text());
    }
    assert_eq!(got, want());
}

/// The async proxy's read is a read of global memory at its issue: a TMA load issued before
/// the wait that acquires the producer's tile races with the producer's stores. Whichever of
/// the two comes second reports it (under this seed the producer's store, over the load's
/// read), naming its own device, CTA and line and the other's.
#[test]
fn a_tma_load_issued_before_the_flag_wait_is_a_global_race() {
    let (reports, _) = tma_protocol(0);
    let (tma, producer) = (line_of("marker: the early TMA load"), line_of("marker: the producer's tile"));
    let races: Vec<_> =
        reports.iter().flat_map(|r| r.findings.iter()).filter(|f| f.category == Category::GlobalRace).collect();
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
