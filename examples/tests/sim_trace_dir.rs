//! `SimConfig::trace_dir` (`phaser run --backend sim --trace-dir DIR`): every launch leaves a
//! Perfetto trace and its probe tables; the seeds' two-stage table comes out of a real run.

use phaser::runtime::sim::SimConfig;
use phaser::Device;
use phaser_examples::gallery::{self, Size};

#[test]
fn trace_dir_gets_a_perfetto_trace_and_the_seed_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    let dev = Device::sim(SimConfig { trace_dir: Some(dir.clone()), ..SimConfig::default() });
    let e = gallery::find("phase_tma_table").unwrap();
    let run = gallery::run(&e, &dev, Size::Quick, 1).unwrap();
    assert!(run.outcome.passed, "{}", run.outcome.detail);

    let json = std::fs::read_to_string(dir.join("phase_tma_table.1.trace.json")).unwrap();
    assert!(json.starts_with('{') && json.contains("\"traceEvents\""), "{}", &json[..json.len().min(200)]);
    assert!(json.contains("init ") && json.contains("phase"), "barrier events are recorded");
    let table = std::fs::read_to_string(dir.join("phase_tma_table.1.probes.txt")).unwrap();
    let rows: Vec<Vec<u32>> = table
        .lines()
        .skip_while(|l| !l.starts_with("probe `phase_tma`"))
        .skip(3)
        .map(|l| l.split('|').map(|c| c.trim().parse().unwrap()).collect())
        .collect();
    assert_eq!(rows[..4], [vec![0, 0, 0, 1, 0], vec![1, 1, 0, 1, 1], vec![2, 0, 1, 0, 1], vec![3, 1, 1, 0, 0]]);
}
