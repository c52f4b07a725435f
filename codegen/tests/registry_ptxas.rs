//! The op registry checked against the assembler: every variant of every op (each choice,
//! optional arguments given and omitted, registers and literals) in a minimal kernel for
//! every target. `ptxas` must accept the kernel exactly when the registry's target check
//! does, so the ISA minimums are facts. The PTX is emitted even when the check fails, at
//! `.version` max(what the ops need, the target's minimum). Where an op needs a newer PTX
//! ISA than its oldest target's minimum, the version just below must be rejected too (so
//! the version is a minimum, not merely enough). What must assemble is batched into one module
//! per target and `.version`, so the matrix takes a few seconds.

use phaser_codegen::arch::check::{check_kernel, needed_ptx, ops_ptx};
use phaser_codegen::emit::{emit_module_unchecked, EmitOptions};
use phaser_codegen::registry::{self, variant_kernel, variants};
use phaser_codegen::{ptxas, Kernel, Module, PtxVersion, Target};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// PTX ISA versions, oldest first (to find the one below a requirement).
const PTX_VERSIONS: &[(u8, u8)] = &[
    (6, 0),
    (6, 1),
    (6, 2),
    (6, 3),
    (6, 4),
    (6, 5),
    (7, 0),
    (7, 1),
    (7, 2),
    (7, 3),
    (7, 4),
    (7, 5),
    (7, 6),
    (7, 7),
    (7, 8),
    (8, 0),
    (8, 1),
    (8, 2),
    (8, 3),
    (8, 4),
    (8, 5),
    (8, 6),
    (8, 7),
    (8, 8),
    (9, 0),
];

fn version_below(v: PtxVersion) -> Option<PtxVersion> {
    PTX_VERSIONS.iter().rev().map(|&(a, b)| PtxVersion::new(a, b)).find(|x| *x < v)
}

struct Case {
    what: String,
    /// The kernel, named after the case (cases share modules).
    kernel: Kernel,
    /// The `.version` it is emitted with.
    version: PtxVersion,
    /// Whether ptxas must accept it.
    expect_ok: bool,
    why: String,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut push = |what: &str, kernel: Kernel, version, expect_ok, why| {
        // Unchecked: some cases are ops the target lacks, to see what ptxas says of them.
        let mut parts = kernel.into_parts();
        parts.name = format!("case{}", out.len());
        let kernel = parts.finish_unchecked();
        out.push(Case { what: what.to_string(), kernel, version, expect_ok, why });
    };
    for op in registry::ops() {
        for v in variants(op) {
            let form = if v.literals { "literals" } else { "registers" };
            let label = if v.label.is_empty() { String::new() } else { format!("{}; ", v.label) };
            let what = format!("`{}` ({label}{form})", op.signature());
            let mut oldest_ok = None;
            for target in Target::ALL {
                let k = variant_kernel(op, &v, target).unwrap_or_else(|e| panic!("{what} on {target}: {e}"));
                let verdict = check_kernel(&k);
                let why = match &verdict {
                    Ok(v) => format!("the registry accepts it (PTX {v})"),
                    Err(e) => format!("the registry rejects it: {e}"),
                };
                if verdict.is_ok() && oldest_ok.is_none() {
                    oldest_ok = Some(k.clone());
                }
                push(&what, k.clone(), needed_ptx(&k), verdict.is_ok(), why);
            }
            // The PTX version below the ops' need, on the oldest target that has them.
            if let Some(k) = oldest_ok {
                let need = ops_ptx(&k);
                if let Some(below) = version_below(need).filter(|b| *b >= k.target().min_ptx()) {
                    let why = format!("the registry says it needs PTX {need}, but this is PTX {below}");
                    push(&what, k, below, false, why);
                }
            }
        }
    }
    out
}

/// PTX of the cases' kernels in one module (they share a target and a version).
fn module_ptx(cases: &[&Case]) -> String {
    let m = Module::new(cases.iter().map(|c| c.kernel.clone()).collect());
    emit_module_unchecked(&m, cases[0].version, &EmitOptions::default())
}

#[test]
fn ptxas_accepts_each_op_variant_exactly_where_the_registry_does() {
    let ptxas = ptxas::find().expect("ptxas is required for this test (see README: the test command installs it)");
    let start = std::time::Instant::now();
    let cases = cases();
    // What must assemble goes in one module per target and version (a failing module is
    // retried case by case); what must not, one kernel at a time.
    let mut jobs: Vec<Vec<&Case>> = Vec::new();
    let mut groups: BTreeMap<(Target, PtxVersion), Vec<&Case>> = BTreeMap::new();
    for c in &cases {
        if c.expect_ok {
            groups.entry((c.kernel.target(), c.version)).or_default().push(c);
        } else {
            jobs.push(vec![c]);
        }
    }
    jobs.extend(groups.into_values());
    let next = AtomicUsize::new(0);
    let wrong = Mutex::new(Vec::new());
    let assemble = |c: &[&Case]| ptxas::assemble(&ptxas, &module_ptx(c), c[0].kernel.target().name());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                if job.len() > 1 && assemble(job).is_ok() {
                    continue;
                }
                for c in job {
                    let got = assemble(&[c]);
                    if got.is_ok() != c.expect_ok {
                        let said = match &got {
                            Ok(_) => "ptxas accepts it".to_string(),
                            Err(m) => format!("ptxas rejects it: {}", m.lines().next().unwrap_or("")),
                        };
                        let t = c.kernel.target();
                        wrong.lock().unwrap().push(format!("{} on {t}: {}, but {said}", c.what, c.why));
                    }
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    let accepted = cases.iter().filter(|c| c.expect_ok).count();
    eprintln!(
        "{} kernels assembled in {} ptxas runs, {:.1?}: {accepted} the registry accepts, {} it rejects (PTX version minimums included)",
        cases.len(),
        jobs.len(),
        start.elapsed(),
        cases.len() - accepted
    );
    assert!(wrong.is_empty(), "{} disagreements with ptxas:\n{}", wrong.len(), wrong.join("\n"));
}
