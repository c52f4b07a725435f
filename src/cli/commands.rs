//! The CLI's commands, over the registry.

use super::out::{self, cell, ms, verdict, Out};
use super::{size, Backend, Selection, EXIT_FAILED, EXIT_IO, EXIT_NO_BACKEND, EXIT_OK, EXIT_USAGE};
use crate::registry::{self, Example, ExampleRun, Size};
use phaser_codegen::{Kernel, Target};
use phaser_runtime::sim::SimConfig;
use phaser_runtime::{Device, RuntimeError};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// The registered examples `sel` picks; an `--only` that matches nothing is a usage error.
fn selected(o: &Out, sel: &Selection) -> Result<Vec<Example>, u8> {
    let all = registry::examples();
    let picked: Vec<Example> = all
        .into_iter()
        .filter(|e| {
            sel.only.as_deref().is_none_or(|only| if sel.exact { e.name == only } else { e.name.contains(only) })
        })
        .collect();
    if picked.is_empty() {
        match &sel.only {
            Some(only) if sel.exact => o.error(format!("no example is named {only:?} (`phaser list` lists them)")),
            Some(only) => o.error(format!("no example name contains {only:?} (`phaser list` lists them)")),
            None => o.error("this program registers no runnable examples"),
        }
        return Err(EXIT_USAGE);
    }
    Ok(picked)
}

fn device(o: &Out, backend: Backend, sim: SimConfig) -> Result<Device, u8> {
    match backend {
        Backend::Sim => Ok(Device::sim(sim)),
        Backend::Gpu => Device::cuda(0).map_err(|e| {
            o.error(e.to_string());
            EXIT_NO_BACKEND
        }),
        Backend::Auto => Ok(Device::cuda(0).unwrap_or_else(|why| {
            o.note(format!("No GPU found ({why}); running in the CPU simulator."));
            Device::sim(sim)
        })),
    }
}

fn size_name(s: Size) -> &'static str {
    match s {
        Size::Small => "small",
        Size::Quick => "quick",
        Size::Full => "full",
    }
}

pub(crate) fn list(o: &Out) -> u8 {
    let kernels = registry::kernels();
    let examples = registry::examples();
    o.json(json!({
        "kernels": kernels.iter().map(|k| json!({
            "name": k.name, "target": k.target.to_string(), "comptime": k.comptime,
            "file": k.location.0, "line": k.location.1,
        })).collect::<Vec<_>>(),
        "examples": examples.iter().map(|e| json!({"name": e.name, "about": e.about})).collect::<Vec<_>>(),
    }));
    o.say(console::style(format!("Kernels ({} registered)", kernels.len())).bold().to_string());
    let rows: Vec<Vec<String>> = kernels
        .iter()
        .map(|k| {
            vec![
                k.name.to_string(),
                k.target.to_string(),
                k.comptime.join(", "),
                format!("{}:{}", k.location.0, k.location.1),
            ]
        })
        .collect();
    o.table(&["kernel", "target", "comptime", "defined at"], &rows);
    o.say("");
    o.say(console::style(format!("Examples ({})", examples.len())).bold().to_string());
    let rows: Vec<Vec<String>> = examples.iter().map(|e| vec![e.name.clone(), e.about.clone()]).collect();
    o.table(&["example", "about"], &rows);
    EXIT_OK
}

/// One kernel to write: its file stem and IR (or why it could not be built).
struct Emitted {
    stem: String,
    origin: String,
    kernel: Result<Kernel, String>,
}

fn parse_comptime(items: &[String]) -> Result<Vec<(String, u32)>, String> {
    let mut values: Vec<(String, u32)> = Vec::new();
    for kv in items {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("--comptime {kv:?}: expected NAME=VALUE (e.g. N=64)"))?;
        let v: u32 = v.trim().parse().map_err(|_| format!("--comptime {kv:?}: the value must be a u32"))?;
        let k = k.trim().to_string();
        if values.iter().any(|(n, _)| *n == k) {
            return Err(format!("--comptime {k} is given twice; give each #[comptime] value once"));
        }
        values.push((k, v));
    }
    Ok(values)
}

/// Create `dir` and check that a file can be written in it, before any work that would
/// write there (an unwritable output is exit status 4, not a failed example).
fn writable_dir(o: &Out, dir: &Path) -> Result<(), u8> {
    let probe = dir.join(format!(".phaser-write-check-{}", std::process::id()));
    let r = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe));
    r.map_err(|e| {
        o.error(format!("cannot write into {}: {e}", dir.display()));
        EXIT_IO
    })
}

/// File stems: the kernel's name, plus `.2`, `.3`, ... for further kernels of that name.
fn stem(seen: &mut std::collections::HashMap<String, u32>, name: &str) -> String {
    let n = seen.entry(name.to_string()).or_insert(0);
    *n += 1;
    if *n == 1 {
        name.to_string()
    } else {
        format!("{name}.{n}")
    }
}

/// What `emit` does with ptxas besides writing the PTX.
pub(crate) struct Assemble {
    /// A `.cubin` next to each `.ptx`.
    pub cubin: bool,
    /// Prebuilt cubins for the runtime (`PHASER_CUBIN_DIR`), named by
    /// [`phaser_runtime::cuda::jit::prebuilt_cubin_name`].
    pub cubin_dir: Option<PathBuf>,
    /// Assemble only, to check (the cubin is not kept).
    pub check: bool,
}

impl Assemble {
    fn needs_ptxas(&self) -> bool {
        self.cubin || self.check || self.cubin_dir.is_some()
    }
}

pub(crate) fn emit(
    o: &Out,
    only: Option<&str>,
    comptime: &[String],
    target: Option<Target>,
    dir: &Path,
    assemble: &Assemble,
) -> u8 {
    let values = match parse_comptime(comptime) {
        Ok(v) => v,
        Err(e) => {
            o.error(e);
            return EXIT_USAGE;
        }
    };
    let mut todo: Vec<Emitted> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    let mut built: Vec<Kernel> = Vec::new();
    for k in registry::kernels().into_iter().filter(|k| only.is_none_or(|n| n == k.name)) {
        if only.is_none() && k.comptime.iter().any(|p| !values.iter().any(|(n, _)| n == p)) {
            skipped.push(format!("{} (needs --comptime {})", k.name, k.comptime.join("=.. --comptime ") + "=.."));
            continue;
        }
        let ir = k.build_named(target.unwrap_or(k.target), &values);
        if let (Some(_), Err(problem)) = (only, &ir) {
            if problem.contains("--comptime") || problem.contains("#[comptime]") {
                o.error(problem);
                return EXIT_USAGE;
            }
        }
        if let Ok(ir) = &ir {
            built.push(ir.clone());
        }
        todo.push(Emitted {
            stem: stem(&mut seen, k.name),
            origin: format!("{}:{}", k.location.0, k.location.1),
            kernel: ir,
        });
    }
    if only.is_some() && todo.is_empty() && !values.is_empty() {
        // `--comptime` with an example's kernel: those are built by their example.
        o.note("--comptime applies to registered kernels only");
    }
    // The examples' kernels (built by their examples' own code, e.g. with the builder API),
    // each distinct IR once.
    let example_target = target.unwrap_or(Target::Sm90a);
    // `--kernel NAME` of a registered kernel means that kernel, built with the given values.
    let examples = if only.is_some() && !todo.is_empty() { Vec::new() } else { registry::examples() };
    for e in examples {
        match (e.kernels)(example_target) {
            Ok(ks) => {
                for k in ks {
                    if only.is_some_and(|n| n != k.name()) || built.contains(&k) {
                        continue;
                    }
                    built.push(k.clone());
                    todo.push(Emitted {
                        stem: stem(&mut seen, k.name()),
                        origin: format!("example {}", e.name),
                        kernel: Ok(k),
                    });
                }
            }
            Err(err) => todo.push(Emitted {
                stem: format!("example-{}", e.name),
                origin: format!("example {}", e.name),
                kernel: Err(err.to_string()),
            }),
        }
    }
    if todo.is_empty() {
        match only {
            Some(n) if skipped.is_empty() => o.error(format!("no kernel named `{n}` (`phaser list` lists them)")),
            Some(_) => o.error(skipped.join("; ")),
            None => o.error("nothing to emit: this program registers no kernels"),
        }
        return EXIT_USAGE;
    }
    for d in std::iter::once(dir).chain(assemble.cubin_dir.as_deref()) {
        if let Err(e) = std::fs::create_dir_all(d) {
            o.error(format!("creating {}: {e}", d.display()));
            return EXIT_IO;
        }
    }
    let ptxas = if assemble.needs_ptxas() {
        match phaser_codegen::ptxas::find() {
            Ok(p) => Some(p),
            Err(e) => {
                o.error(e);
                return EXIT_FAILED;
            }
        }
    } else {
        None
    };
    let bar = o.progress(todo.len() as u64, "emit");
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    let mut failed = 0;
    for t in &todo {
        bar.set_message(t.stem.clone());
        let (status, ok, files) = match emit_one(t, dir, ptxas.as_deref(), assemble) {
            Ok((status, files)) => (status, true, files),
            Err(Problem::Io(e)) => {
                bar.finish_and_clear();
                o.error(e);
                return EXIT_IO;
            }
            Err(Problem::Failed(e)) => (e, false, Vec::new()),
        };
        failed += usize::from(!ok);
        let target = t.kernel.as_ref().map(|k| k.target().to_string()).unwrap_or_default();
        rows.push(vec![
            t.stem.clone(),
            target.clone(),
            cell(ok),
            status.lines().next().unwrap_or("").to_string(),
            t.origin.clone(),
        ]);
        docs.push(
            json!({"kernel": t.stem, "target": target, "ok": ok, "status": status, "files": files, "from": t.origin}),
        );
        if !ok {
            o.say_above(&bar, format!("{} {}: {status}", verdict(false), t.stem));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    o.json(json!({"out": dir.display().to_string(), "kernels": docs, "skipped": skipped, "failed": failed}));
    o.table(&["kernel", "target", "result", "files", "from"], &rows);
    for s in &skipped {
        o.note(format!("skipped {s}"));
    }
    o.say(format!("{} kernels written to {}, {failed} failed", todo.len() - failed, dir.display()));
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

enum Problem {
    Io(String),
    Failed(String),
}

/// Write one kernel's PTX (and cubins); the status line and the files written.
fn emit_one(
    t: &Emitted,
    dir: &Path,
    ptxas: Option<&Path>,
    assemble: &Assemble,
) -> Result<(String, Vec<String>), Problem> {
    let k = t.kernel.as_ref().map_err(|e| Problem::Failed(e.clone()))?;
    let text = phaser_codegen::emit_kernel(k).map_err(|e| Problem::Failed(e.to_string()))?;
    let ptx_path = dir.join(format!("{}.ptx", t.stem));
    std::fs::write(&ptx_path, &text).map_err(|e| Problem::Io(format!("writing {}: {e}", ptx_path.display())))?;
    let mut files = vec![ptx_path.display().to_string()];
    let Some(ptxas) = ptxas else {
        return Ok((ptx_path.display().to_string(), files));
    };
    let arch = k.target().name();
    // Line info, so nvdisasm -g / cuobjdump and the profilers show the Rust lines.
    let lineinfo: &[&str] = &["-lineinfo"];
    let mut kept = Vec::new();
    if assemble.cubin {
        kept.push(dir.join(format!("{}.cubin", t.stem)));
    }
    if let Some(prebuilt) = &assemble.cubin_dir {
        let name = phaser_runtime::cuda::jit::prebuilt_cubin_name(&text)
            .ok_or_else(|| Problem::Failed("the PTX declares no .target".into()))?;
        kept.push(prebuilt.join(name));
    }
    if kept.is_empty() {
        phaser_codegen::ptxas::assemble(ptxas, &text, arch)
            .map_err(|e| Problem::Failed(format!("ptxas failed: {e}")))?;
        return Ok((format!("{} (ptxas ok)", ptx_path.display()), files));
    }
    for cubin_path in &kept {
        phaser_codegen::ptxas::assemble_to(ptxas, &text, arch, lineinfo, cubin_path)
            .map_err(|e| Problem::Failed(format!("ptxas failed: {}", e.trim())))?;
        files.push(cubin_path.display().to_string());
    }
    let shown: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
    Ok((format!("{} (ptxas -lineinfo ok)", shown.join(", ")), files))
}

fn run_json(name: &str, seed: u64, r: &Result<ExampleRun, RuntimeError>) -> serde_json::Value {
    match r {
        Ok(r) => json!({
            "example": name, "seed": seed, "passed": r.passed && r.findings.is_empty(), "skipped": r.skipped,
            "detail": r.detail,
            "digest": format!("{:016x}", r.digest), "kernel_ms": r.elapsed.map(|d| d.as_secs_f64() * 1e3),
            "findings": r.findings,
        }),
        Err(e) => json!({
            "example": name, "seed": seed, "passed": false, "error": e.to_string(),
            "findings": e.findings().map(|f| f.iter().map(|f| f.to_string()).collect::<Vec<_>>()).unwrap_or_default(),
        }),
    }
}

/// Run `examples` on `dev` at `size`, print a line each and a table; the number failed.
/// `strict`: a simulator finding fails the example even when its outputs are right.
fn run_all(
    o: &Out,
    dev: &Device,
    size: Size,
    examples: &[Example],
    seed: Option<u64>,
    what: &str,
    strict: bool,
) -> usize {
    o.say(format!("Device: {} | sizes: {}\n", dev.describe(), size_name(size)));
    let bar = o.progress(examples.len() as u64, what);
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    let (mut failed, mut skipped) = (0, 0);
    for e in examples {
        bar.set_message(e.name.clone());
        let seed = seed.unwrap_or_else(fresh_seed);
        let t = Instant::now();
        let r = (e.run)(dev, size, seed);
        let passed = matches!(&r, Ok(r) if r.passed && (!strict || r.findings.is_empty()));
        // Kernels this device cannot run (sm_100a on an sm_90 GPU): neither passed nor failed.
        let skip = matches!(&r, Ok(r) if r.skipped);
        skipped += usize::from(skip);
        failed += usize::from(!passed && !skip);
        let detail = match &r {
            Ok(r) if r.findings.is_empty() => r.detail.clone(),
            Ok(r) => format!("{}; findings:\n  {}", r.detail, r.findings.join("\n  ")),
            Err(err) => format!("error (seed {seed}): {err}"),
        };
        let shown = if skip { out::skipped() } else { verdict(passed) };
        o.say_above(&bar, format!("{shown} {:<32} ({:.2?}) {detail}", e.name, t.elapsed()));
        let (elapsed, digest) = match &r {
            Ok(r) if !r.skipped => (r.elapsed, format!("{:016x}", r.digest)),
            _ => (None, "-".into()),
        };
        let result = if skip { "skip".to_string() } else { cell(passed) };
        rows.push(vec![e.name.clone(), result, ms(elapsed), digest, dev.describe()]);
        docs.push(run_json(&e.name, seed, &r));
        bar.inc(1);
    }
    bar.finish_and_clear();
    o.json(json!({
        "device": dev.describe(), "size": size_name(size), "examples": docs, "failed": failed, "skipped": skipped,
    }));
    o.say("");
    o.table(&["example", "result", "kernel time", "output digest", "device"], &rows);
    o.say(format!("{} passed, {failed} failed, {skipped} skipped", examples.len() - failed - skipped));
    failed
}

pub(crate) fn run(
    o: &Out,
    backend: Backend,
    full: bool,
    quick: bool,
    sel: &Selection,
    trace_dir: Option<PathBuf>,
) -> u8 {
    let examples = match selected(o, sel) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Some(dir) = &trace_dir {
        if let Err(code) = writable_dir(o, dir) {
            return code;
        }
    }
    let sim = SimConfig { trace_dir: trace_dir.clone(), ..Default::default() };
    let dev = match device(o, backend, sim) {
        Ok(d) => d,
        Err(code) => return code,
    };
    if trace_dir.is_some() && dev.is_gpu() {
        o.note("note: --trace-dir applies to the simulator only; ignored on the GPU");
    }
    let failed = run_all(o, &dev, size(full, quick, dev.is_gpu()), &examples, sel.seed, "run", false);
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// `phaser check`'s exploration options (`--exhaustive` and what goes with it).
pub(crate) struct Explore {
    pub on: bool,
    pub max_executions: Option<u64>,
    /// The synchronization skeleton only (`--barriers-only`).
    pub barriers_only: bool,
}

pub(crate) fn check(o: &Out, sel: &Selection, explore: Explore, schedule: Option<&Path>) -> u8 {
    let exhaustive = explore.on;
    let examples = match selected(o, sel) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let schedule = match schedule.map(read_schedule) {
        Some(Ok(s)) => Some(s),
        Some(Err(problem)) => {
            o.error(problem);
            return EXIT_USAGE;
        }
        None => None,
    };
    let mut sim = SimConfig {
        exhaustive,
        schedule,
        explore_barriers_only: explore.barriers_only,
        skeleton: explore.barriers_only,
        ..SimConfig::default()
    };
    if let Some(n) = explore.max_executions {
        sim.explore_max_executions = n;
    }
    let dev = Device::sim(sim);
    // An exhaustive run explores the smallest instance of each example.
    let size = if exhaustive { Size::Small } else { Size::Quick };
    let failed = run_all(o, &dev, size, &examples, sel.seed, "check", true);
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

pub(crate) fn trace(o: &Out, dir: &Path, sel: &Selection) -> u8 {
    let examples = match selected(o, sel) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = writable_dir(o, dir) {
        return code;
    }
    let dev = Device::sim(SimConfig { trace_dir: Some(dir.to_path_buf()), ..Default::default() });
    let failed = run_all(o, &dev, Size::Quick, &examples, sel.seed, "trace", false);
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    files.sort();
    o.say(format!(
        "{} files in {} (open the .trace.json files in ui.perfetto.dev; .probes.txt holds the report and probe tables)",
        files.len(),
        dir.display()
    ));
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

pub(crate) fn bench(o: &Out, backend: Backend, runs: u32, quick: bool, sel: &Selection) -> u8 {
    let examples = match selected(o, sel) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let dev = match device(o, backend, SimConfig::default()) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let size = size(false, quick, dev.is_gpu());
    let what = if dev.is_gpu() { "kernel time of the last launch" } else { "wall time of a simulated run" };
    o.say(format!("Device: {} | sizes: {} | {runs} runs per example, {what}\n", dev.describe(), size_name(size)));
    let runs = runs.max(1);
    let bar = o.progress(examples.len() as u64 * runs as u64, "bench");
    let (mut rows, mut docs, mut failed) = (Vec::new(), Vec::new(), 0);
    for e in &examples {
        bar.set_message(e.name.clone());
        let mut times: Vec<Duration> = Vec::new();
        let mut error = None;
        for _ in 0..runs {
            let t = Instant::now();
            match (e.run)(&dev, size, sel.seed.unwrap_or_else(fresh_seed)) {
                Ok(r) if r.passed => times.push(r.elapsed.unwrap_or_else(|| t.elapsed())),
                Ok(r) if r.skipped => break,
                Ok(r) => error = Some(format!("wrong output: {}", r.detail)),
                Err(err) => error = Some(err.to_string()),
            }
            bar.inc(1);
            if error.is_some() {
                break;
            }
        }
        times.sort();
        let median = times.get(times.len() / 2).copied();
        let min = times.first().copied();
        failed += usize::from(error.is_some());
        rows.push(vec![e.name.clone(), cell(error.is_none()), ms(min), ms(median), times.len().to_string()]);
        docs.push(json!({
            "example": e.name, "ok": error.is_none(), "error": error,
            "min_ms": min.map(|d| d.as_secs_f64() * 1e3), "median_ms": median.map(|d| d.as_secs_f64() * 1e3),
            "runs": times.len(),
        }));
        if let Some(err) = &error {
            o.say_above(&bar, format!("{} {}: {err}", verdict(false), e.name));
        }
    }
    bar.finish_and_clear();
    o.json(json!({"device": dev.describe(), "size": size_name(size), "measure": what, "examples": docs}));
    o.table(&["example", "result", "min", "median", "runs"], &rows);
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

pub(crate) fn diff(o: &Out, seed: Option<u64>) -> u8 {
    let gpu = match Device::cuda(0) {
        Ok(d) => d,
        Err(e) => {
            o.error(format!("the differential check needs a GPU: {e}"));
            return EXIT_NO_BACKEND;
        }
    };
    let seed = seed.unwrap_or_else(fresh_seed);
    let sim = Device::sim(SimConfig::default());
    o.say(format!("Differential run, seed {seed}: {} vs {} (quick sizes)\n", gpu.describe(), sim.describe()));
    let examples = registry::examples();
    let bar = o.progress(examples.len() as u64, "diff");
    let (mut rows, mut docs, mut differ, mut skipped) = (Vec::new(), Vec::new(), 0, 0);
    for e in &examples {
        bar.set_message(e.name.clone());
        let g = (e.run)(&gpu, Size::Quick, seed);
        if let Ok(r) = &g {
            if r.skipped {
                // The GPU cannot run it (sm_100a on an sm_90 GPU): nothing to compare.
                skipped += 1;
                rows.push(vec![e.name.clone(), "-".into(), "-".into(), format!("{} {}", out::skipped(), r.detail)]);
                docs.push(json!({"example": e.name, "skipped": r.detail}));
                bar.inc(1);
                continue;
            }
        }
        let s = (e.run)(&sim, Size::Quick, seed);
        let digest = |r: &Result<ExampleRun, RuntimeError>| r.as_ref().ok().map(|r| r.digest);
        let passed = |r: &Result<ExampleRun, RuntimeError>| r.as_ref().is_ok_and(|r| r.passed);
        // An example with `.approx` instructions passes when both runs pass their checks.
        let approximate = [&g, &s].iter().find_map(|r| r.as_ref().ok().and_then(|r| r.approximate.clone()));
        let ok = passed(&g) && passed(&s) && (digest(&g) == digest(&s) || approximate.is_some());
        let show = |d: Option<u64>| d.map(|d| format!("{d:016x}")).unwrap_or_else(|| "-".into());
        let why = |backend: &str, r: &Result<ExampleRun, RuntimeError>| match r {
            Ok(r) if r.passed => String::new(),
            Ok(r) => format!(" ({backend} failed its check: {})", r.detail),
            Err(err) => format!(" ({backend} error: {err})"),
        };
        let verdict_text = if ok && digest(&g) != digest(&s) {
            let why = approximate.as_deref().unwrap_or_default();
            format!("{} (not bit-exact across backends: {why})", console::style("both pass their checks").green())
        } else if ok {
            console::style("bit-identical").green().to_string()
        } else {
            differ += 1;
            format!("{}{}{}", console::style("DIFFERENT").red().bold(), why("GPU", &g), why("sim", &s))
        };
        rows.push(vec![e.name.clone(), show(digest(&g)), show(digest(&s)), verdict_text]);
        docs.push(json!({
            "example": e.name,
            "gpu": show(digest(&g)),
            "sim": show(digest(&s)),
            "identical": digest(&g) == digest(&s),
            "passed": ok,
            "approximate": approximate,
        }));
        bar.inc(1);
    }
    bar.finish_and_clear();
    o.json(json!({"seed": seed, "examples": docs, "different": differ, "skipped": skipped}));
    o.table(&["example", "GPU digest", "sim digest", "verdict"], &rows);
    o.say(format!("{} passed, {differ} failed, {skipped} skipped", examples.len() - differ - skipped));
    if differ == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The step schedule in `file` (`phaser check --schedule`), or what is wrong with it.
fn read_schedule(file: &Path) -> Result<phaser_runtime::sim::Schedule, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("cannot read the schedule {}: {e}", file.display()))?;
    text.parse().map_err(|e| format!("the schedule {}: {e}", file.display()))
}
