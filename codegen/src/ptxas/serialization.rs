//! ptxas's word that a kernel's wgmmas lost their asynchrony, with the Rust line behind it.
//!
//! ptxas assembles a kernel whose wgmma pipeline it cannot prove safe, but it makes it safe by
//! serializing: C7515 puts a `wait_group 0` after *every* wgmma of the function (each GEMM then
//! waits for the previous one), C7517 injects a `wait_group` before a register an in-flight
//! wgmma defines is used. Both are printed as `info`, not as warnings, so nothing fails: the
//! kernel is right and slow (the DSL attention lost a third of its speed to C7515). The usual
//! cause is a `wait_group` under a branch ptxas cannot follow (`if j > 0 { wait_group(0) }` in
//! a loop), or a non-wgmma write to an accumulator while a wgmma on it is in flight.

/// One C7515/C7517 message: its code, ptxas's text, and the Rust `file:line` of the PTX line it
/// names (the printer's `// file:line` comment above it), when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgmmaSerialization {
    pub code: &'static str,
    pub message: String,
    pub rust_line: Option<String>,
}

impl std::fmt::Display for WgmmaSerialization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.rust_line {
            Some(at) => write!(f, "{at}: ptxas {}: {}", self.code, self.message),
            None => write!(f, "ptxas {}: {}", self.code, self.message),
        }
    }
}

/// The codes that mean "the wgmmas do not overlap as written".
const CODES: [&str; 2] = ["C7515", "C7517"];

/// Every C7515/C7517 message in ptxas's output `messages` for the PTX text `ptx`.
pub fn wgmma_serialization(messages: &str, ptx: &str) -> Vec<WgmmaSerialization> {
    let ptx_lines: Vec<&str> = ptx.lines().collect();
    messages
        .lines()
        .filter_map(|line| {
            let code = CODES.iter().find(|c| line.contains(&format!("({c})")))?;
            let message = line.split_once(&format!("({code})")).map_or(line, |(_, m)| m).trim().to_string();
            let rust_line = ptx_line_named(&message).and_then(|n| rust_line_of(&ptx_lines, n));
            Some(WgmmaSerialization { code, message, rust_line })
        })
        .collect()
}

/// The PTX line number a message names: "in line N" or "around line N".
fn ptx_line_named(message: &str) -> Option<usize> {
    let at = message.find(" line ")? + " line ".len();
    let digits: String = message[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The `// file.rs:line` comment nearest above PTX line `n` (1-based): the printer writes one
/// before each statement's instructions.
fn rust_line_of(ptx_lines: &[&str], n: usize) -> Option<String> {
    ptx_lines[..n.min(ptx_lines.len())].iter().rev().find_map(|l| {
        let c = l.trim().strip_prefix("// ")?;
        let (file, line) = c.rsplit_once(':')?;
        (file.ends_with(".rs") && !line.is_empty() && line.chars().all(|ch| ch.is_ascii_digit())).then(|| c.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\t// src/k.rs:10\n\twgmma.commit_group.sync.aligned;\n\t// src/k.rs:12\n\tmul.rn.f32 %f1, %f2, %f3;\n\tmov.f32 %f2, %f1;\n";

    #[test]
    fn names_the_rust_line_of_the_ptx_line() {
        let out = "ptxas info    : (C7517) wgmma.wait_group is injected in around line 5 by compiler to allow use of registers defined by GMMA in function 'k'\n\
                   ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in the function 'k' in line 2\n\
                   ptxas info    : Used 168 registers\n";
        let found = wgmma_serialization(out, PTX);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].code, found[0].rust_line.as_deref()), ("C7517", Some("src/k.rs:12")));
        assert_eq!((found[1].code, found[1].rust_line.as_deref()), ("C7515", Some("src/k.rs:10")));
        assert!(
            found[1].to_string().starts_with("src/k.rs:10: ptxas C7515: Potential Performance Loss"),
            "{}",
            found[1]
        );
    }

    #[test]
    fn other_messages_and_unknown_lines_are_not_claimed() {
        assert!(wgmma_serialization("ptxas info    : Used 168 registers, used 16 barriers\n", PTX).is_empty());
        let far = "ptxas info    : (C7515) serialized in the function 'k' in line 99\n";
        assert_eq!(wgmma_serialization(far, PTX)[0].rust_line.as_deref(), Some("src/k.rs:12"));
        let none = "ptxas info    : (C7515) serialized in the function 'k'\n";
        assert_eq!(wgmma_serialization(none, PTX)[0].rust_line, None);
    }
}
