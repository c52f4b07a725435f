//! Release build time of a large `#[phaser::kernel]` against plain Rust of the same shape
//! (`bench/dsl.md`, "Release build time"). For each N, writes two standalone crates into a
//! temporary directory, one holding a kernel of N statements (depending on this workspace's
//! `phaser` by path) and one holding the same statements as a plain Rust function, builds each
//! with `cargo build --release`, and prints the user CPU seconds of each build and their ratio.
//! CPU time, not wall time: the machine is shared with other compiling processes.
//!
//! `cargo run -p phaser-examples --bin bench_build_time -- [N ...]`
//! (default N: 1000 2000 4000 8000). The crates share one target directory,
//! `target/build-time-bench` (`--target-dir DIR` to change it), so `phaser` and its
//! dependencies are built once, by a warm-up crate, before anything is timed.
//! `--keep DIR` writes the crates into DIR instead of a temporary directory.
//! `--phaser DIR` makes the kernel crates depend on the `phaser` in DIR instead of this
//! workspace's (a checkout of another commit, to compare expansions in one run).
//! `--write-sample FILE` writes the test's small sample (`examples/tests/build_time/sample.rs`)
//! and builds nothing.

use phaser_examples::build_time::{dsl_kernel, plain_function, sample, PLAIN_BARRIER, SAMPLE_STATEMENTS};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_build_time: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    sizes: Vec<u32>,
    target_dir: PathBuf,
    keep: Option<PathBuf>,
    write_sample: Option<PathBuf>,
    phaser: PathBuf,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("examples/ is inside the workspace").to_path_buf()
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        sizes: Vec::new(),
        target_dir: workspace_root().join("target/build-time-bench"),
        keep: None,
        write_sample: None,
        phaser: workspace_root(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--target-dir" => o.target_dir = args.next().ok_or("--target-dir needs a directory")?.into(),
            "--write-sample" => o.write_sample = Some(args.next().ok_or("--write-sample needs a file")?.into()),
            "--phaser" => o.phaser = args.next().ok_or("--phaser needs a directory")?.into(),
            "--keep" => o.keep = Some(args.next().ok_or("--keep needs a directory")?.into()),
            n => o.sizes.push(n.parse().map_err(|_| format!("`{n}` is not a statement count (or an option)"))?),
        }
    }
    if o.sizes.is_empty() {
        o.sizes = vec![1000, 2000, 4000, 8000];
    }
    Ok(o)
}

/// Write a library crate `name` with `src` as its `lib.rs`, depending on `phaser` in that
/// directory if one is given.
fn write_crate(dir: &Path, name: &str, phaser: Option<&Path>, src: &str) -> Result<PathBuf, String> {
    let root = dir.join(name);
    let io = |e: std::io::Error| format!("writing {}: {e}", root.display());
    std::fs::create_dir_all(root.join("src")).map_err(io)?;
    let dep = match phaser {
        Some(p) => format!("phaser = {{ path = {:?} }}\n", p.display().to_string()),
        None => String::new(),
    };
    // `[workspace]`: the crate is its own workspace, wherever the directory is.
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{dep}\n[workspace]\n\n[profile.release]\ndebug = false\n"
    );
    std::fs::write(root.join("Cargo.toml"), manifest).map_err(io)?;
    std::fs::write(root.join("src/lib.rs"), src).map_err(io)?;
    Ok(root)
}

/// `cargo build --release` in `root`; the user CPU seconds of the build (cargo and rustc).
/// The dependencies are resolved first, untimed (`cargo metadata` writes `Cargo.lock`).
fn timed_build(root: &Path, target_dir: &Path) -> Result<f64, String> {
    let manifest = root.join("Cargo.toml");
    let resolved = Command::new("cargo")
        .args(["metadata", "--quiet", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !resolved.success() {
        return Err(format!("cargo metadata of {} failed ({resolved})", root.display()));
    }
    let times = root.join("time.txt");
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%U", "-o"])
        .arg(&times)
        .args(["cargo", "build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| format!("running /usr/bin/time cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build --release of {} failed ({status})", root.display()));
    }
    let text = std::fs::read_to_string(&times).map_err(|e| format!("reading {}: {e}", times.display()))?;
    let last = text.lines().last().unwrap_or_default();
    last.trim().parse().map_err(|_| format!("unexpected /usr/bin/time output {text:?}"))
}

fn run() -> Result<(), String> {
    let o = options()?;
    if let Some(path) = &o.write_sample {
        return std::fs::write(path, sample(SAMPLE_STATEMENTS)).map_err(|e| format!("writing {}: {e}", path.display()));
    }
    let tmp = tempfile::tempdir().map_err(|e| format!("creating a temporary directory: {e}"))?;
    let dir = o.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    eprintln!("building phaser's dependencies (release, once) into {}", o.target_dir.display());
    let warm = write_crate(&dir, "bt_warmup", Some(&o.phaser), &dsl_kernel("warmup", 6))?;
    timed_build(&warm, &o.target_dir)?;
    // A no-op build: what cargo itself costs when nothing is compiled.
    let noop = timed_build(&warm, &o.target_dir)?;
    println!("| N | DSL kernel (s) | plain Rust (s) | ratio |");
    println!("|---|---|---|---|");
    for n in &o.sizes {
        let dsl = write_crate(&dir, &format!("bt_dsl_{n}"), Some(&o.phaser), &dsl_kernel(&format!("kernel_{n}"), *n))?;
        let plain_src = format!("{PLAIN_BARRIER}\n{}", plain_function(&format!("kernel_{n}"), *n));
        let plain = write_crate(&dir, &format!("bt_plain_{n}"), None, &plain_src)?;
        let d = timed_build(&dsl, &o.target_dir)?;
        let p = timed_build(&plain, &o.target_dir)?;
        println!("| {n} | {d:.1} | {p:.1} | {:.1}x |", d / p);
    }
    println!("(user CPU seconds of `cargo build --release` of the crate alone; a no-op cargo build costs {noop:.2} s)");
    Ok(())
}
