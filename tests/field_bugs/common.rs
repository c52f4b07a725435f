//! What every report's test needs: a simulator device per scheduling strategy, the line of a
//! marker comment in the report's own file, and the finding that must sit at it.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::Device;

/// Every report is checked under each scheduling strategy: a finding that only one
/// interleaving shows is not a precise finding.
pub const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

pub fn dev(s: Strategy, seed: u64) -> Device {
    Device::sim(SimConfig::default().with_strategy(s).with_seed(seed))
}

/// A report's source file: its path as `file!()` records it and its text (`include_str!`).
#[derive(Clone, Copy)]
pub struct Source {
    pub file: &'static str,
    pub text: &'static str,
}

/// `Source` of the file that calls it.
#[macro_export]
macro_rules! this_file {
    ($name:literal) => {
        $crate::common::Source { file: file!(), text: include_str!($name) }
    };
}

impl Source {
    /// The line holding `marker` in a comment; a marker on a line of its own names the
    /// statement below it. Exactly one line may hold it.
    pub fn line_of(&self, marker: &str) -> u32 {
        let tagged = format!("// {marker}");
        let lines: Vec<&str> = self.text.lines().collect();
        let hits: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_end().ends_with(&tagged)).collect();
        assert_eq!(hits.len(), 1, "marker `{marker}` must end exactly one line of {}", self.file);
        let i = hits[0];
        (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
    }

    /// The one finding of category `c`, which must be at the line marked `marker` of this file.
    pub fn finding_at<'a>(&self, rep: &'a SimReport, c: Category, marker: &str) -> &'a Finding {
        let line = self.line_of(marker);
        let f = rep
            .findings
            .iter()
            .find(|f| f.category == c && f.loc.is_some_and(|l| l.file == self.file && l.line == line))
            .unwrap_or_else(|| panic!("no {c} finding at {}:{line} ({marker}):\n{}", self.file, rep.text()));
        f
    }
}

/// The barrier a finding names, as the report prints it (`` `full[0]` ``).
pub fn barrier_of(f: &Finding) -> String {
    f.barrier.as_ref().map(|b| b.to_string()).unwrap_or_else(|| panic!("the finding names no barrier:\n{f}"))
}

pub fn clean(rep: &SimReport) {
    assert!(rep.findings.is_empty() && !rep.has_errors(), "the fixed kernel has findings:\n{}", rep.text());
}
