//! The CPU simulator backend (placeholder interface; the interpreter lives beside it).

use crate::args::Arg;
use crate::error::{Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use phaser_codegen::Kernel;
use std::sync::Mutex;

#[derive(Clone, Debug, Default)]
pub struct SimConfig {
    pub seed: u64,
}

#[derive(Debug, Default)]
pub struct SimReport {}

/// A buffer in the simulator's global memory: a fake device address and a length.
#[derive(Clone, Debug)]
pub struct SimBuffer {
    pub addr: u64,
    pub len: usize,
}

pub struct SimDevice {
    pub config: SimConfig,
    mem: Mutex<Vec<(u64, Vec<u8>)>>,
}

impl SimDevice {
    pub fn new(config: SimConfig) -> Self {
        SimDevice { config, mem: Mutex::new(Vec::new()) }
    }
    pub fn alloc(&self, bytes: usize) -> SimBuffer {
        let mut m = self.mem.lock().unwrap();
        let addr = 0x7000_0000_0000u64 + ((m.len() as u64) << 32);
        m.push((addr, vec![0; bytes]));
        SimBuffer { addr, len: bytes }
    }
    pub fn write(&self, b: &SimBuffer, data: &[u8]) -> Result<()> {
        let mut m = self.mem.lock().unwrap();
        let e =
            m.iter_mut().find(|e| e.0 == b.addr).ok_or_else(|| RuntimeError::BufferSize("unknown buffer".into()))?;
        e.1.copy_from_slice(data);
        Ok(())
    }
    pub fn read(&self, b: &SimBuffer) -> Vec<u8> {
        let m = self.mem.lock().unwrap();
        m.iter().find(|e| e.0 == b.addr).map(|e| e.1.clone()).unwrap_or_default()
    }
    pub fn launch(&self, k: &Kernel, _cfg: &LaunchConfig, _args: &[Arg]) -> Result<LaunchReport> {
        Err(RuntimeError::Simulation(format!("kernel `{}`: the simulator is not implemented yet", k.name)))
    }
}
