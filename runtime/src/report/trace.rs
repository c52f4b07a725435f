//! Barrier events over simulated time, exported as Chrome/Perfetto trace JSON, and text
//! tables built from `Inst::Probe` records.

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    Init {
        count: u32,
    },
    Inval,
    Arrive {
        count: u32,
    },
    ExpectTx {
        bytes: u32,
    },
    CompleteTx {
        bytes: u32,
    },
    /// The phase completed (the state after it is recorded: next phase, reset pending).
    PhaseComplete,
    WaitBegin {
        parity: u64,
    },
    WaitEnd,
}

#[derive(Clone, Debug)]
pub struct TraceEvent {
    /// Simulated time: warp-instructions issued in the event's cluster so far (clusters run
    /// interleaved, each with its own clock).
    pub ts: u64,
    pub ctaid: [u32; 3],
    /// Barrier offset in shared memory.
    pub bar: u32,
    /// Thread (linear index in its CTA) that caused it; `None` for the barrier itself.
    pub thread: Option<u32>,
    pub kind: TraceKind,
    /// Barrier state right after the event.
    pub pending: i64,
    pub tx: i64,
    pub phase: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    /// Events not stored (over `SimConfig::max_trace_events`).
    pub dropped: u64,
    pub(crate) limit: usize,
    /// The name of each traced barrier's offset (`bars[1]`), from the kernel's shared layout.
    pub(crate) bar_names: BTreeMap<u32, String>,
}

impl Trace {
    /// Store `e`, or count it as dropped once the trace is full.
    pub(crate) fn push(&mut self, e: TraceEvent) {
        if self.events.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        self.events.push(e);
    }

    /// Append another cluster's events (within this trace's limit).
    pub(crate) fn append(&mut self, other: Trace) {
        self.dropped += other.dropped;
        for e in other.events {
            if self.events.len() >= self.limit {
                self.dropped += 1;
            } else {
                self.events.push(e);
            }
        }
    }

    /// Name every traced barrier with `describe` (the launch's shared layout), once the events
    /// are in.
    pub(crate) fn name_barriers(&mut self, describe: impl Fn(u32) -> String) {
        for e in &self.events {
            self.bar_names.entry(e.bar).or_insert_with(|| describe(e.bar).trim_matches('`').to_string());
        }
    }

    fn bar_name(&self, off: u32) -> String {
        match self.bar_names.get(&off) {
            Some(name) => name.clone(),
            None => format!("smem+0x{off:x}"),
        }
    }

    /// Chrome trace-event JSON (load in Perfetto or chrome://tracing): one process per CTA,
    /// one track per barrier (counters for pending/tx/phase, instants for arrivals, tx
    /// updates and phase completions) and one track per waiting thread (wait spans).
    pub fn chrome_json(&self) -> String {
        let mut ev: Vec<Json> = Vec::new();
        let mut ctas: Vec<[u32; 3]> = Vec::new();
        let mut tracks: Vec<([u32; 3], u64, String)> = Vec::new();
        let pid_of = |ctas: &mut Vec<[u32; 3]>, c: [u32; 3]| match ctas.iter().position(|x| *x == c) {
            Some(p) => p,
            None => {
                ctas.push(c);
                ctas.len() - 1
            }
        };
        for e in &self.events {
            let pid = pid_of(&mut ctas, e.ctaid);
            let name = self.bar_name(e.bar);
            let bar_tid = 1 + e.bar as u64 / 8;
            if !tracks.iter().any(|t| t.0 == e.ctaid && t.1 == bar_tid) {
                tracks.push((e.ctaid, bar_tid, format!("barrier {name}")));
            }
            let by = e.thread.map(|t| json!(t)).unwrap_or(Json::Null);
            let state = json!({"pending": e.pending, "tx": e.tx, "phase": e.phase, "parity": e.phase & 1});
            match e.kind {
                TraceKind::WaitBegin { .. } | TraceKind::WaitEnd => {
                    let t = e.thread.unwrap_or(0) as u64;
                    let tid = 100_000 + t;
                    if !tracks.iter().any(|x| x.0 == e.ctaid && x.1 == tid) {
                        tracks.push((e.ctaid, tid, format!("thread {t}")));
                    }
                    let (ph, label) = match e.kind {
                        TraceKind::WaitBegin { parity } => ("B", format!("wait {name} parity {parity}")),
                        _ => ("E", String::new()),
                    };
                    ev.push(json!({"name": label, "ph": ph, "ts": e.ts, "pid": pid, "tid": tid, "args": state}));
                }
                k => {
                    let label = match k {
                        TraceKind::Init { count } => format!("init {name} count {count}"),
                        TraceKind::Inval => format!("inval {name}"),
                        TraceKind::Arrive { count } => format!("arrive x{count}"),
                        TraceKind::ExpectTx { bytes } => format!("expect_tx +{bytes}"),
                        TraceKind::CompleteTx { bytes } => format!("complete_tx -{bytes}"),
                        TraceKind::PhaseComplete => format!("phase {} complete", e.phase.wrapping_sub(1)),
                        _ => unreachable!(),
                    };
                    ev.push(json!({"name": label, "ph": "i", "s": "t", "ts": e.ts, "pid": pid, "tid": bar_tid,
                        "args": {"thread": by, "pending": e.pending, "tx": e.tx, "phase": e.phase}}));
                    ev.push(json!({"name": name, "ph": "C", "ts": e.ts, "pid": pid, "tid": bar_tid,
                        "args": {"pending": e.pending, "tx": e.tx, "parity": e.phase & 1}}));
                }
            }
        }
        for (i, c) in ctas.iter().enumerate() {
            ev.push(json!({"name": "process_name", "ph": "M", "pid": i, "args": {"name": format!("CTA {c:?}")}}));
        }
        for (c, tid, name) in &tracks {
            let pid = ctas.iter().position(|x| x == c).unwrap_or(0);
            ev.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
        }
        json!({"traceEvents": ev, "displayTimeUnit": "ns",
               "otherData": {"time_unit": "simulated warp-instructions", "dropped_events": self.dropped}})
        .to_string()
    }
}
