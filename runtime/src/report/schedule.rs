//! A step schedule: the exact order in which the simulator ran a cluster's actors (warps and
//! async agents), one step at a time. The explorer (`sim::explore`) records one for every
//! execution; `SimConfig::schedule` replays it, and `phaser check --schedule FILE` reads it.
//!
//! Text form: steps separated by whitespace, `w3` (warp 3 of the cluster, in CTA-rank order),
//! `a3.1` (the second async op issued by warp 3: a copy, a store, a commit, an MMA), with
//! `*N` for N steps in a row (`w0*12`).

use std::fmt;
use std::str::FromStr;

/// Who runs one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Actor {
    /// A warp (its index in the cluster): it wakes what its wait allows, runs its thread-local
    /// instructions and at most one instruction other threads can observe.
    Warp(u32),
    /// The `seq`-th async op issued by warp `warp`: one piece of a copy lands, or the op
    /// completes.
    Agent { warp: u32, seq: u32 },
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Warp(w) => write!(f, "w{w}"),
            Actor::Agent { warp, seq } => write!(f, "a{warp}.{seq}"),
        }
    }
}

impl FromStr for Actor {
    type Err = String;
    fn from_str(s: &str) -> Result<Actor, String> {
        let bad = || format!("`{s}` is not a step (write `w<warp>` or `a<warp>.<n>`)");
        if let Some(w) = s.strip_prefix('w') {
            return w.parse().map(Actor::Warp).map_err(|_| bad());
        }
        let rest = s.strip_prefix('a').ok_or_else(bad)?;
        let (w, n) = rest.split_once('.').ok_or_else(bad)?;
        Ok(Actor::Agent { warp: w.parse().map_err(|_| bad())?, seq: n.parse().map_err(|_| bad())? })
    }
}

/// The steps of one execution, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub steps: Vec<Actor>,
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.steps.len() {
            let run = self.steps[i..].iter().take_while(|&&a| a == self.steps[i]).count();
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            if run > 1 {
                write!(f, "{}*{run}", self.steps[i])?;
            } else {
                write!(f, "{}", self.steps[i])?;
            }
            i += run;
        }
        Ok(())
    }
}

/// A schedule's text that does not parse: which token, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("schedule token {index} (`{token}`): {problem}")]
pub struct ScheduleParseError {
    /// 1-based position of the token in the text.
    pub index: usize,
    pub token: String,
    pub problem: String,
}

impl FromStr for Schedule {
    type Err = ScheduleParseError;
    fn from_str(text: &str) -> Result<Schedule, ScheduleParseError> {
        let mut steps = Vec::new();
        for (i, token) in text.split_whitespace().enumerate() {
            let err = |problem: String| ScheduleParseError { index: i + 1, token: token.to_owned(), problem };
            let (actor, count) = match token.split_once('*') {
                Some((a, n)) => {
                    let n: usize = n.parse().map_err(|_| err(format!("`{n}` is not a repeat count")))?;
                    if n == 0 {
                        return Err(err("a repeat count is at least 1".into()));
                    }
                    (a, n)
                }
                None => (token, 1),
            };
            let actor: Actor = actor.parse().map_err(err)?;
            steps.extend(std::iter::repeat_n(actor, count));
        }
        Ok(Schedule { steps })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_back_what_it_prints() {
        let s = Schedule {
            steps: vec![
                Actor::Warp(0),
                Actor::Warp(0),
                Actor::Warp(0),
                Actor::Agent { warp: 1, seq: 2 },
                Actor::Warp(3),
            ],
        };
        assert_eq!(s.to_string(), "w0*3 a1.2 w3");
        assert_eq!(s.to_string().parse::<Schedule>().unwrap(), s);
    }

    #[test]
    fn a_bad_token_is_named_with_its_position() {
        let e = "w0 w1 x3".parse::<Schedule>().unwrap_err();
        assert_eq!((e.index, e.token.as_str()), (3, "x3"));
        let e = "w0*0".parse::<Schedule>().unwrap_err();
        assert_eq!(e.problem, "a repeat count is at least 1");
        let e = "a1".parse::<Schedule>().unwrap_err();
        assert_eq!(e.problem, "`a1` is not a step (write `w<warp>` or `a<warp>.<n>`)");
    }
}
