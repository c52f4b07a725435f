//! Simulated memory: the global arena (buffers at fake device addresses) and the shared
//! memory layout of a kernel (names for addresses in findings and traces).

use phaser_codegen::ir::{Kernel, SharedKind};

/// Fake device address of buffer 0; buffer `i` lives at `GLOBAL_BASE + (i << 32)`.
pub const GLOBAL_BASE: u64 = 0x7000_0000_0000;
/// Fake generic address of kernel parameter `i` (tensor maps are read from there).
pub const PARAM_BASE: u64 = 0x6000_0000_0000;
/// A `.shared::cluster` address is `((rank + 1) << CLUSTER_SHIFT) | offset`; a plain
/// `.shared::cta` offset (high bits zero) names the executing CTA.
pub const CLUSTER_SHIFT: u32 = 24;

/// A buffer in the simulator's global memory: the device it belongs to, a fake device
/// address and a length in bytes. Dropping it frees its bytes (not its address: a stale
/// address names no buffer, so a late access through it is a finding, never another
/// buffer's data).
#[derive(Debug)]
pub struct SimBuffer {
    pub(crate) device: u64,
    pub addr: u64,
    pub len: usize,
    /// The memory to free it in (gone when the device is).
    pub(crate) mem: std::sync::Weak<std::sync::Mutex<GlobalMemory>>,
}

impl Drop for SimBuffer {
    fn drop(&mut self) {
        if let Some(mem) = self.mem.upgrade() {
            mem.lock().unwrap_or_else(|p| p.into_inner()).free(self.addr);
        }
    }
}

/// Global memory: every buffer of a device, addressed in O(1).
#[derive(Default)]
pub struct GlobalMemory {
    /// Indexed by allocation; a freed buffer's slot stays (empty) so its address is never
    /// given to another buffer.
    pub(crate) bufs: Vec<Vec<u8>>,
    /// Bytes of live buffers (what the memory limit counts).
    live_bytes: u64,
}

impl GlobalMemory {
    /// A zeroed buffer of `bytes`; returns its fake device address.
    pub fn alloc(&mut self, bytes: usize) -> u64 {
        let addr = GLOBAL_BASE + ((self.bufs.len() as u64) << 32);
        self.bufs.push(vec![0; bytes]);
        self.live_bytes += bytes as u64;
        addr
    }
    /// Free the buffer at `addr` (its start address); a second free does nothing.
    pub fn free(&mut self, addr: u64) {
        let Some(rel) = addr.checked_sub(GLOBAL_BASE) else { return };
        if let Some(b) = self.bufs.get_mut((rel >> 32) as usize) {
            self.live_bytes -= b.len() as u64;
            *b = Vec::new();
        }
    }
    /// Bytes held by live buffers.
    pub fn bytes(&self) -> u64 {
        self.live_bytes
    }
    /// The buffer and offset of `[addr, addr + len)`, if it lies inside one buffer.
    #[inline]
    fn locate(&self, addr: u64, len: usize) -> Option<(usize, usize)> {
        let rel = addr.checked_sub(GLOBAL_BASE)?;
        let idx = (rel >> 32) as usize;
        let off = (rel & 0xFFFF_FFFF) as usize;
        let b = self.bufs.get(idx)?;
        (off + len <= b.len()).then_some((idx, off))
    }
    #[inline]
    pub fn slice(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (i, o) = self.locate(addr, len)?;
        Some(&self.bufs[i][o..o + len])
    }
    #[inline]
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let (i, o) = self.locate(addr, len)?;
        Some(&mut self.bufs[i][o..o + len])
    }
    #[inline]
    pub fn load(&self, addr: u64, size: usize) -> Option<u64> {
        let s = self.slice(addr, size)?;
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(s);
        Some(u64::from_le_bytes(b))
    }
    #[inline]
    pub fn store(&mut self, addr: u64, size: usize, v: u64) -> bool {
        match self.slice_mut(addr, size) {
            Some(s) => {
                s.copy_from_slice(&v.to_le_bytes()[..size]);
                true
            }
            None => false,
        }
    }
    /// A readable name for a global address: `buffer #i + off`.
    pub fn describe(&self, addr: u64) -> String {
        match addr.checked_sub(GLOBAL_BASE) {
            Some(rel) if ((rel >> 32) as usize) < self.bufs.len() => {
                let i = (rel >> 32) as usize;
                format!("buffer #{i} byte {} (of {})", rel & 0xFFFF_FFFF, self.bufs[i].len())
            }
            _ => format!("0x{addr:x} (no buffer)"),
        }
    }
}

/// One named region of shared memory.
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub start: u32,
    pub end: u32,
    pub elem_size: u32,
    pub barriers: bool,
}

/// Where each static allocation lives and where dynamic shared memory starts: codegen's
/// [`phaser_codegen::ir::SharedLayout`] (the layout the printer and the CUDA launch use),
/// with names for findings and traces. Offsets fit `u32`: the launch check bounded them.
#[derive(Clone, Debug)]
pub struct SmemLayout {
    pub regions: Vec<Region>,
    pub static_bytes: u32,
    pub dynamic_base: u32,
    pub total: u32,
}

impl SmemLayout {
    pub fn new(k: &Kernel, dynamic_bytes: u32) -> SmemLayout {
        let layout = k.shared_layout();
        let narrow = |x: u64| u32::try_from(x).expect("the launch check bounds shared memory");
        let mut regions: Vec<Region> = k
            .shared
            .iter()
            .zip(&layout.placements)
            .map(|(a, p)| Region {
                name: a.name.clone(),
                start: narrow(p.start),
                end: narrow(p.end),
                elem_size: a.elem.size().max(1),
                barriers: a.kind == SharedKind::Barriers,
            })
            .collect();
        let static_bytes = narrow(layout.static_bytes);
        let dynamic_base = if dynamic_bytes > 0 { narrow(layout.dynamic_base) } else { static_bytes };
        if dynamic_bytes > 0 {
            regions.push(Region {
                name: "dynamic_smem".into(),
                start: dynamic_base,
                end: dynamic_base + dynamic_bytes,
                elem_size: 1,
                barriers: false,
            });
        }
        SmemLayout { regions, static_bytes, dynamic_base, total: narrow(layout.total(dynamic_bytes)) }
    }

    /// Static allocation `i`'s start offset.
    pub fn alloc_start(&self, i: usize) -> u32 {
        self.regions[i].start
    }

    /// `(name, element index)` of a shared offset.
    pub fn name_of(&self, off: u32) -> (String, u32) {
        for r in &self.regions {
            if off >= r.start && off < r.end {
                return (r.name.clone(), (off - r.start) / r.elem_size);
            }
        }
        (format!("smem+0x{off:x}"), 0)
    }

    /// `name[index]` (+ byte offset inside the element when not aligned).
    pub fn describe(&self, off: u32) -> String {
        for r in &self.regions {
            if off >= r.start && off < r.end {
                let rel = off - r.start;
                let (i, b) = (rel / r.elem_size, rel % r.elem_size);
                return if b == 0 { format!("`{}[{i}]`", r.name) } else { format!("`{}[{i}]`+{b}", r.name) };
            }
        }
        format!("smem+0x{off:x}")
    }
}
