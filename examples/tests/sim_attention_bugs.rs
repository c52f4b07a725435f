//! Issue 20's injected bugs in the DSL attention (`gallery::attention_dsl`), each reported by
//! the simulator's checker with its category at the DSL line of its cause. The mutants are the
//! mutation suite's (`mutate::catalog`, subject `attention_dsl`); the expected line is found by
//! searching `attention_dsl.rs` for the statement's text, never by number.

use phaser::runtime::sim::{Category, SimConfig, Strategy};
use phaser_examples::mutate::{self, make_mutant};

/// The kernel's source text.
fn source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/gallery/attention_dsl.rs");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1-based line of the `nth` (from 0) line containing `text` (whitespace-insensitive).
fn line_of(src: &str, text: &str, nth: usize) -> u32 {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let want = squash(text);
    let lines: Vec<usize> =
        src.lines().enumerate().filter(|(_, l)| squash(l).contains(&want)).map(|(i, _)| i + 1).collect();
    assert!(nth < lines.len(), "`{text}` occurs on {} line(s) of attention_dsl.rs, wanted #{}", lines.len(), nth + 1);
    lines[nth] as u32
}

/// Per attention mutant of the catalog, in its order: the statement its finding must name.
const WHERE: &[(&str, usize)] = &[
    // (a) block 0's K stage released before its `wait_group(0)`: the release.
    ("T.pipeline.consumer_release(k_pipe, kst);", 0),
    // (a) the V stage released before the `wait_group(0)` retiring P V: the release.
    ("T.pipeline.consumer_release(v_pipe, vst);", 0),
    // (b) P packed while the P V wgmma still reads it: the pack.
    ("T.fragment.to_a(p[kk], s, kk);", 0),
    // (b) no `wgmma.fence` after the pack and the softmax touched S: the S wgmma.
    ("T.ptx.wgmma.mma_async(s, q_tiles[c][cw], k_ring[ks_next][c], kk, c > 0 || kk > 0);", 0),
    // (c) the ping-pong `bar.sync` 224 / 288, the `bar.arrive` 224: the mutated barrier.
    ("T.ptx.bar.sync(my_turn, 256);", 1),
    ("T.ptx.bar.sync(my_turn, 256);", 1),
    ("T.ptx.bar.arrive(their_turn, 256);", 2),
    // (d) the K stage refilled by TMA with no wait on `empty`, or once one warpgroup released
    // it (`empty` counting one arrival): the refill.
    ("T.tma.load(k_ring[ks][c], k, [kv_head, n0, CHUNK * c], k_full);", 0),
    ("T.tma.load(k_ring[ks][c], k, [kv_head, n0, CHUNK * c], k_full);", 0),
];

#[test]
fn each_injected_bug_is_reported_at_its_dsl_line() {
    let src = source();
    let subject = mutate::subject("attention_dsl").expect("attention_dsl is a subject");
    let kernel = subject.kernel().unwrap();
    let list: Vec<_> = mutate::mutants().into_iter().filter(|m| m.subject == "attention_dsl").collect();
    assert_eq!(list.len(), WHERE.len(), "one expected line per attention mutant");
    for (m, &(text, nth)) in list.iter().zip(WHERE) {
        let want = line_of(&src, text, nth);
        let (mutant, _) = make_mutant(m, &kernel).unwrap_or_else(|e| panic!("{}: {e}", m.site));
        for strategy in [Strategy::RoundRobin, Strategy::Adversarial] {
            let sc = SimConfig { threads: 1, ..SimConfig::default() }.with_strategy(strategy).with_seed(3);
            let rep = subject.simulate(&mutant, &sc).unwrap_or_else(|e| panic!("{}: {e}", m.site));
            let at_line = rep.findings.iter().any(|f| {
                f.category == m.expect
                    && f.loc.is_some_and(|l| l.file.ends_with("gallery/attention_dsl.rs") && l.line == want)
            });
            assert!(
                at_line,
                "{} {} ({strategy:?}): no {} finding at attention_dsl.rs:{want} (`{text}`):\n{}",
                m.site,
                m.mutator.describe(),
                m.expect,
                rep.text()
            );
        }
    }
    // The unmutated kernel: nothing.
    let rep = subject.simulate(&kernel, &SimConfig::default()).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert!(list.iter().any(|m| m.expect == Category::NamedBarrier));
}
