//! Finding and running NVIDIA's `ptxas` to assemble emitted PTX (validation without a GPU).
//!
//! The one finder: the tests, the `phaser` CLI and `.ci/test` (which exports the path it
//! found as `$PTXAS`, so the Rust side then takes step 1) all look in this order:
//! 1. `$PTXAS` (an error if it names no file: a wrong setting is not silently ignored);
//! 2. `ptxas` on `PATH`;
//! 3. the PyPI wheel `nvidia-cuda-nvcc`: `nvidia/cu13/bin/ptxas` under each entry of the
//!    `nvidia` package's `__path__`, asking `python3`, then `python`.
//!
//! `cuobjdump` (the SASS of a cubin) is the one next to that ptxas (the same wheel family,
//! `nvidia-cuda-cuobjdump`, installs it there). Every tool runs through [`run_tool`], which
//! checks its exit status: a tool that failed is never read as an empty answer.

mod batch;
mod serialization;
pub use batch::{assemble_each, Assembled};
pub use serialization::{wgmma_serialization, WgmmaSerialization};

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The `ptxas` binary, or a message saying how to install it.
pub fn find() -> Result<PathBuf, String> {
    find_from(std::env::var_os("PTXAS"), std::env::var_os("PATH"), &["python3", "python"])
}

/// [`find`] over given settings (the search order, testable without touching the environment).
fn find_from(ptxas_var: Option<OsString>, path_var: Option<OsString>, pythons: &[&str]) -> Result<PathBuf, String> {
    if let Some(p) = ptxas_var {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("$PTXAS points to {}, which does not exist", p.display()))
        };
    }
    if let Some(path) = path_var {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("ptxas");
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    for py in pythons {
        let out = Command::new(py)
            .args([
                "-c",
                "import nvidia, os; print('\\n'.join(os.path.join(p, 'cu13', 'bin', 'ptxas') for p in nvidia.__path__))",
            ])
            .output();
        if let Ok(out) = out {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let c = PathBuf::from(line.trim());
                if c.is_file() {
                    return Ok(c);
                }
            }
        }
    }
    Err("ptxas not found: install it with `python3 -m pip install nvidia-cuda-nvcc` or set $PTXAS".into())
}

/// [`find`] for tests, which must fail (not skip) without ptxas.
#[cfg(any(test, feature = "test-support"))]
pub fn require() -> PathBuf {
    find().unwrap_or_else(|e| panic!("{e} (the test suite requires ptxas; `bash .ci/test` installs it)"))
}

/// `cuobjdump` next to `ptxas`, or a message saying how to install it.
pub fn find_cuobjdump(ptxas: &Path) -> Result<PathBuf, String> {
    let c = ptxas.with_file_name("cuobjdump");
    if c.is_file() {
        Ok(c)
    } else {
        Err(format!(
            "cuobjdump not found next to ptxas ({}): install it with `python3 -m pip install nvidia-cuda-cuobjdump`",
            c.display()
        ))
    }
}

/// [`find_cuobjdump`] next to [`require`]'s ptxas, for tests, which must fail (not skip)
/// without it.
#[cfg(any(test, feature = "test-support"))]
pub fn require_cuobjdump() -> PathBuf {
    find_cuobjdump(&require())
        .unwrap_or_else(|e| panic!("{e} (the test suite requires cuobjdump; `bash .ci/test` installs it)"))
}

/// The SASS listing of `cubin` (`cuobjdump -sass`), checked: an empty listing is an error too.
pub fn sass(cuobjdump: &Path, cubin: &Path) -> Result<String, String> {
    let out = run_tool(Command::new(cuobjdump).arg("-sass").arg(cubin)).map_err(|e| e.to_string())?;
    if out.stdout.trim().is_empty() {
        return Err(format!("cuobjdump -sass {} printed nothing:\n{}", cubin.display(), out.stderr));
    }
    Ok(out.stdout)
}

/// What a tool printed, once it exited successfully.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub stdout: String,
    pub stderr: String,
}

/// A tool that could not run, or ran and failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The program could not be started (missing, not executable).
    Spawn { command: String, error: std::io::Error },
    /// It ran and exited unsuccessfully; `output` is its stderr, then its stdout.
    Failed { command: String, status: ExitStatus, output: String },
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Spawn { command, error } => write!(f, "running `{command}`: {error}"),
            ToolError::Failed { command, status, output } => write!(f, "`{command}` failed ({status}):\n{output}"),
        }
    }
}

impl std::error::Error for ToolError {}

/// Runs `cmd` to completion and checks its exit status (the one way this crate, its tests and
/// the examples' tests run an external tool).
pub fn run_tool(cmd: &mut Command) -> Result<ToolOutput, ToolError> {
    let command = describe(cmd);
    let out = cmd.output().map_err(|error| ToolError::Spawn { command: command.clone(), error })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(ToolError::Failed { command, status: out.status, output: stderr + &stdout });
    }
    Ok(ToolOutput { stdout, stderr })
}

/// `program arg ...`, for messages.
fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Assemble PTX text for `arch` (e.g. `sm_90a`); `Ok` carries ptxas's messages (warnings,
/// `-v` resource lines), `Err` its diagnostics.
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<String, String> {
    assemble_with(ptxas, ptx, arch, &[])
}

/// [`assemble`] with extra ptxas arguments (e.g. `-v`). The PTX and cubin live in a
/// temporary directory that is removed when this returns, whatever happened.
pub fn assemble_with(ptxas: &Path, ptx: &str, arch: &str, extra: &[&str]) -> Result<String, String> {
    assemble_in(&std::env::temp_dir(), ptxas, ptx, arch, extra)
}

/// [`assemble_with`] that keeps the cubin: it is written to `cubin` (a temporary file in
/// the same directory renamed into place, so a reader never sees a partial cubin).
pub fn assemble_to(ptxas: &Path, ptx: &str, arch: &str, extra: &[&str], cubin: &Path) -> Result<String, String> {
    assemble_in_keeping(&std::env::temp_dir(), ptxas, ptx, arch, extra, Some(cubin))
}

/// [`assemble_with`] with its temporary directory made under `tmp_root`.
fn assemble_in(tmp_root: &Path, ptxas: &Path, ptx: &str, arch: &str, extra: &[&str]) -> Result<String, String> {
    assemble_in_keeping(tmp_root, ptxas, ptx, arch, extra, None)
}

fn assemble_in_keeping(
    tmp_root: &Path,
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    extra: &[&str],
    keep: Option<&Path>,
) -> Result<String, String> {
    let dir = tempfile::Builder::new()
        .prefix("phaser-ptxas-")
        .tempdir_in(tmp_root)
        .map_err(|e| format!("creating a temporary directory: {e}"))?;
    let file = dir.path().join("kernel.ptx");
    std::fs::write(&file, ptx).map_err(|e| format!("writing {}: {e}", file.display()))?;
    let out = run_tool(
        Command::new(ptxas)
            .arg(format!("-arch={arch}"))
            .args(extra)
            .arg(&file)
            .arg("-o")
            .arg(dir.path().join("kernel.cubin")),
    )
    .map_err(|e| match e {
        // ptxas's diagnostics are the message (they name the PTX line).
        ToolError::Failed { output, .. } => output,
        spawn @ ToolError::Spawn { .. } => spawn.to_string(),
    })?;
    let msg = out.stderr + &out.stdout;
    if let Some(dest) = keep {
        let parent = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(parent)
            .map_err(|e| format!("creating a temporary file in {}: {e}", parent.display()))?;
        std::fs::copy(dir.path().join("kernel.cubin"), tmp.path())
            .map_err(|e| format!("copying the cubin to {}: {e}", tmp.path().display()))?;
        tmp.persist(dest).map_err(|e| format!("writing {}: {}", dest.display(), e.error))?;
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The temporary directory is gone afterwards, on success and on failure alike.
    #[test]
    fn temporary_files_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let ptxas = require();
        let err = assemble_in(root.path(), &ptxas, "not ptx", "sm_90a", &[]).unwrap_err();
        assert!(err.contains("error"), "{err}");
        let ok = ".version 8.0\n.target sm_90a\n.address_size 64\n";
        assemble_in(root.path(), &ptxas, ok, "sm_90a", &["-v"]).unwrap();
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn assemble_to_keeps_the_cubin_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let ptxas = require();
        let ok = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
        let dest = root.path().join("k.cubin");
        assemble_to(&ptxas, ok, "sm_90a", &["-lineinfo"], &dest).unwrap();
        assert!(std::fs::read(&dest).unwrap().starts_with(b"\x7fELF"), "not a cubin");
        assert!(assemble_to(&ptxas, "not ptx", "sm_90a", &[], &root.path().join("bad.cubin")).is_err());
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("k.cubin")], "only the kept cubin is left");
    }

    /// A failing tool is an error carrying its exit status and stderr; a missing one is too.
    #[test]
    fn run_tool_checks_the_exit_status() {
        let out = run_tool(Command::new("sh").args(["-c", "echo fine; echo note >&2"])).unwrap();
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("fine\n", "note\n"));
        let err = run_tool(Command::new("sh").args(["-c", "echo half; echo broken >&2; exit 3"])).unwrap_err();
        match &err {
            ToolError::Failed { status, output, .. } => {
                assert_eq!(status.code(), Some(3));
                assert_eq!(output, "broken\nhalf\n");
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().starts_with("`sh -c echo half; echo broken >&2; exit 3` failed ("), "{err}");
        let missing = run_tool(&mut Command::new("/nonexistent/tool")).unwrap_err();
        assert!(matches!(missing, ToolError::Spawn { .. }), "{missing:?}");
    }

    /// cuobjdump's failure on a file that is not a cubin is reported, not read as no SASS.
    #[test]
    fn sass_reports_a_bad_cubin() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.cubin");
        std::fs::write(&bad, b"\x7fELF but not a cubin").unwrap();
        let err = sass(&require_cuobjdump(), &bad).unwrap_err();
        assert!(err.contains("failed ("), "{err}");
        let good = dir.path().join("k.cubin");
        let ok = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
        assemble_to(&require(), ok, "sm_90a", &[], &good).unwrap();
        let listing = sass(&require_cuobjdump(), &good).unwrap();
        assert!(listing.lines().any(|l| l.contains("EXIT")), "{listing}");
    }

    #[test]
    fn search_order_is_ptxas_then_path_then_python() {
        let dir = tempfile::tempdir().unwrap();
        let on_path = dir.path().join("ptxas");
        std::fs::write(&on_path, "").unwrap();
        let explicit = dir.path().join("explicit-ptxas");
        std::fs::write(&explicit, "").unwrap();
        let path = Some(OsString::from(dir.path()));
        assert_eq!(find_from(Some(explicit.clone().into()), path.clone(), &[]), Ok(explicit));
        assert_eq!(find_from(None, path.clone(), &[]), Ok(on_path));
        let missing = dir.path().join("missing");
        assert_eq!(
            find_from(Some(missing.clone().into()), path, &[]),
            Err(format!("$PTXAS points to {}, which does not exist", missing.display())),
            "a wrong $PTXAS is reported, not skipped over"
        );
        let err = find_from(None, None, &["/nonexistent/python"]).unwrap_err();
        assert!(err.starts_with("ptxas not found: install it with"), "{err}");
    }
}
