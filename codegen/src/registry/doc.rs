//! The op table of `dsl/README.md`, generated from the registry (a test keeps it current).

use super::def::OpDef;
use super::lower::{support, variants, Support};
use crate::arch::Target;

/// What a variant needs, in words: `PTX 8.0, sm_90+`.
fn describe(s: &Support) -> String {
    let from_first = |first: Target| Target::ALL.into_iter().filter(|t| t.sm() >= first.sm()).collect::<Vec<_>>();
    let targets = match s.targets.first() {
        None => "no target".to_string(),
        Some(&first) if !first.is_arch_specific() && s.targets == from_first(first) => format!("{first}+"),
        Some(_) => s.targets.iter().map(|t| t.name()).collect::<Vec<_>>().join("/"),
    };
    if s.ptx == crate::arch::PtxVersion::new(0, 0) {
        return targets; // a declaration, no instruction
    }
    format!("PTX {}, {targets}", s.ptx)
}

/// What an op needs per variant: `PTX 8.0, sm_90+`, or one line per group of variants that
/// need the same (`"relaxed": PTX 8.6, sm_90+`). Derived by lowering every variant.
pub fn support_summary(def: &OpDef) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for v in variants(def).iter().filter(|v| !v.literals) {
        let need = match support(def, v) {
            Ok(s) => describe(&s),
            Err(e) => format!("does not build: {e}"),
        };
        match groups.iter_mut().find(|(n, _)| *n == need) {
            Some((_, labels)) => labels.push(v.label.clone()),
            None => groups.push((need, vec![v.label.clone()])),
        }
    }
    if groups.len() == 1 {
        return groups.remove(0).0;
    }
    groups.into_iter().map(|(need, labels)| format!("{}: {need}", labels.join("; "))).collect::<Vec<_>>().join("<br>")
}

/// The op table as Markdown.
pub fn markdown_table() -> String {
    let mut s = String::from("| DSL call | returns | builder call | needs | what |\n|---|---|---|---|---|\n");
    for o in super::ops() {
        let cell = |x: &str| x.replace('|', "\\|").replace('\n', " ");
        s.push_str(&format!(
            "| `{}` | {} | `{}` | {} | {} |\n",
            o.signature(),
            o.ret.describe(),
            cell(&squeeze(o.builder)),
            cell(&support_summary(o)),
            cell(o.doc)
        ));
    }
    s
}

/// A lowering's source on one line (`stringify!` keeps a block's line breaks).
fn squeeze(src: &str) -> String {
    src.split_whitespace().collect::<Vec<_>>().join(" ")
}
