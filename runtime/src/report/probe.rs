//! Values recorded by `Inst::Probe` during a simulated launch, and text tables of them.

use phaser_codegen::Type;
use std::fmt;

/// One value recorded by a probe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeValue {
    pub bits: u64,
    pub ty: Type,
}

impl ProbeValue {
    pub fn as_i64(&self) -> i64 {
        match self.ty {
            Type::S16 => self.bits as u16 as i16 as i64,
            Type::S32 => self.bits as u32 as i32 as i64,
            Type::F32 => f32::from_bits(self.bits as u32) as i64,
            Type::F64 => f64::from_bits(self.bits) as i64,
            _ => self.bits as i64,
        }
    }
}

impl fmt::Display for ProbeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ty {
            Type::F32 => write!(f, "{}", f32::from_bits(self.bits as u32)),
            Type::F64 => write!(f, "{}", f64::from_bits(self.bits)),
            _ => write!(f, "{}", self.as_i64()),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ProbeRecord {
    pub tag: &'static str,
    pub ctaid: [u32; 3],
    pub thread: u32,
    /// Simulated time of the probe.
    pub tick: u64,
    pub values: Vec<ProbeValue>,
}

/// A text table of the probes with `tag` (one row per record, in execution order).
pub fn probe_table(probes: &[ProbeRecord], tag: &str, headers: &[&str]) -> String {
    let rows: Vec<Vec<String>> =
        probes.iter().filter(|p| p.tag == tag).map(|p| p.values.iter().map(|v| v.to_string()).collect()).collect();
    let cols = headers.len().max(rows.iter().map(|r| r.len()).max().unwrap_or(0));
    let mut width = vec![0usize; cols];
    for (i, h) in headers.iter().enumerate() {
        width[i] = h.len();
    }
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.len());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, w) in width.iter().enumerate() {
            let c = cells.get(i).map(String::as_str).unwrap_or("");
            if i > 0 {
                s.push_str(" | ");
            }
            s.push_str(&format!("{c:<w$}"));
        }
        s.trim_end().to_string()
    };
    let mut out = line(&headers.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push('\n');
    out.push_str(&width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("-|-"));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}
