//! Turning PTX into a loaded module.
//!
//! Two ways, chosen per device by [`JitOptions::line_info`]:
//! - by default the PTX goes to `cuModuleLoadData`: the driver JIT-compiles it and keeps the
//!   result in its own on-disk cache (`CUDA_CACHE_PATH`, `CUDA_CACHE_MAXSIZE`; off with
//!   `CUDA_CACHE_DISABLE=1`), so a second process loads the same PTX in well under a
//!   millisecond. The driver keeps the PTX's `.loc` lines on this path too: compute-sanitizer,
//!   Nsight Compute and cuda-gdb (core dumps) show the kernel's Rust lines (`bench/lineinfo.sh`,
//!   checked on the H200);
//! - with `PHASER_JIT_LINE_INFO=1`, the driver's linker (`cuLinkCreate` with
//!   `CU_JIT_GENERATE_LINE_INFO`) makes a cubin with a SASS line table, which is then loaded as
//!   a binary and kept in a cache of our own ([`CubinCache`]), keyed by PTX content, device,
//!   driver and options. It is not the default: on the H200 (driver 580) the linker placed
//!   the 1024-byte-aligned dynamic shared window only 16-byte aligned, and every kernel with
//!   TMA copies into it faulted (`CUDA_ERROR_MISALIGNED_ADDRESS`); kernels that declare the
//!   window therefore always take the plain path ([`has_dynamic_window`]). `bench_jit`
//!   measures both paths.
//!
//! Before either, a directory of prebuilt cubins ([`JitOptions::prebuilt_dir`],
//! `PHASER_CUBIN_DIR`) is asked: a cubin that `ptxas` assembled ahead of time from this exact
//! PTX text (`phaser emit --cubin-dir DIR`, named by [`prebuilt_cubin_name`]) loads without
//! any JIT. The driver's PTX JIT alone costs 9-16 ms cold on the H200 even for the smallest
//! kernels (`bench/jit.md`); loading a cubin does not compile at all.

use super::driver_err;
use super::ffi;
use crate::error::{Result, RuntimeError};
use cudarc::driver::{sys, CudaContext, CudaModule};
use sha2::{Digest, Sha256};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a device turns PTX into modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// Ask the JIT for line info (`CU_JIT_GENERATE_LINE_INFO`): the cubin maps SASS to the
    /// PTX's `.loc` lines, i.e. to the kernel's Rust lines.
    pub line_info: bool,
    /// Where linked cubins are kept across processes (`None`: not kept).
    pub cubin_cache: Option<PathBuf>,
    /// Where prebuilt cubins are looked up first, by [`prebuilt_cubin_name`] (`None`: nowhere).
    pub prebuilt_dir: Option<PathBuf>,
}

impl JitOptions {
    /// The plain driver JIT: no line info, no cubin cache, no prebuilt cubins (what benchmarks
    /// and tests compare against). A device's own options come from its
    /// [`super::LaunchPolicy`] (`PHASER_JIT_LINE_INFO`, `PHASER_CUBIN_CACHE`, `PHASER_CUBIN_DIR`).
    pub fn plain() -> JitOptions {
        JitOptions { line_info: false, cubin_cache: None, prebuilt_dir: None }
    }
}

/// Whether the PTX declares the dynamic shared window (`.extern .shared .align 1024`). The
/// driver's linker (`cuLinkCreate`, driver 580) places that window only 16-byte aligned
/// (0x410 after 8 bytes of static shared memory, where `cuModuleLoadData` puts it at 0x800:
/// `gpu_jit`'s `the_dynamic_window_is_1024_aligned_on_each_jit_path`), so such kernels never
/// take the linker path.
pub fn has_dynamic_window(ptx: &str) -> bool {
    let decl = format!(" {}[]", phaser_codegen::emit::names::DYN_SMEM);
    ptx.lines().any(|l| l.starts_with(".extern .shared") && l.trim_end().trim_end_matches(';').ends_with(&decl))
}

/// Where a module came from, and what it cost (what `bench_jit` reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPath {
    /// `cuModuleLoadData` of the PTX (driver JIT, driver cache).
    DriverPtx,
    /// Linked with line info by the driver JIT, then loaded.
    Linked,
    /// A cubin from our cache, loaded.
    CubinCacheHit,
    /// A cubin from the prebuilt directory (`ptxas` ahead of time), loaded: no JIT at all.
    Prebuilt,
}

#[derive(Clone, Copy, Debug)]
pub struct LoadStats {
    pub path: LoadPath,
    /// JIT compilation (link) or cache read.
    pub compile: Duration,
    /// `cuModuleLoadData` (for the PTX path this includes the JIT).
    pub load: Duration,
}

/// Load `ptx` into `ctx` as `opts` say.
pub fn load(
    ctx: &Arc<CudaContext>,
    ptx: &str,
    kernel: &str,
    opts: &JitOptions,
) -> Result<(Arc<CudaModule>, LoadStats)> {
    ctx.bind_to_thread().map_err(driver_err("binding the CUDA context"))?;
    if let Some(dir) = &opts.prebuilt_dir {
        if let Some(loaded) = load_prebuilt(ctx, dir, ptx)? {
            return Ok(loaded);
        }
    }
    let misplaced_window = opts.line_info && has_dynamic_window(ptx);
    if misplaced_window {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            eprintln!(
                "phaser: PHASER_JIT_LINE_INFO=1: kernels with a dynamic shared window load without the linker \
                 (it places the window 16- instead of 1024-byte aligned, which TMA/wgmma kernels fault on)"
            )
        });
    }
    if !opts.line_info || misplaced_window {
        let t = Instant::now();
        let m = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
            .map_err(driver_err(format!("JIT-loading the PTX of kernel `{kernel}`")))?;
        return Ok((m, LoadStats { path: LoadPath::DriverPtx, compile: Duration::ZERO, load: t.elapsed() }));
    }
    let cache = opts.cubin_cache.as_ref().map(|dir| CubinCache { dir: dir.clone() });
    let key = cache.as_ref().map(|_| cache_key(ctx, ptx, opts)).transpose()?;
    if let (Some(c), Some(key)) = (&cache, &key) {
        let t = Instant::now();
        if let Some(cubin) = c.get(key) {
            let compile = t.elapsed();
            let t = Instant::now();
            // A file that does not load (truncated by a crash before the rename, another
            // driver's format) is not trusted: fall through and link again.
            if let Ok(m) = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin)) {
                return Ok((m, LoadStats { path: LoadPath::CubinCacheHit, compile, load: t.elapsed() }));
            }
        }
    }
    let t = Instant::now();
    let cubin = match link_with_line_info(ptx, kernel) {
        Ok(c) => c,
        Err(link_err) => {
            // Line info is a debugging aid: a kernel the plain JIT accepts still runs, with one
            // warning per process (`gpu_jit` tests that the linked path works).
            let t = Instant::now();
            return match ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)) {
                Ok(m) => {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| eprintln!("phaser: JIT with line info failed, loading without it: {link_err}"));
                    Ok((m, LoadStats { path: LoadPath::DriverPtx, compile: Duration::ZERO, load: t.elapsed() }))
                }
                Err(_) => Err(link_err),
            };
        }
    };
    let compile = t.elapsed();
    if let (Some(c), Some(key)) = (&cache, &key) {
        // A cache that cannot be written only costs the next process a link.
        let _ = c.put(key, &cubin);
    }
    let t = Instant::now();
    let m = ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
        .map_err(driver_err(format!("loading the linked cubin of kernel `{kernel}`")))?;
    Ok((m, LoadStats { path: LoadPath::Linked, compile, load: t.elapsed() }))
}

/// The prebuilt cubin of `ptx` in `dir`, loaded, when there is one for this device: the
/// PTX's target must be the device's compute capability (a cubin runs only there). A file
/// that does not load (another driver's format, a newer ptxas than the driver, a truncated
/// copy) is ignored with one warning per process: the JIT path then runs.
fn load_prebuilt(ctx: &Arc<CudaContext>, dir: &Path, ptx: &str) -> Result<Option<(Arc<CudaModule>, LoadStats)>> {
    let Some(target) = ptx_target(ptx) else { return Ok(None) };
    let cc = ctx.compute_capability().map_err(driver_err("reading the compute capability"))?;
    if target_capability(target) != Some(cc) {
        return Ok(None);
    }
    let Some(name) = prebuilt_cubin_name(ptx) else { return Ok(None) };
    let path = dir.join(name);
    let t = Instant::now();
    let Ok(cubin) = std::fs::read(&path) else { return Ok(None) };
    let compile = t.elapsed();
    let t = Instant::now();
    match ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin)) {
        Ok(m) => Ok(Some((m, LoadStats { path: LoadPath::Prebuilt, compile, load: t.elapsed() }))),
        Err(e) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "phaser: prebuilt cubin {} does not load ({e}); JIT-compiling the PTX instead",
                    path.display()
                )
            });
            Ok(None)
        }
    }
}

/// The file name of `ptx`'s prebuilt cubin: `<SHA-256 of the PTX text>.<target>.cubin`, the
/// target being the one the PTX declares (`sm_90a`); `None` when it declares none. The one
/// naming both the writer (`phaser emit --cubin-dir`) and the reader ([`load`]) use.
pub fn prebuilt_cubin_name(ptx: &str) -> Option<String> {
    let target = ptx_target(ptx)?;
    Some(format!("{}.{target}.cubin", sha256_hex(&[ptx.as_bytes()])))
}

/// The target a PTX module declares (`.target sm_90a` or `.target sm_90a, debug`).
pub fn ptx_target(ptx: &str) -> Option<&str> {
    let target = ptx.lines().find_map(|l| l.trim().strip_prefix(".target "))?.split([',', ' ']).next()?.trim();
    (!target.is_empty()).then_some(target)
}

/// The compute capability a target's SASS runs on: `sm_90a` → (9, 0), `sm_100a` → (10, 0),
/// `sm_86` → (8, 6); `None` for anything else.
fn target_capability(target: &str) -> Option<(i32, i32)> {
    let digits = target.strip_prefix("sm_")?.trim_end_matches(['a', 'f']);
    let (major, minor) = digits.split_at(digits.len().checked_sub(1)?);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// JIT-compile `ptx` through the driver's linker with line info; the cubin's bytes.
pub fn link_with_line_info(ptx: &str, kernel: &str) -> Result<Vec<u8>> {
    let text = CString::new(ptx).map_err(|_| RuntimeError::Jit {
        kernel: kernel.into(),
        log: "the PTX text contains a NUL byte".into(),
        source: None,
    })?;
    let name = CString::new(format!("{kernel}.ptx")).unwrap_or_default();
    // The linker compiles for the context's device by default, i.e. plain sm_90 on an H200:
    // architecture-specific PTX (`.target sm_90a`: setmaxnreg, wgmma, ...) must name its
    // target, or the cubin lacks the `a` features (found on the H200: TMA kernels faulted with
    // a misaligned address while the plain JIT ran them).
    ffi::link_ptx(&text, &name, true, arch_specific_target(ptx)).map_err(|e| match e {
        ffi::LinkError::Create(source) => {
            RuntimeError::Driver { context: "creating a JIT link (cuLinkCreate)".into(), source: source.into() }
        }
        ffi::LinkError::Link { log, source } => {
            RuntimeError::Jit { kernel: kernel.into(), log, source: source.map(Into::into) }
        }
    })
}

/// The linker target of a module whose `.target` is architecture-specific (`sm_90a`,
/// `sm_100a`); `None` for the others, which the context's default target compiles.
fn arch_specific_target(ptx: &str) -> Option<sys::CUjit_target> {
    match ptx_target(ptx)? {
        "sm_90a" => Some(sys::CUjit_target::CU_TARGET_COMPUTE_90A),
        "sm_100a" => Some(sys::CUjit_target::CU_TARGET_COMPUTE_100A),
        _ => None,
    }
}

/// What makes two linked cubins interchangeable: the PTX, the device's compute capability
/// and name, the driver version and the options (a hex SHA-256).
fn cache_key(ctx: &Arc<CudaContext>, ptx: &str, opts: &JitOptions) -> Result<String> {
    let (major, minor) = ctx.compute_capability().map_err(driver_err("reading the compute capability"))?;
    let name = ctx.name().unwrap_or_default();
    let driver = ffi::driver_version().map_err(driver_err("reading the driver version"))?;
    Ok(key_of(ptx, &format!("sm_{major}{minor} {name}"), driver, opts.line_info))
}

/// The cache key of a PTX text for a device and driver (pure, so it is tested here).
pub fn key_of(ptx: &str, device: &str, driver: i32, line_info: bool) -> String {
    let head = format!("phaser cubin v1\ndevice {device}\ndriver {driver}\nline_info {line_info}\n");
    sha256_hex(&[head.as_bytes(), ptx.as_bytes()])
}

/// The SHA-256 of the concatenated `parts`, in lower-case hex.
fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Linked cubins on disk, one file per key. Safe under concurrent processes: a writer writes
/// a temporary file in the same directory and renames it into place (atomic on POSIX), so a
/// reader sees a whole file or none; two writers of one key write the same bytes.
pub struct CubinCache {
    pub dir: PathBuf,
}

impl CubinCache {
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.cubin"))
    }

    /// The cubin stored under `key`, if any (an ELF file: anything else is ignored).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        bytes.starts_with(b"\x7fELF").then_some(bytes)
    }

    pub fn put(&self, key: &str, cubin: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(cubin)?;
        tmp.as_file().sync_all()?;
        tmp.persist(self.path(key)).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod window_tests {
    use super::has_dynamic_window;

    #[test]
    fn the_dynamic_window_is_found_by_its_declaration_only() {
        let with = ".version 8.0\n.extern .shared .align 1024 .b8 phaser_dynamic_smem[];\n.visible .entry k()\n{\n}\n";
        assert!(has_dynamic_window(with));
        let mention = ".version 8.0\n// phaser_dynamic_smem[] is not declared here\n.visible .entry k()\n{\n}\n";
        assert!(!has_dynamic_window(mention));
        let other = ".extern .shared .align 16 .b8 user_smem[];\n";
        assert!(!has_dynamic_window(other));
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn arch_specific_targets_are_named_to_the_linker() {
        let ptx = |t: &str| format!("//\n.version 8.0\n.target {t}\n.address_size 64\n");
        assert_eq!(arch_specific_target(&ptx("sm_90a")), Some(sys::CUjit_target::CU_TARGET_COMPUTE_90A));
        assert_eq!(arch_specific_target(&ptx("sm_100a")), Some(sys::CUjit_target::CU_TARGET_COMPUTE_100A));
        assert_eq!(arch_specific_target(&ptx("sm_90")), None);
        assert_eq!(arch_specific_target(&ptx("sm_80")), None);
    }
    use super::*;

    #[test]
    fn key_covers_ptx_device_driver_and_options() {
        let k = key_of(".entry a {}", "sm_90 H200", 13000, true);
        assert_eq!(k.len(), 64);
        assert_eq!(k, key_of(".entry a {}", "sm_90 H200", 13000, true));
        for other in [
            key_of(".entry b {}", "sm_90 H200", 13000, true),
            key_of(".entry a {}", "sm_100 B200", 13000, true),
            key_of(".entry a {}", "sm_90 H200", 13010, true),
            key_of(".entry a {}", "sm_90 H200", 13000, false),
        ] {
            assert_ne!(k, other);
        }
    }

    #[test]
    fn prebuilt_names_follow_the_text_and_its_declared_target() {
        let ptx = |t: &str, body: &str| format!("//\n.version 8.0\n.target {t}\n.address_size 64\n{body}");
        let a = ptx("sm_90a", ".entry a {}");
        let name = prebuilt_cubin_name(&a).unwrap();
        // `<SHA-256 of the text>.<target>.cubin`, the digest computed independently here.
        let digest: String = Sha256::digest(a.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(name, format!("{digest}.sm_90a.cubin"));
        assert_ne!(name, prebuilt_cubin_name(&ptx("sm_90a", ".entry b {}")).unwrap(), "another text");
        assert!(prebuilt_cubin_name(&ptx("sm_100a, debug", "")).unwrap().ends_with(".sm_100a.cubin"));
        assert_eq!(prebuilt_cubin_name(".version 8.0\n.entry a {}"), None, "no target declared");
        assert_eq!(target_capability("sm_90a"), Some((9, 0)));
        assert_eq!(target_capability("sm_100a"), Some((10, 0)));
        assert_eq!(target_capability("sm_86"), Some((8, 6)));
        assert_eq!(target_capability("compute_90"), None);
        assert_eq!(target_capability("sm_"), None);
    }

    #[test]
    fn cache_round_trip_and_concurrent_writers() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CubinCache { dir: dir.path().join("nested") };
        assert_eq!(cache.get("k"), None, "an empty cache has nothing");
        let cubin: Vec<u8> = b"\x7fELF".iter().copied().chain((0..100_000u32).map(|i| i as u8)).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| cache.put("k", &cubin).unwrap());
                s.spawn(|| {
                    // A reader sees the whole file or nothing, never a prefix.
                    if let Some(b) = cache.get("k") {
                        assert_eq!(b, cubin);
                    }
                });
            }
        });
        assert_eq!(cache.get("k").as_deref(), Some(cubin.as_slice()));
        // Only the one file is left: every temporary was renamed into place.
        assert_eq!(std::fs::read_dir(&cache.dir).unwrap().count(), 1);
        std::fs::write(cache.path("bad"), b"not a cubin").unwrap();
        assert_eq!(cache.get("bad"), None, "a file that is not ELF is ignored");
    }
}
