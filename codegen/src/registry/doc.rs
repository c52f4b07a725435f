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
    let largest = (0..groups.len()).max_by_key(|&i| groups[i].1.len()).unwrap_or(0);
    let all: Vec<String> = groups.iter().flat_map(|g| g.1.clone()).collect();
    let mut lines: Vec<String> = groups
        .iter()
        .enumerate()
        .filter(|&(i, g)| i != largest || g.1.len() <= 3)
        .map(|(_, (need, labels))| format!("{}: {need}", name_group(labels, &all)))
        .collect();
    if groups[largest].1.len() > 3 {
        lines.push(format!("otherwise: {}", groups[largest].0));
    }
    lines.join("<br>")
}

/// A group of variant labels in few words: the options that decide it (an option is decisive
/// when every variant choosing it is in the group), if they cover the group; else the labels.
fn name_group(labels: &[String], all: &[String]) -> String {
    let options = |l: &str| l.split(", ").map(str::to_string).collect::<Vec<_>>();
    let decisive = |o: &String| all.iter().filter(|l| options(l).contains(o)).all(|l| labels.contains(l));
    let mut left: Vec<&String> = labels.iter().collect();
    let mut chosen: Vec<String> = Vec::new();
    while !left.is_empty() {
        let mut best: Option<(usize, String)> = None;
        for l in &left {
            for o in options(l).into_iter().filter(|o| !o.is_empty() && decisive(o)) {
                let n = left.iter().filter(|x| options(x).contains(&o)).count();
                if best.as_ref().is_none_or(|(bn, _)| n > *bn) {
                    best = Some((n, o));
                }
            }
        }
        let Some((_, o)) = best else { return labels.join("; ") };
        left.retain(|x| !options(x).contains(&o));
        chosen.push(o);
    }
    let short = chosen.join(" or ");
    if short.len() < labels.join("; ").len() {
        short
    } else {
        labels.join("; ")
    }
}

/// The op table as Markdown.
pub fn markdown_table() -> String {
    let mut s = String::from("| DSL call | returns | builder call | needs | what |\n|---|---|---|---|---|\n");
    for o in super::ops() {
        let cell = |x: &str| x.replace('|', "\\|").replace('\n', " ");
        let call = match o.method_signature() {
            Some(m) => format!("`{}`<br>`{m}`", o.signature()),
            None => format!("`{}`", o.signature()),
        };
        s.push_str(&format!(
            "| {call} | {} | `{}` | {} | {} |\n",
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
