//! Running the suite: every subject unmutated and every mutant, under every schedule, on all
//! cores; what each run found.

use super::catalog::{mutants, Mutant};
use super::site::{short, source_line};
use super::subject::{subject, subjects, Subject};
use super::verify::only_target_changed;
use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, SimConfig, Strategy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Seeds of the random schedules.
pub const RANDOM_SEEDS: std::ops::RangeInclusive<u64> = 2..=6;

/// The schedules every kernel is simulated under: round-robin, random with each of
/// [`RANDOM_SEEDS`], adversarial. One simulation core each (the suite runs kernels in
/// parallel instead).
pub fn schedules() -> Vec<SimConfig> {
    let base = SimConfig { threads: 1, trace: false, ..SimConfig::default() };
    let mut v = vec![base.clone().with_strategy(Strategy::RoundRobin).with_seed(1)];
    v.extend(RANDOM_SEEDS.map(|s| base.clone().with_strategy(Strategy::Random).with_seed(s)));
    v.push(base.with_strategy(Strategy::Adversarial).with_seed(3));
    v
}

/// What one simulation found: the categories of its findings, or why it did not run.
pub type Found = Result<Vec<Category>, String>;

pub struct CleanResult {
    pub subject: &'static str,
    /// Per schedule of [`schedules`].
    pub found: Vec<Found>,
}

impl CleanResult {
    pub fn clean(&self) -> bool {
        self.found.iter().all(|f| matches!(f, Ok(c) if c.is_empty()))
    }
}

pub struct MutantResult {
    pub subject: &'static str,
    /// The instruction, its Rust line and the line's text.
    pub op: &'static str,
    pub line: String,
    pub text: String,
    pub mutation: String,
    pub expect: Category,
    /// Why the bug shows only under some schedules (`None`: it must show under all).
    pub race: Option<&'static str>,
    /// Per schedule of [`schedules`]; empty when the mutation could not be made.
    pub found: Vec<Found>,
    /// Why the mutation could not be made (its site did not resolve, or it changed more than
    /// its instruction).
    pub error: Option<String>,
}

impl MutantResult {
    /// Schedules whose run reported the expected category.
    pub fn hits(&self) -> usize {
        self.found.iter().filter(|f| matches!(f, Ok(c) if c.contains(&self.expect))).count()
    }
    /// Caught with its expected category under every schedule (or, for a race, under one).
    pub fn caught(&self) -> bool {
        let need = if self.race.is_some() { 1 } else { self.found.len() };
        self.error.is_none() && !self.found.is_empty() && self.hits() >= need
    }
}

pub struct Suite {
    pub clean: Vec<CleanResult>,
    pub mutants: Vec<MutantResult>,
}

impl Suite {
    pub fn caught(&self) -> usize {
        self.mutants.iter().filter(|m| m.caught()).count()
    }
    pub fn clean_count(&self) -> usize {
        self.clean.iter().filter(|c| c.clean()).count()
    }
}

/// Make mutant `m` of `k`: resolve its site, apply its mutator, and check that exactly its
/// instruction changed.
pub fn make_mutant(m: &Mutant, k: &Kernel) -> Result<(Kernel, usize), String> {
    let (id, _) = m.site.resolve(k)?;
    let mut mutant = k.to_parts();
    m.mutator.apply(&mut mutant, id)?;
    only_target_changed(k.body(), &mutant.body, id)?;
    // Unchecked: a mutant is a bug on purpose (an arrival count of 0 included) for the
    // simulator's checker to find; the static checks would refuse some before it runs.
    let mutant = mutant.finish_unchecked();
    Ok((mutant, id))
}

/// Run every job on all cores: `(subject, kernel, schedule index)` → what it found.
fn simulate_all(jobs: &[(Subject, &Kernel, usize)]) -> Vec<Found> {
    let scheds = schedules();
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Found>>> = Mutex::new(vec![None; jobs.len()]);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(subj, k, sched)) = jobs.get(i) else { break };
                let found = subj.simulate(k, &scheds[sched]).map(|r| r.categories()).map_err(|e| e.to_string());
                out.lock().unwrap()[i] = Some(found);
            });
        }
    });
    out.into_inner().unwrap().into_iter().map(|f| f.expect("every job ran")).collect()
}

/// Run every subject clean and every mutant under every schedule.
pub fn run_suite() -> Suite {
    run(&mutants(), true)
}

/// Run `list` (and, if `clean`, every subject unmutated).
pub fn run(list: &[Mutant], clean: bool) -> Suite {
    let subs = subjects();
    let kernels: Vec<Kernel> =
        subs.iter().map(|s| s.kernel().unwrap_or_else(|e| panic!("subject `{}`: {e}", s.name))).collect();
    let nsched = schedules().len();
    let made: Vec<Result<(Kernel, usize), String>> = list
        .iter()
        .map(|m| {
            let i =
                subs.iter().position(|s| s.name == m.subject).unwrap_or_else(|| panic!("no subject `{}`", m.subject));
            make_mutant(m, &kernels[i])
        })
        .collect();
    let mut jobs: Vec<(Subject, &Kernel, usize)> = Vec::new();
    if clean {
        for (s, k) in subs.iter().zip(&kernels) {
            jobs.extend((0..nsched).map(|i| (*s, k, i)));
        }
    }
    for (m, made) in list.iter().zip(&made) {
        if let Ok((k, _)) = made {
            let s = subject(m.subject).expect("known subject");
            jobs.extend((0..nsched).map(|i| (s, k, i)));
        }
    }
    let mut found = simulate_all(&jobs).into_iter();
    let clean = if clean {
        subs.iter().map(|s| CleanResult { subject: s.name, found: found.by_ref().take(nsched).collect() }).collect()
    } else {
        Vec::new()
    };
    let mutants = list
        .iter()
        .zip(made)
        .map(|(m, made)| {
            let i = subs.iter().position(|s| s.name == m.subject).expect("known subject");
            let loc = m.site.resolve(&kernels[i]).ok().map(|(_, l)| l);
            let (found, error) = match made {
                Ok(_) => (found.by_ref().take(nsched).collect(), None),
                Err(e) => (Vec::new(), Some(e)),
            };
            MutantResult {
                subject: m.subject,
                op: m.site.op.name,
                line: loc.map(|l| short(&l)).unwrap_or_else(|| "?".into()),
                text: loc.and_then(|l| source_line(&l)).map(|t| t.trim().to_string()).unwrap_or_default(),
                mutation: m.mutator.describe(),
                expect: m.expect,
                race: m.race,
                found,
                error,
            }
        })
        .collect();
    Suite { clean, mutants }
}
