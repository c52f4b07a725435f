//! The PTX printer: module header, entries, declarations, and structured control flow
//! lowered to labels and predicated branches. Output is deterministic.

use super::inst::{self, InstCtx};
use super::names::{comment_text, entry_symbol, escape, file_path, quoted, DYN_SMEM};
use super::operand::*;
use super::wait_loop::WaitLoop;
use crate::arch::{module_ptx_version, PtxVersion, DYNAMIC_SHARED_ALIGN, MAX_PTX_LOADABLE};
use crate::error::Result;
use crate::ir::*;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Printer options.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EmitOptions {
    /// Newest PTX ISA version allowed (the driver that will load the PTX decides).
    pub max_ptx: PtxVersion,
    /// Emit `.file`/`.loc` directives mapping instructions to Rust source lines.
    pub line_info: bool,
    /// Blocking mbarrier waits trap after this long (nanoseconds of `%globaltimer`), so a
    /// deadlocked kernel ends in a launch error. `None` waits forever.
    pub wait_timeout_ns: Option<u64>,
    /// The suspend-time hint of every `try_wait` in a blocking wait (nanoseconds): how long
    /// a thread may sleep in one try before it retries. `None` leaves it to the hardware.
    pub wait_suspend_hint_ns: Option<u32>,
    /// Before a timed-out wait traps, it writes a record naming the wait (site, barrier,
    /// parity, phase, CTA, thread) for the runtime to decode (see [`super::watchdog`]).
    pub watchdog_record: bool,
    /// How a blocking wait with a watchdog is laid out (`emit::wait_loop`).
    pub wait_loop: WaitLoop,
}

/// Default watchdog: no legitimate single mbarrier wait lasts seconds.
pub const DEFAULT_WAIT_TIMEOUT_NS: u64 = 4_000_000_000;

/// Default suspend-time hint of a blocking wait's `try_wait`: CUTLASS's `ClusterBarrier::wait`
/// value (10 ms, `0x989680`), so the wait is the loop nvcc emits for it
/// (`SYNCS.PHASECHK.TRANS64.TRYWAIT`, then `NANOSLEEP.SYNCS` + `PHASECHK` out of line).
pub const DEFAULT_WAIT_SUSPEND_HINT_NS: u32 = 10_000_000;

/// Environment variable that overrides the default wait layout, for benchmarks that launch
/// kernels through the runtime (which prints them with the default options): `first-try`,
/// `hinted-first`, `in-loop`, or `none` (no watchdog: CUTLASS's loop exactly).
pub const WAIT_LOOP_ENV: &str = "PHASER_WAIT_LOOP";

impl Default for EmitOptions {
    fn default() -> Self {
        let (wait_timeout_ns, wait_loop) = default_wait();
        EmitOptions {
            max_ptx: MAX_PTX_LOADABLE,
            line_info: true,
            wait_timeout_ns,
            wait_suspend_hint_ns: Some(DEFAULT_WAIT_SUSPEND_HINT_NS),
            watchdog_record: true,
            wait_loop,
        }
    }
}

impl EmitOptions {
    /// Every field usable, or the first that is not, named.
    pub fn validate(&self) -> std::result::Result<(), crate::error::InvalidSetting> {
        if let Some(ns) = self.wait_timeout_ns {
            Watchdog::AfterNs(ns)
                .validate("EmitOptions::wait_timeout_ns")
                .map_err(|e| crate::error::InvalidSetting { value: format!("{:?}", self.wait_timeout_ns), ..e })?;
        }
        Ok(())
    }
}

/// The watchdog and wait layout of [`EmitOptions::default`]: [`WaitLoop::default`] with the
/// watchdog, unless [`WAIT_LOOP_ENV`] names another (read once; a bad value is reported on
/// stderr once and ignored).
fn default_wait() -> (Option<u64>, WaitLoop) {
    static CHOICE: std::sync::OnceLock<(Option<u64>, WaitLoop)> = std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| {
        let watchdog = Some(DEFAULT_WAIT_TIMEOUT_NS);
        match std::env::var(WAIT_LOOP_ENV).as_deref() {
            Err(_) | Ok("") => (watchdog, WaitLoop::default()),
            Ok("none") => (None, WaitLoop::default()),
            Ok(v) => {
                match [WaitLoop::FirstTry, WaitLoop::HintedFirst, WaitLoop::InLoop].into_iter().find(|w| w.name() == v)
                {
                    Some(w) => (watchdog, w),
                    None => {
                        eprintln!(
                        "phaser: {WAIT_LOOP_ENV}={v} is not one of first-try, hinted-first, in-loop, none; using {}",
                        WaitLoop::default().name()
                    );
                        (watchdog, WaitLoop::default())
                    }
                }
            }
        }
    })
}

/// PTX text for a single kernel.
pub fn emit_kernel(k: &Kernel) -> Result<String> {
    // Before the clone: cloning IR of unbounded depth would recurse without bound.
    crate::arch::check::check_nesting(k)?;
    emit_module(&Module::new(vec![k.clone()]), &EmitOptions::default())
}

/// PTX text for a module of kernels sharing one target.
pub fn emit_module(m: &Module, opts: &EmitOptions) -> Result<String> {
    opts.validate().map_err(|e| {
        let kernel = m.kernels.first().map_or("", |k| k.name.as_str());
        crate::error::CodegenError::new(kernel, None, e.to_string())
    })?;
    let (target, version) = module_ptx_version(m, opts.max_ptx)?;
    Ok(print_module(m, target, version, opts))
}

/// PTX text for a module at `.version` `version`, without checking its kernels against their
/// target (they must share the first kernel's). For tests that ask `ptxas` what it makes of
/// instructions a target lacks; everything else goes through [`emit_module`].
pub fn emit_module_unchecked(m: &Module, version: PtxVersion, opts: &EmitOptions) -> String {
    let target = m.kernels.first().map(|k| k.target).unwrap_or(crate::arch::Target::Sm90a);
    print_module(m, target, version, opts)
}

fn print_module(m: &Module, target: crate::arch::Target, version: PtxVersion, opts: &EmitOptions) -> String {
    let mut out = String::new();
    let names: Vec<_> = m.kernels.iter().map(|k| comment_text(&k.name)).collect();
    writeln!(out, "//\n// Generated by Phaser {} from: {}\n//\n", env!("CARGO_PKG_VERSION"), names.join(", ")).unwrap();
    writeln!(out, ".version {version}\n.target {target}\n.address_size 64\n").unwrap();

    let mut files = BTreeMap::new();
    if opts.line_info {
        for k in &m.kernels {
            collect_files(&k.body, &mut files);
        }
        let mut ids: Vec<(&&str, &mut u32)> = files.iter_mut().collect();
        ids.sort();
        for (i, (name, id)) in ids.into_iter().enumerate() {
            *id = i as u32 + 1;
            writeln!(out, ".file {} \"{}\"", i + 1, file_path(name)).unwrap();
        }
        if !files.is_empty() {
            out.push('\n');
        }
    }
    if opts.wait_timeout_ns.is_some() && opts.watchdog_record && m.kernels.iter().any(|k| !k.wait_sites().is_empty()) {
        writeln!(out, "{}", super::watchdog::declarations()).unwrap();
    }
    if m.kernels.iter().any(|k| k.uses_dynamic_shared) {
        // The dynamic window's alignment is the shared layout's (`ir::SharedLayout`).
        writeln!(out, ".extern .shared .align {DYNAMIC_SHARED_ALIGN} .b8 {DYN_SMEM}[];\n").unwrap();
    }
    // `printf`: the `vprintf` declaration and each format string, numbered per kernel in
    // program order (the order the printer meets them).
    let mut formats = Vec::new();
    for k in &m.kernels {
        let mut n = 0;
        walk_insts(&k.body, &mut |i, _| {
            if let Inst::Printf(p) = i {
                formats.push(super::escape::format_global(&inst::format_symbol(&k.name, n), &p.format));
                n += 1;
            }
        });
    }
    if !formats.is_empty() {
        writeln!(out, "{}\n", super::escape::VPRINTF_DECL).unwrap();
        for f in formats {
            writeln!(out, "{f}").unwrap();
        }
        out.push('\n');
    }
    for k in &m.kernels {
        KernelPrinter {
            k,
            out: &mut out,
            labels: 0,
            wait_sites: 0,
            loops: Vec::new(),
            files: &files,
            last_loc: None,
            indent: 1,
            opts,
            version,
            printfs: 0,
        }
        .print();
    }
    out
}

/// The static allocations whose address the body takes (in allocation order), and whether
/// it takes the dynamic window's.
pub(crate) fn shared_bases_used(body: &[Stmt]) -> (Vec<AllocId>, bool) {
    let mut allocs = std::collections::BTreeSet::new();
    let mut dynamic = false;
    walk_insts(body, &mut |i, _| match i {
        Inst::Memory(MemoryOp::SharedAddr { alloc, .. }) => {
            allocs.insert(*alloc);
        }
        Inst::Memory(MemoryOp::DynSharedAddr { .. }) => dynamic = true,
        _ => {}
    });
    (allocs.into_iter().collect(), dynamic)
}

fn collect_files(b: &[Stmt], files: &mut BTreeMap<&'static str, u32>) {
    for s in b {
        if let Some(l) = s.loc {
            files.entry(l.file).or_insert(0);
        }
        match &s.kind {
            StmtKind::If { then_body, else_body, .. } => {
                collect_files(then_body, files);
                collect_files(else_body, files);
            }
            StmtKind::Loop { body, latch } => {
                collect_files(body, files);
                collect_files(latch, files);
            }
            _ => {}
        }
    }
}

struct KernelPrinter<'a> {
    k: &'a Kernel,
    out: &'a mut String,
    labels: u32,
    /// Blocking waits printed so far (the next one's site number).
    wait_sites: u32,
    /// (latch label, exit label) of enclosing loops.
    loops: Vec<(String, String)>,
    files: &'a BTreeMap<&'static str, u32>,
    last_loc: Option<SourceLoc>,
    indent: usize,
    opts: &'a EmitOptions,
    version: PtxVersion,
    printfs: u32,
}

impl KernelPrinter<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push('\t');
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn label(&mut self, l: &str) {
        self.out.push_str(l);
        self.out.push_str(":\n");
    }

    fn fresh(&mut self, what: &str) -> String {
        self.labels += 1;
        format!("$L_{what}_{}", self.labels)
    }

    fn print(mut self) {
        let k = self.k;
        writeln!(
            self.out,
            "// kernel {}: target {}, {} bytes static shared",
            comment_text(&k.name),
            k.target,
            k.shared_layout().static_bytes
        )
        .unwrap();
        // Names that are not PTX identifiers are escaped (`emit::names`); the mapping is
        // shown, so the PTX can be read against the Rust source.
        let entry = entry_symbol(&k.name);
        if entry != k.name {
            writeln!(self.out, "// entry {} -> {entry}", quoted(&k.name)).unwrap();
        }
        for (i, p) in k.params.iter().enumerate() {
            if escape(&p.name) != p.name {
                writeln!(self.out, "// param {i} {} -> {}", quoted(&p.name), inst::param_symbol(&p.name)).unwrap();
            }
        }
        for a in &k.shared {
            if escape(&a.name) != a.name {
                writeln!(self.out, "// shared {} -> {}", quoted(&a.name), inst::shared_symbol(&a.name)).unwrap();
            }
        }
        writeln!(self.out, ".visible .entry {entry}(").unwrap();
        for (i, p) in k.params.iter().enumerate() {
            let sep = if i + 1 < k.params.len() { "," } else { "" };
            let decl = match p.kind {
                ParamKind::Scalar(t) => format!(".param .{} {}", mem_ty(t), inst::param_symbol(&p.name)),
                ParamKind::Global { .. } => format!(".param .u64 {}", inst::param_symbol(&p.name)),
                ParamKind::TensorMap => format!(".param .align 64 .b8 {}[128]", inst::param_symbol(&p.name)),
            };
            writeln!(self.out, "\t{decl}{sep}").unwrap();
        }
        writeln!(self.out, ")").unwrap();
        let b = &k.bounds;
        if let Some([x, y, z]) = b.reqntid {
            writeln!(self.out, ".reqntid {x}, {y}, {z}").unwrap();
        }
        if let Some([x, y, z]) = b.maxntid {
            writeln!(self.out, ".maxntid {x}, {y}, {z}").unwrap();
        }
        if let Some(n) = b.minnctapersm {
            writeln!(self.out, ".minnctapersm {n}").unwrap();
        }
        if let Some(n) = b.maxnreg {
            writeln!(self.out, ".maxnreg {n}").unwrap();
        }
        if let Some([x, y, z]) = b.cluster {
            writeln!(self.out, ".explicitcluster\n.reqnctapercluster {x}, {y}, {z}").unwrap();
        }
        self.out.push_str("{\n");
        // Register declarations go here once the body is printed: only the classes it uses.
        let decl_at = self.out.len();
        for a in &k.shared {
            let what = match a.kind {
                SharedKind::Barriers => format!("{} mbarrier(s)", a.len),
                SharedKind::Data => format!("{} x {}", a.len, a.elem),
            };
            self.line(&format!(
                ".shared .align {} .{} {}[{}]; // {what}",
                a.align,
                mem_ty(a.elem),
                inst::shared_symbol(&a.name),
                a.len
            ));
        }
        self.out.push('\n');
        // Shared addresses used anywhere, computed once here (see `inst::shared_base_reg`).
        let (allocs, dynamic) = shared_bases_used(&k.body);
        for &a in &allocs {
            let r = inst::shared_base_reg(Some(&k.alloc(a).name));
            self.line(&format!(".reg .b32 {r};"));
        }
        if dynamic {
            self.line(&format!(".reg .b32 {};", inst::shared_base_reg(None)));
        }
        for &a in &allocs {
            let name = &k.alloc(a).name;
            self.line(&format!("mov.u32 {}, {};", inst::shared_base_reg(Some(name)), inst::shared_symbol(name)));
        }
        if dynamic {
            self.line(&format!("mov.u32 {}, {DYN_SMEM};", inst::shared_base_reg(None)));
        }
        for p in &k.params {
            let sym = inst::param_symbol(&p.name);
            let r = reg(p.reg);
            match p.kind {
                ParamKind::Scalar(t) => self.line(&format!("ld.param.{} {r}, [{sym}];", mem_ty(t))),
                ParamKind::Global { .. } => {
                    self.line(&format!("ld.param.u64 {r}, [{sym}];"));
                    self.line(&format!("cvta.to.global.u64 {r}, {r};"));
                }
                ParamKind::TensorMap => {
                    self.line(&format!("mov.b64 {r}, {sym};"));
                    self.line(&format!("cvta.param.u64 {r}, {r};"));
                }
            }
        }
        self.block(&k.body);
        self.line("ret;");
        let decls: String = register_counts(&self.out[decl_at..])
            .into_iter()
            .map(|(prefix, ty, n)| format!("\t.reg .{ty} {prefix}<{n}>;\n"))
            .collect();
        self.out.insert_str(decl_at, &decls);
        self.out.push_str("}\n\n");
    }

    fn loc(&mut self, loc: Option<SourceLoc>) {
        let Some(l) = loc else { return };
        if !self.opts.line_info {
            return;
        }
        if self.last_loc.map(|p| (p.file, p.line)) == Some((l.file, l.line)) {
            return;
        }
        self.last_loc = Some(l);
        if let Some(id) = self.files.get(l.file) {
            self.line(&format!(".loc {id} {} {}", l.line, l.column));
        }
        self.line(&format!("// {}:{}", comment_text(l.file), l.line));
    }

    fn block(&mut self, b: &[Stmt]) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Inst(i) => {
                self.loc(s.loc);
                let mut labels = self.labels;
                let mut printfs = self.printfs;
                let mut wait_sites = self.wait_sites;
                let lines = inst::lines(
                    i,
                    &mut InstCtx {
                        kernel: self.k,
                        labels: &mut labels,
                        wait_timeout_ns: self.opts.wait_timeout_ns,
                        wait_suspend_hint_ns: self.opts.wait_suspend_hint_ns,
                        wait_loop: self.opts.wait_loop,
                        version: self.version,
                        printfs: &mut printfs,
                        wait_sites: &mut wait_sites,
                        watchdog_record: self.opts.watchdog_record,
                    },
                );
                self.labels = labels;
                self.printfs = printfs;
                self.wait_sites = wait_sites;
                for l in lines {
                    if l.ends_with(':') {
                        self.out.push_str(&l);
                        self.out.push('\n');
                    } else {
                        self.line(&l);
                    }
                }
            }
            StmtKind::If { cond, then_body, else_body }
                if else_body.is_empty() && matches!(then_body.as_slice(), [Stmt { kind: StmtKind::Break, .. }]) =>
            {
                // `if c { break }` is one predicated branch.
                self.loc(s.loc);
                let exit = self.loops.last().map(|l| l.1.clone()).unwrap_or_default();
                match const_pred(cond) {
                    Some(true) => self.line(&format!("bra {exit};")),
                    Some(false) => {}
                    None => self.line(&format!("@{} bra {exit};", value(cond))),
                }
            }
            StmtKind::If { cond, then_body, else_body } if const_pred(cond).is_some() => {
                // A condition folded to a constant (e.g. `rank == 0` where `rank` is a
                // compile-time 0): PTX has no immediate guard, so only the taken branch is printed.
                self.loc(s.loc);
                let taken = if const_pred(cond) == Some(true) { then_body } else { else_body };
                self.block(taken);
                self.last_loc = None;
            }
            StmtKind::If { cond, then_body, else_body } => {
                self.loc(s.loc);
                let c = value(cond);
                let else_l = self.fresh("else");
                let end_l = self.fresh("endif");
                if else_body.is_empty() {
                    self.line(&format!("@!{c} bra {end_l};"));
                    self.block(then_body);
                } else {
                    self.line(&format!("@!{c} bra {else_l};"));
                    self.block(then_body);
                    self.line(&format!("bra.uni {end_l};"));
                    self.label(&else_l);
                    self.last_loc = None;
                    self.block(else_body);
                }
                self.label(&end_l);
                self.last_loc = None;
            }
            StmtKind::Loop { body, latch } => {
                self.loc(s.loc);
                let head = self.fresh("loop");
                let latch_l = self.fresh("latch");
                let exit = self.fresh("exit");
                self.label(&head);
                self.loops.push((latch_l.clone(), exit.clone()));
                self.block(body);
                self.label(&latch_l);
                self.last_loc = None;
                self.block(latch);
                self.line(&format!("bra.uni {head};"));
                self.loops.pop();
                self.label(&exit);
                self.last_loc = None;
            }
            StmtKind::Break => {
                let exit = self.loops.last().map(|l| l.1.clone()).unwrap_or_default();
                self.line(&format!("bra {exit};"));
            }
            StmtKind::Continue => {
                let latch = self.loops.last().map(|l| l.0.clone()).unwrap_or_default();
                self.line(&format!("bra {latch};"));
            }
            StmtKind::Return => {
                self.loc(s.loc);
                self.line("ret;");
            }
        }
    }
}

/// The value of a predicate immediate (`Value::pred`), if `v` is one.
fn const_pred(v: &Value) -> Option<bool> {
    match v {
        Value::Imm { bits, ty: Type::Pred } => Some(*bits != 0),
        _ => None,
    }
}

/// For each register class used in `text` (names like `%r12`, `%rd3`), its prefix, declared
/// type and the count to declare (highest number + 1), in `REG_CLASSES` order.
fn register_counts(text: &str) -> Vec<(&'static str, &'static str, u32)> {
    let mut max: [Option<u32>; REG_CLASSES.len()] = [None; REG_CLASSES.len()];
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j].is_ascii_lowercase() {
            j += 1;
        }
        let letters = &text[start..j];
        let digits_end = j + b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits_end > j {
            if let Some(c) = REG_CLASSES.iter().position(|(p, _)| &p[1..] == letters) {
                if let Ok(n) = text[j..digits_end].parse::<u32>() {
                    max[c] = Some(max[c].map_or(n, |m| m.max(n)));
                }
            }
        }
        i = digits_end.max(start);
    }
    REG_CLASSES.iter().zip(max).filter_map(|(&(p, t), m)| m.map(|m| (p, t, m + 1))).collect()
}
