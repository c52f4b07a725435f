//! The CUDA backend's launch policy, and the one place in the libraries that reads the
//! environment. Everything below it (the PTX printer, the JIT) takes its settings as values,
//! so a library user's PTX never changes with a variable they did not know about.
//!
//! | variable | values | decides |
//! | --- | --- | --- |
//! | `PHASER_WATCHDOG` | `off` or `0`; a non-zero duration `250ms`, `4s`, `1500us`, `100ns` | the wait watchdog of launches and kernels that set none (default 4 s) |
//! | `PHASER_WAIT_LOOP` | `first-try`, `hinted-first`, `in-loop`; `none` | how a blocking wait with a watchdog is laid out (`codegen::emit::wait_loop`; default `first-try`); `none`: no watchdog, CUTLASS's loop exactly |
//! | `PHASER_JIT_LINE_INFO` | `1`, `on`, `true`; `0`, `off`, `false` | link with `CU_JIT_GENERATE_LINE_INFO` instead of `cuModuleLoadData` (default off; see `jit`) |
//! | `PHASER_CUBIN_CACHE` | a directory; `off` or `0` | where linked cubins are kept across processes (default `$XDG_CACHE_HOME/phaser/cubin`, else `$HOME/.cache/phaser/cubin`) |
//! | `PHASER_CUBIN_DIR` | a directory | prebuilt cubins loaded before any JIT (`phaser emit --cubin-dir`; default none) |
//! | `XDG_CACHE_HOME`, `HOME` | directories | the default of `PHASER_CUBIN_CACHE` |
//!
//! An empty variable counts as unset. A value outside its list is refused with the variable
//! named ([`RuntimeError::Config`]), never read as some default.

use super::jit::JitOptions;
use crate::error::{Result, RuntimeError};
use crate::watchdog::Watchdog;
use phaser_codegen::emit::WaitLoop;
use phaser_codegen::EmitOptions;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a CUDA device decides for launches that do not say: the watchdog, the wait layout
/// and how PTX becomes a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPolicy {
    /// The watchdog of launches and kernels that set none.
    pub watchdog: Watchdog,
    /// How blocking waits with a watchdog are printed.
    pub wait_loop: WaitLoop,
    pub jit: JitOptions,
}

impl LaunchPolicy {
    /// The policy the process environment sets (see the module's table).
    pub fn from_env() -> Result<LaunchPolicy> {
        LaunchPolicy::from_vars(|name| std::env::var_os(name))
    }

    /// The policy that `var` (a variable's value by name; `None`: unset) sets: the same rules
    /// as [`LaunchPolicy::from_env`], for callers and tests that hold their own settings.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<LaunchPolicy> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let text = |name: &str| -> Result<Option<String>> {
            var(name)
                .map(|v| v.into_string().map_err(|v| config(name, &v.to_string_lossy(), "the value is not UTF-8")))
                .transpose()
        };
        let watchdog = match text("PHASER_WATCHDOG")? {
            Some(v) => Some(Watchdog::parse(&v).map_err(|problem| config("PHASER_WATCHDOG", &v, &problem))?),
            None => None,
        };
        let (wait_loop, watchdog) = match text("PHASER_WAIT_LOOP")?.as_deref() {
            None => (WaitLoop::default(), watchdog.unwrap_or(Watchdog::DEFAULT)),
            Some("none") => match watchdog {
                None | Some(Watchdog::Off) => (WaitLoop::default(), Watchdog::Off),
                Some(w) => {
                    return Err(config(
                        "PHASER_WAIT_LOOP",
                        "none",
                        &format!("it means no watchdog, but PHASER_WATCHDOG asks for one after {w}; unset one of them"),
                    ))
                }
            },
            Some(v) => match WaitLoop::from_name(v) {
                Some(layout) => (layout, watchdog.unwrap_or(Watchdog::DEFAULT)),
                None => {
                    let names: Vec<&str> = WaitLoop::ALL.iter().map(|w| w.name()).collect();
                    return Err(config("PHASER_WAIT_LOOP", v, &format!("expected one of {}, none", names.join(", "))));
                }
            },
        };
        let line_info = match text("PHASER_JIT_LINE_INFO")?.as_deref() {
            None | Some("0" | "off" | "false") => false,
            Some("1" | "on" | "true") => true,
            Some(v) => return Err(config("PHASER_JIT_LINE_INFO", v, "expected 1, on or true; 0, off or false")),
        };
        let cubin_cache = match var("PHASER_CUBIN_CACHE") {
            Some(v) if v == "off" || v == "0" => None,
            Some(dir) => Some(PathBuf::from(dir)),
            None => user_cache_dir(var).map(|base| base.join("cubin")),
        };
        let prebuilt_dir = var("PHASER_CUBIN_DIR").map(PathBuf::from);
        Ok(LaunchPolicy { watchdog, wait_loop, jit: JitOptions { line_info, cubin_cache, prebuilt_dir } })
    }

    /// The printer's options for a launch whose watchdog resolved to `watchdog`.
    pub fn emit_options(&self, watchdog: Watchdog) -> EmitOptions {
        emit_options(watchdog, self.wait_loop)
    }
}

/// Phaser's directory in the user's cache, with the variables `var` gives (unset or empty:
/// unset): `$XDG_CACHE_HOME/phaser`, else `$HOME/.cache/phaser`; `None` without either.
pub fn user_cache_dir(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty());
    let base = var("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")));
    base.map(|b| b.join("phaser"))
}

/// The printer's options for a wait watchdog and a wait layout (the rest: the defaults).
pub(crate) fn emit_options(watchdog: Watchdog, wait_loop: WaitLoop) -> EmitOptions {
    EmitOptions { wait_timeout_ns: watchdog.timeout_ns(), wait_loop, ..EmitOptions::default() }
}

fn config(name: &str, value: &str, problem: &str) -> RuntimeError {
    RuntimeError::Config(format!("{name}={value}: {problem}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(vars: &[(&str, &str)]) -> Result<LaunchPolicy> {
        LaunchPolicy::from_vars(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v)))
    }
    fn refused(vars: &[(&str, &str)]) -> String {
        match policy(vars) {
            Err(RuntimeError::Config(m)) => m,
            other => panic!("{vars:?} should be refused, got {other:?}"),
        }
    }

    #[test]
    fn no_variables_give_the_printers_defaults() {
        let p = policy(&[]).unwrap();
        assert_eq!(
            p,
            LaunchPolicy { watchdog: Watchdog::DEFAULT, wait_loop: WaitLoop::default(), jit: JitOptions::plain() }
        );
        assert_eq!(p.emit_options(p.watchdog), EmitOptions::default(), "the default policy prints the default PTX");
        assert_eq!(policy(&[("PHASER_WATCHDOG", ""), ("PHASER_WAIT_LOOP", "")]).unwrap(), p, "empty is unset");
    }

    #[test]
    fn watchdog_values() {
        assert_eq!(policy(&[("PHASER_WATCHDOG", "off")]).unwrap().watchdog, Watchdog::Off);
        assert_eq!(policy(&[("PHASER_WATCHDOG", "0")]).unwrap().watchdog, Watchdog::Off);
        assert_eq!(policy(&[("PHASER_WATCHDOG", "250ms")]).unwrap().watchdog, Watchdog::AfterNs(250_000_000));
        assert_eq!(
            refused(&[("PHASER_WATCHDOG", "0ms")]),
            "PHASER_WATCHDOG=0ms: watchdog `0ms` is zero; write `off` (or `0`) to wait forever"
        );
        assert!(refused(&[("PHASER_WATCHDOG", "4 parsecs")]).starts_with("PHASER_WATCHDOG=4 parsecs: "));
    }

    #[test]
    fn wait_loop_values() {
        for w in WaitLoop::ALL {
            let p = policy(&[("PHASER_WAIT_LOOP", w.name())]).unwrap();
            assert_eq!((p.wait_loop, p.watchdog), (w, Watchdog::DEFAULT));
            assert_eq!(p.emit_options(p.watchdog).wait_loop, w);
        }
        let none = policy(&[("PHASER_WAIT_LOOP", "none")]).unwrap();
        assert_eq!(none.watchdog, Watchdog::Off);
        assert_eq!(none.emit_options(none.watchdog).wait_timeout_ns, None, "`none` prints CUTLASS's loop");
        assert_eq!(policy(&[("PHASER_WAIT_LOOP", "none"), ("PHASER_WATCHDOG", "off")]).unwrap(), none);
        assert_eq!(
            refused(&[("PHASER_WAIT_LOOP", "none"), ("PHASER_WATCHDOG", "1s")]),
            "PHASER_WAIT_LOOP=none: it means no watchdog, but PHASER_WATCHDOG asks for one after 1s; unset one of them"
        );
        assert_eq!(
            refused(&[("PHASER_WAIT_LOOP", "fast")]),
            "PHASER_WAIT_LOOP=fast: expected one of first-try, hinted-first, in-loop, none"
        );
    }

    #[test]
    fn jit_values() {
        assert!(policy(&[("PHASER_JIT_LINE_INFO", "on")]).unwrap().jit.line_info);
        assert!(!policy(&[("PHASER_JIT_LINE_INFO", "0")]).unwrap().jit.line_info);
        assert_eq!(
            refused(&[("PHASER_JIT_LINE_INFO", "yes")]),
            "PHASER_JIT_LINE_INFO=yes: expected 1, on or true; 0, off or false"
        );
        let cache = |vars: &[(&str, &str)]| policy(vars).unwrap().jit.cubin_cache;
        assert_eq!(cache(&[("HOME", "/h")]), Some(PathBuf::from("/h/.cache/phaser/cubin")));
        assert_eq!(cache(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]), Some(PathBuf::from("/x/phaser/cubin")));
        assert_eq!(cache(&[("HOME", "/h"), ("PHASER_CUBIN_CACHE", "/c")]), Some(PathBuf::from("/c")));
        assert_eq!(cache(&[("HOME", "/h"), ("PHASER_CUBIN_CACHE", "off")]), None);
        assert_eq!(policy(&[("PHASER_CUBIN_DIR", "/p")]).unwrap().jit.prebuilt_dir, Some(PathBuf::from("/p")));
    }

    #[test]
    fn the_user_cache_dir_is_xdg_then_home() {
        let dir = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
            user_cache_dir(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        assert_eq!(dir(&[("HOME", "/h")]), Some(PathBuf::from("/h/.cache/phaser")));
        assert_eq!(dir(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]), Some(PathBuf::from("/x/phaser")));
        assert_eq!(dir(&[("HOME", "/h"), ("XDG_CACHE_HOME", "")]), Some(PathBuf::from("/h/.cache/phaser")));
        assert_eq!(dir(&[]), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8_is_refused() {
        use std::os::unix::ffi::OsStringExt;
        let bad = LaunchPolicy::from_vars(|name| (name == "PHASER_WATCHDOG").then(|| OsString::from_vec(vec![0xff])));
        match bad {
            Err(RuntimeError::Config(m)) => assert_eq!(m, "PHASER_WATCHDOG=\u{fffd}: the value is not UTF-8"),
            other => panic!("{other:?}"),
        }
    }
}
