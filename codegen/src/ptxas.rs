//! Finding and running NVIDIA's `ptxas` to assemble emitted PTX (validation without a GPU).
//!
//! `ptxas` ships in the PyPI package `nvidia-cuda-nvcc` (`site-packages/nvidia/cu13/bin/ptxas`).
//! Search order: `$PTXAS`, `ptxas` on `PATH`, then Python's site-packages.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `ptxas` binary, or a message saying how to install it.
pub fn find() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("PTXAS") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("$PTXAS points to {}, which does not exist", p.display()))
        };
    }
    if let Ok(path) = std::env::var("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("ptxas");
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    for py in ["python3", "python"] {
        let out = Command::new(py)
            .args(["-c", "import nvidia, os; print('\\n'.join(os.path.join(p, 'cu13', 'bin', 'ptxas') for p in nvidia.__path__))"])
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

/// Assemble PTX text for `arch` (e.g. `sm_90a`); `Err` carries ptxas's diagnostics.
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("phaser-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = dir.join(format!("k{n}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("k{n}.cubin")))
        .output()
        .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(dir.join(format!("k{n}.cubin")));
    let msg = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        Ok(msg)
    } else {
        Err(msg)
    }
}

static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
