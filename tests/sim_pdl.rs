//! Programmatic dependent launches in the simulator (`runtime/src/sim/check/pdl.rs`): a
//! dependent launch may start before the launch before it finished, so a thread's global
//! access before its `griddepcontrol.wait` that reads what that launch wrote, or writes what
//! it read, is an `EarlyDependentAccess` at its Rust line; after the wait, and in a launch
//! without the programmatic attribute, the same accesses are clean.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::{Arg, Buffer, Device, LaunchConfig};

const FILE: &str = "tests/sim_pdl.rs";
const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];
const THREADS: u32 = 128;
const CTAS: u32 = 2;
const N: usize = (THREADS * CTAS) as usize;

/// The line of this file holding `marker` (in a comment).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_pdl.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap();
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

fn dev(s: Strategy, seed: u64) -> Device {
    Device::sim(SimConfig::default().with_strategy(s).with_seed(seed))
}

/// Every finding, each `EarlyDependentAccess` at the line marked `marker`; the first.
fn only_early_at<'a>(rep: &'a SimReport, marker: &str) -> &'a Finding {
    assert!(!rep.findings.is_empty(), "no finding:\n{}", rep.text());
    for f in &rep.findings {
        assert_eq!(f.category, Category::EarlyDependentAccess, "{}", rep.text());
        let loc = f.loc.unwrap_or_else(|| panic!("a finding without a location:\n{}", rep.text()));
        assert_eq!((loc.file, loc.line), (FILE, line_of(marker)), "at the wrong line:\n{}", rep.text());
    }
    &rep.findings[0]
}

fn clean(rep: &SimReport) {
    assert!(rep.findings.is_empty(), "the correct twin has findings:\n{}", rep.text());
}

/// The byte of a `u32` buffer thread `f.thread` of CTA `f.cta` accesses.
fn byte_of(f: &Finding) -> u32 {
    4 * (f.cta[0] * THREADS + f.thread.expect("a thread"))
}

#[phaser::kernel(target = "sm_90a")]
fn pdl_primary(src: &[u32], data: &mut [u32]) {
    T.ptx.griddepcontrol.launch_dependents();
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    data[i] = src[i] * 7 + 1;
}

/// Reads `data` (the primary's output) before its wait (`EARLY = 1`) or after it.
#[phaser::kernel(target = "sm_90a")]
fn pdl_reader(data: &[u32], out: &mut [u32], #[comptime] EARLY: u32) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    if EARLY == 1 {
        let v = data[i]; // EARLY-READ
        T.ptx.griddepcontrol.wait();
        out[i] = v;
    } else {
        T.ptx.griddepcontrol.wait();
        out[i] = data[i];
    }
}

/// Overwrites `src` (the primary's input) before its wait (`EARLY = 1`) or after it.
#[phaser::kernel(target = "sm_90a")]
fn pdl_writer(src: &mut [u32], #[comptime] EARLY: u32) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    if EARLY == 1 {
        src[i] = 0; // EARLY-WRITE
        T.ptx.griddepcontrol.wait();
    } else {
        T.ptx.griddepcontrol.wait();
        src[i] = 0;
    }
}

/// Adds 1 to `data[i]` (the primary's output) with an atomic before its wait (`EARLY = 1`) or
/// after it.
#[phaser::kernel(target = "sm_90a")]
fn pdl_atomic(data: &mut [u32], #[comptime] EARLY: u32) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    if EARLY == 1 {
        T.atomic.add(data, i, 1); // EARLY-ATOMIC
        T.ptx.griddepcontrol.wait();
    } else {
        T.ptx.griddepcontrol.wait();
        T.atomic.add(data, i, 1);
    }
}

/// Bulk-copies this CTA's 128 elements of `data` (the primary's output) into shared memory
/// before the issuing thread's wait (`EARLY = 1`) or after it, then writes them to `out`.
#[phaser::kernel(target = "sm_90a")]
fn pdl_bulk(data: &[u32], out: &mut [u32], #[comptime] EARLY: u32) {
    T.require_block(128, 1, 1);
    let full = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([128]);
    let tid = T.thread_idx();
    let base = T.block_idx() * 128;
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid == 0 {
        if EARLY == 0 {
            T.ptx.griddepcontrol.wait();
        }
        T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 512);
        // marker: EARLY-BULK
        T.ptx.cp_async.bulk.g2s(T.shared_addr(stage), T.global_elem_addr(data, base), 512, full.ptr_to([0]));
    }
    T.ptx.griddepcontrol.wait();
    T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
    out[base + tid] = stage[tid];
}

/// `src` (0..N) and `data` (zeros) after the primary ran on them.
fn primary(d: &Device) -> (Buffer<u32>, Buffer<u32>) {
    let src: Vec<u32> = (0..N as u32).collect();
    let src = d.upload(&src).unwrap();
    let mut data = d.upload(&[0u32; N]).unwrap();
    pdl_primary::launch(d, LaunchConfig::linear(CTAS, THREADS), &src, &mut data).unwrap();
    (src, data)
}

fn programmatic() -> LaunchConfig {
    LaunchConfig::linear(CTAS, THREADS).with_programmatic_dependent_launch()
}

#[test]
fn a_read_of_the_primarys_output_before_the_wait_is_found_at_its_line() {
    let k = pdl_reader::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (_src, data) = primary(&d);
        let out = d.upload(&[0u32; N]).unwrap();
        let rep = d.simulate(&k, programmatic(), &[Arg::buffer(&data), Arg::buffer(&out)]).unwrap();
        let f = only_early_at(&rep, "EARLY-READ");
        let b = byte_of(f);
        let want = format!(
            "a global load of 4 bytes at buffer #1 byte {b} (of 1024) before this thread's `griddepcontrol.wait`, \
             in a programmatic dependent launch: the previous launch (`pdl_primary`) wrote buffer #1 byte {b} \
             (of 1024)"
        );
        assert!(f.message.starts_with(&want), "{}", f.message);
        // Each CTA's threads all read early: one finding per CTA, the other threads repeats.
        assert_eq!(rep.findings.len(), CTAS as usize, "{}", rep.text());
        assert_eq!(rep.findings.iter().map(|f| f.repeats + 1).sum::<u64>(), N as u64, "{}", rep.text());
    }
}

#[test]
fn the_same_read_after_the_wait_is_clean() {
    let k = pdl_reader::kernel_for(0).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (_src, data) = primary(&d);
        let out = d.upload(&[0u32; N]).unwrap();
        clean(&d.simulate(&k, programmatic(), &[Arg::buffer(&data), Arg::buffer(&out)]).unwrap());
        let want: Vec<u32> = (0..N as u32).map(|i| i * 7 + 1).collect();
        assert_eq!(d.download(&out).unwrap(), want);
    }
}

#[test]
fn a_write_over_the_primarys_input_before_the_wait_is_found_at_its_line() {
    let k = pdl_writer::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (mut src, _data) = primary(&d);
        let rep = d.simulate(&k, programmatic(), &[Arg::buffer_mut(&mut src)]).unwrap();
        let f = only_early_at(&rep, "EARLY-WRITE");
        let b = byte_of(f);
        let want = format!(
            "a global store of 4 bytes at buffer #0 byte {b} (of 1024) before this thread's `griddepcontrol.wait`, \
             in a programmatic dependent launch: the previous launch (`pdl_primary`) read buffer #0 byte {b} \
             (of 1024)"
        );
        assert!(f.message.starts_with(&want), "{}", f.message);
        // After the wait: clean.
        let (mut src, _data) = primary(&d);
        let late = pdl_writer::kernel_for(0).unwrap();
        clean(&d.simulate(&late, programmatic(), &[Arg::buffer_mut(&mut src)]).unwrap());
    }
}

#[test]
fn the_early_kernels_launched_plainly_are_clean() {
    let (reader, writer) = (pdl_reader::kernel_for(1).unwrap(), pdl_writer::kernel_for(1).unwrap());
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let plain = LaunchConfig::linear(CTAS, THREADS);
        let (mut src, data) = primary(&d);
        let out = d.upload(&[0u32; N]).unwrap();
        clean(&d.simulate(&reader, plain, &[Arg::buffer(&data), Arg::buffer(&out)]).unwrap());
        let want: Vec<u32> = (0..N as u32).map(|i| i * 7 + 1).collect();
        assert_eq!(d.download(&out).unwrap(), want);
        let (_src2, _data2) = primary(&d);
        clean(&d.simulate(&writer, plain, &[Arg::buffer_mut(&mut src)]).unwrap());
    }
}

#[test]
fn a_dependent_is_checked_against_the_launch_just_before_it_only() {
    // The reader's early read of `data` after a launch that never touched it (the writer on
    // `src`) is clean: only the launch just before a dependent may still be running.
    let (reader, writer) = (pdl_reader::kernel_for(1).unwrap(), pdl_writer::kernel_for(0).unwrap());
    let d = dev(Strategy::Random, 3);
    let (mut src, data) = primary(&d);
    d.simulate(&writer, LaunchConfig::linear(CTAS, THREADS), &[Arg::buffer_mut(&mut src)]).unwrap();
    let out = d.upload(&[0u32; N]).unwrap();
    clean(&d.simulate(&reader, programmatic(), &[Arg::buffer(&data), Arg::buffer(&out)]).unwrap());
}

#[test]
fn an_atomic_on_the_primarys_output_before_the_wait_is_found_at_its_line() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (_src, mut data) = primary(&d);
        let rep =
            d.simulate(&pdl_atomic::kernel_for(1).unwrap(), programmatic(), &[Arg::buffer_mut(&mut data)]).unwrap();
        let f = only_early_at(&rep, "EARLY-ATOMIC");
        let b = byte_of(f);
        let want = format!(
            "an `atom` of 4 bytes at buffer #1 byte {b} (of 1024) before this thread's `griddepcontrol.wait`, in a \
             programmatic dependent launch: the previous launch (`pdl_primary`) wrote buffer #1 byte {b} (of 1024)"
        );
        assert!(f.message.starts_with(&want), "{}", f.message);
        let (_src, mut data) = primary(&d);
        let late = pdl_atomic::kernel_for(0).unwrap();
        clean(&d.simulate(&late, programmatic(), &[Arg::buffer_mut(&mut data)]).unwrap());
        let want: Vec<u32> = (0..N as u32).map(|i| i * 7 + 2).collect();
        assert_eq!(d.download(&data).unwrap(), want);
    }
}

#[test]
fn a_bulk_copy_issued_before_the_issuers_wait_is_found_at_its_issue() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (_src, data) = primary(&d);
        let out = d.upload(&[0u32; N]).unwrap();
        let rep = d
            .simulate(&pdl_bulk::kernel_for(1).unwrap(), programmatic(), &[Arg::buffer(&data), Arg::buffer(&out)])
            .unwrap();
        let f = only_early_at(&rep, "EARLY-BULK");
        assert_eq!(f.thread, Some(0), "the issuing thread: {f}");
        let b = 512 * f.cta[0];
        let want = format!(
            "a bulk copy's global read of 512 bytes at buffer #1 byte {b} (of 1024) before this thread's \
             `griddepcontrol.wait`, in a programmatic dependent launch: the previous launch (`pdl_primary`) wrote \
             buffer #1 byte {b} (of 1024)"
        );
        assert!(f.message.starts_with(&want), "{}", f.message);
        assert_eq!(rep.findings.len(), CTAS as usize, "one per CTA's issue: {}", rep.text());
        // Issued after the issuer's wait: clean, and the copy lands what the primary wrote.
        let (_src, data) = primary(&d);
        let out = d.upload(&[0u32; N]).unwrap();
        let late = pdl_bulk::kernel_for(0).unwrap();
        clean(&d.simulate(&late, programmatic(), &[Arg::buffer(&data), Arg::buffer(&out)]).unwrap());
        let want: Vec<u32> = (0..N as u32).map(|i| i * 7 + 1).collect();
        assert_eq!(d.download(&out).unwrap(), want);
    }
}
