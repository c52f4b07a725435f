//! Many one-kernel PTX modules assembled together: one ptxas run and one cuobjdump run for
//! the lot, with each kernel's part of their output handed back as if it ran alone.
//!
//! Why: cuobjdump's disassembler costs about 0.8 s per ELF whatever its size (a one-kernel
//! cubin or twenty kernels in one), and the GEMM tests disassemble over a hundred kernels.
//! Kernels whose module headers agree (`.version`, `.target`, `.address_size`, module-scope
//! declarations; comments aside) are concatenated into one module, each entry renamed so the
//! names are unique; ptxas `-v` reports each function under its name, and cuobjdump lists each
//! under `Function : name`. Kernels with other headers go to batches of their own.

use super::{assemble_to, sass};
use std::path::Path;

/// What one kernel of a batch got: ptxas's messages about it (its `-v` lines, its warnings;
/// the module-wide lines before the first function too) and its SASS listing, with its own
/// entry name and its own PTX line numbers, as [`assemble_to`] and [`sass`] would give.
#[derive(Clone, Debug)]
pub struct Assembled {
    pub messages: String,
    pub sass: String,
}

/// One module split at its entry: the header (every line before `.visible .entry` or
/// `.entry`) and the function.
struct Split<'a> {
    header: Vec<&'a str>,
    function: Vec<&'a str>,
    name: &'a str,
}

fn split(ptx: &str) -> Result<Split<'_>, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let is_entry = |l: &&str| l.starts_with(".visible .entry ") || l.starts_with(".entry ");
    let at = lines.iter().position(is_entry).ok_or("a module without an `.entry`")?;
    if lines[at + 1..].iter().any(is_entry) {
        return Err("a module with more than one `.entry`".into());
    }
    let name = lines[at].split_whitespace().find(|w| *w != ".visible" && *w != ".entry").unwrap_or("");
    let name = name.split('(').next().unwrap_or("");
    if name.is_empty() {
        return Err(format!("no entry name in `{}`", lines[at]));
    }
    Ok(Split { header: lines[..at].to_vec(), function: lines[at..].to_vec(), name })
}

/// The header lines that matter to ptxas: comments and blank lines aside.
fn key<'a>(header: &[&'a str]) -> Vec<&'a str> {
    header.iter().copied().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//")).collect()
}

/// Assemble each of `modules` (one kernel each, as `emit_kernel` prints it) for `arch` with
/// `ptxas -v`, and disassemble it with `cuobjdump -sass`, in as few runs of each as the
/// modules' headers allow. A batch that ptxas refuses is assembled again one kernel at a time,
/// so the error names that kernel's own PTX lines. `dir` receives the modules and cubins.
pub fn assemble_each(
    ptxas: &Path,
    cuobjdump: &Path,
    arch: &str,
    dir: &Path,
    modules: &[&str],
) -> Result<Vec<Assembled>, String> {
    let splits = modules.iter().map(|m| split(m)).collect::<Result<Vec<_>, _>>()?;
    let mut batches: Vec<(Vec<&str>, Vec<usize>)> = Vec::new();
    for (i, s) in splits.iter().enumerate() {
        let k = key(&s.header);
        match batches.iter_mut().find(|(h, _)| *h == k) {
            Some((_, members)) => members.push(i),
            None => batches.push((k, vec![i])),
        }
    }
    let mut out: Vec<Option<Assembled>> = vec![None; modules.len()];
    for (b, (_, members)) in batches.iter().enumerate() {
        let stem = format!("batch{b}");
        for (i, assembled) in assemble_batch(ptxas, cuobjdump, arch, dir, &stem, &splits, members, modules)? {
            out[i] = Some(assembled);
        }
    }
    Ok(out.into_iter().map(|a| a.expect("every module is in one batch")).collect())
}

/// The entry name member `i` has in the batch's module.
fn batch_name(name: &str, i: usize) -> String {
    format!("{name}__batch{i}")
}

#[allow(clippy::too_many_arguments)]
fn assemble_batch(
    ptxas: &Path,
    cuobjdump: &Path,
    arch: &str,
    dir: &Path,
    stem: &str,
    splits: &[Split<'_>],
    members: &[usize],
    modules: &[&str],
) -> Result<Vec<(usize, Assembled)>, String> {
    // The module: the first member's header, then each member's function, renamed. `shift[i]`
    // is what member i's own line numbers gain in it.
    let first = &splits[members[0]];
    let mut text: Vec<String> = first.header.iter().map(|l| l.to_string()).collect();
    let mut shift = Vec::new();
    for &i in members {
        let s = &splits[i];
        shift.push(text.len() as i64 - s.header.len() as i64);
        let renamed = s.function[0].replacen(s.name, &batch_name(s.name, i), 1);
        text.push(renamed);
        text.extend(s.function[1..].iter().map(|l| l.to_string()));
    }
    let module = text.join("\n") + "\n";
    let cubin = dir.join(format!("{stem}.cubin"));
    let messages = match assemble_to(ptxas, &module, arch, &["-v"], &cubin) {
        Ok(m) => m,
        Err(batch_error) => {
            // Name the kernel ptxas refused, in its own lines.
            for &i in members {
                let alone = dir.join(format!("{stem}_{i}.cubin"));
                assemble_to(ptxas, modules[i], arch, &["-v"], &alone)
                    .map_err(|e| format!("ptxas refused `{}`:\n{e}", splits[i].name))?;
            }
            return Err(format!("ptxas refused the batch of {} kernels, and none alone:\n{batch_error}", members.len()));
        }
    };
    let listing = sass(cuobjdump, &cubin)?;
    let names: Vec<String> = members.iter().map(|&i| batch_name(splits[i].name, i)).collect();
    let mut out = Vec::new();
    for (m, &i) in members.iter().enumerate() {
        let own = splits[i].name;
        let messages = messages_of(&messages, &names, m, shift[m]);
        let sass = sass_of(&listing, &names[m]).ok_or_else(|| {
            format!("cuobjdump listed no `Function : {}` for `{own}`:\n{listing}", names[m])
        })?;
        // Back to the kernel's own name (the batch's is the own name and a suffix).
        let messages = messages.replace(&names[m], own);
        out.push((i, Assembled { messages, sass: sass.replace(&names[m], own) }));
    }
    Ok(out)
}

/// The lines of ptxas's `messages` about function `names[m]`: those that name it, and those
/// that follow a line naming it until a line names another (`-v`'s resource lines name none);
/// the lines before the first named function are module-wide and go to every member. "line N"
/// becomes the member's own line number (`shift` less).
fn messages_of(messages: &str, names: &[String], m: usize, shift: i64) -> String {
    let named = |l: &str| names.iter().position(|n| l.contains(&format!("'{n}'")) || l.ends_with(&format!(" {n}")));
    let mut current = None;
    let mut out = String::new();
    for line in messages.lines() {
        if let Some(n) = named(line) {
            current = Some(n);
        }
        if current.is_none() || current == Some(m) {
            out.push_str(&own_line_numbers(line, shift));
            out.push('\n');
        }
    }
    out
}

/// `line` with each "line N" made "line N - shift".
fn own_line_numbers(line: &str, shift: i64) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        match digits.parse::<i64>() {
            Ok(n) => out.push_str(&(n - shift).to_string()),
            Err(_) => out.push_str(&digits),
        }
        rest = &after[digits.len()..];
    }
    out.push_str(rest);
    out
}

/// The part of cuobjdump's listing for function `name`: the listing's header (the lines
/// before the first function) and its `Function : name` section.
fn sass_of(listing: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = listing.lines().collect();
    let is_function = |l: &str| l.trim_start().starts_with("Function : ");
    let first = lines.iter().position(|l| is_function(l))?;
    let at = lines.iter().position(|l| l.trim() == format!("Function : {name}"))?;
    let end = lines[at + 1..].iter().position(|l| is_function(l)).map_or(lines.len(), |e| at + 1 + e);
    let mut out: Vec<&str> = lines[..first].to_vec();
    out.extend(&lines[at..end]);
    Some(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_to_the_function_they_name_with_its_own_line_numbers() {
        let names = vec!["k__batch0".to_string(), "k__batch1".to_string()];
        let out = "ptxas info    : 12 bytes gmem\n\
                   ptxas info    : Compiling entry function 'k__batch0' for 'sm_90a'\n\
                   ptxas info    : Function properties for k__batch0\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Used 168 registers\n\
                   ptxas info    : Compiling entry function 'k__batch1' for 'sm_90a'\n\
                   ptxas info    : (C7515) serialized in the function 'k__batch1' in line 130\n\
                   ptxas info    : Function properties for k__batch1\n    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n";
        let first = messages_of(out, &names, 0, 10);
        let second = messages_of(out, &names, 1, 100);
        assert!(first.contains("12 bytes gmem") && second.contains("12 bytes gmem"));
        assert!(first.contains("0 bytes spill stores") && !first.contains("8 bytes spill"), "{first}");
        assert!(second.contains("8 bytes spill stores") && !second.contains("168 registers"), "{second}");
        assert!(second.contains("in line 30"), "{second}");
        assert!(!first.contains("C7515"), "{first}");
    }

    #[test]
    fn a_listing_is_cut_at_its_functions() {
        let listing = "\n\tcode for sm_90a\n\t\tFunction : a__batch0\n\t/*0000*/ MOV R1 ;\n\t\tFunction : b__batch1\n\t/*0000*/ EXIT ;\n";
        let b = sass_of(listing, "b__batch1").unwrap();
        assert!(b.contains("code for sm_90a") && b.contains("EXIT") && !b.contains("MOV"), "{b}");
        assert!(sass_of(listing, "c__batch2").is_none());
    }

    #[test]
    fn a_module_is_split_at_its_one_entry() {
        let s = split(".version 8.0\n// kernel k\n.visible .entry k(\n.param .u64 p\n)\n{\nret;\n}\n").unwrap();
        assert_eq!((s.name, s.header.len(), s.function.len()), ("k", 2, 6));
        assert_eq!(key(&s.header), vec![".version 8.0"]);
        assert!(split(".version 8.0\n").is_err());
        assert!(split(".entry a()\n{\n}\n.entry b()\n{\n}\n").is_err());
    }

    /// Three modules, two of one header and one of another: each kernel's resource lines and
    /// SASS instructions are what it gets assembled alone, under its own name.
    #[test]
    fn a_batch_gives_each_kernel_what_it_gets_alone() {
        let (ptxas, cuobjdump) = (crate::ptxas::require(), crate::ptxas::require_cuobjdump());
        let module = |version: &str, name: &str, body: &str| {
            format!(
                ".version {version}\n.target sm_90a\n.address_size 64\n\n// kernel {name}\n.visible .entry {name}(.param .u64 p)\n{{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n{body}\tst.global.u32 [%rd1], %r1;\n\tret;\n}}\n"
            )
        };
        let modules = [
            module("8.0", "k", ""),
            module("8.0", "k", "\tmul.lo.u32 %r1, %r1, 3;\n"),
            module("8.3", "other", "\tadd.u32 %r1, %r1, 7;\n"),
        ];
        let dir = tempfile::tempdir().unwrap();
        let refs: Vec<&str> = modules.iter().map(String::as_str).collect();
        let batch = assemble_each(&ptxas, &cuobjdump, "sm_90a", dir.path(), &refs).unwrap();
        assert_eq!(batch.len(), 3);
        let insts = |listing: &str| -> Vec<String> {
            listing.lines().filter(|l| l.trim_start().starts_with("/*0")).map(|l| l.split("/*").nth(1).unwrap_or("").to_string()).collect()
        };
        let resources = |messages: &str| -> Vec<String> {
            messages.lines().filter(|l| l.contains("spill stores") || l.contains("Used ")).map(str::to_string).collect()
        };
        for (i, m) in modules.iter().enumerate() {
            let cubin = dir.path().join(format!("alone{i}.cubin"));
            let alone = assemble_to(&ptxas, m, "sm_90a", &["-v"], &cubin).unwrap();
            let listing = sass(&cuobjdump, &cubin).unwrap();
            assert_eq!(resources(&batch[i].messages), resources(&alone), "kernel {i}:\n{}", batch[i].messages);
            assert_eq!(insts(&batch[i].sass), insts(&listing), "kernel {i}:\n{}", batch[i].sass);
            let name = if i == 2 { "other" } else { "k" };
            assert!(batch[i].sass.contains(&format!("Function : {name}\n")), "{}", batch[i].sass);
            assert!(!batch[i].messages.contains("__batch"), "{}", batch[i].messages);
        }
        // Kernels 0 and 1 differ, and each kept its own.
        assert_ne!(insts(&batch[0].sass), insts(&batch[1].sass));
    }
}
