//! Simulated memory: the global arena (buffers at fake device addresses) and the shared
//! memory layout of a kernel (names for addresses in findings and traces).

use phaser_codegen::ir::{Kernel, SharedKind};

/// Fake device address of buffer 0; buffer `i` lives at `GLOBAL_BASE + i * BUFFER_SPACING`.
pub const GLOBAL_BASE: u64 = 0x7000_0000_0000;
/// Address space per buffer (1 TiB): an index far past a buffer's end lands in no buffer (a
/// finding), never in the next one, and buffers over 4 GiB are addressed in full.
pub const BUFFER_SPACING_BITS: u32 = 40;
/// Fake generic address of kernel parameter 0 (tensor maps are read from there); parameter
/// `i` is at [`param_addr`]`(i)`.
pub const PARAM_BASE: u64 = 0x6000_0000_0000;
/// Distance between the fake addresses of two kernel parameters: more than the largest
/// parameter (a 128-byte tensor map), so a slot's address names exactly one parameter.
pub const PARAM_SLOT_BYTES: u64 = 256;
/// A `.shared::cluster` address is `((rank + 1) << CLUSTER_SHIFT) | offset`
/// ([`cluster_shared_addr`]); a plain `.shared::cta` offset (high bits zero) names the
/// executing CTA.
pub const CLUSTER_SHIFT: u32 = 24;
/// The offset bits of a shared address, below the cluster rank (`0xFF_FFFF`): shared memory
/// offsets of one CTA stay under 16 MiB.
pub const SHARED_OFFSET_MASK: u32 = (1 << CLUSTER_SHIFT) - 1;

/// The fake generic address of kernel parameter `i`.
pub fn param_addr(i: usize) -> u64 {
    PARAM_BASE + i as u64 * PARAM_SLOT_BYTES
}

/// Whether `a` and `b` are global addresses in one buffer's address range.
pub fn same_buffer(a: u64, b: u64) -> bool {
    let slot = |x: u64| x.checked_sub(GLOBAL_BASE).map(|r| r >> BUFFER_SPACING_BITS);
    slot(a).is_some() && slot(a) == slot(b)
}

/// The parameter whose slot starts at `addr` (`None`: no slot starts there).
pub fn param_index(addr: u64) -> Option<usize> {
    addr.checked_sub(PARAM_BASE).filter(|r| r % PARAM_SLOT_BYTES == 0).map(|r| (r / PARAM_SLOT_BYTES) as usize)
}

/// The `.shared::cluster` address of `offset` in the CTA of cluster rank `rank`.
pub fn cluster_shared_addr(rank: u32, offset: u32) -> u64 {
    ((rank as u64 + 1) << CLUSTER_SHIFT) | offset as u64
}

/// A buffer in the simulator's global memory: the device it belongs to, a fake device
/// address and a length in bytes. Dropping it frees its bytes (not its address: a stale
/// address names no buffer, so a late access through it is a finding, never another
/// buffer's data).
#[derive(Debug)]
pub struct SimBuffer {
    pub(crate) device: u64,
    /// The device's index in its system, and the system (`sim/system.rs`).
    pub(crate) ordinal: u32,
    pub(crate) system: u64,
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
#[derive(Clone, Default)]
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
        let addr = GLOBAL_BASE + ((self.bufs.len() as u64) << BUFFER_SPACING_BITS);
        self.bufs.push(vec![0; bytes]);
        self.live_bytes += bytes as u64;
        addr
    }
    /// Free the buffer at `addr` (its start address); a second free does nothing.
    pub fn free(&mut self, addr: u64) {
        let Some(rel) = addr.checked_sub(GLOBAL_BASE) else { return };
        if let Some(b) = self.bufs.get_mut((rel >> BUFFER_SPACING_BITS) as usize) {
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
        let idx = (rel >> BUFFER_SPACING_BITS) as usize;
        let off = (rel & ((1 << BUFFER_SPACING_BITS) - 1)) as usize;
        let b = self.bufs.get(idx)?;
        (off.checked_add(len)? <= b.len()).then_some((idx, off))
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
            Some(rel) if ((rel >> BUFFER_SPACING_BITS) as usize) < self.bufs.len() => {
                let i = (rel >> BUFFER_SPACING_BITS) as usize;
                let off = rel & ((1 << BUFFER_SPACING_BITS) - 1);
                let len = self.bufs[i].len();
                if off as usize >= len {
                    format!("buffer #{i} byte {off} (past the end of its {len} bytes)")
                } else {
                    format!("buffer #{i} byte {off} (of {len})")
                }
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
/// [`phaser_codegen::arch::SharedLayout`] (the layout the printer and the CUDA launch use),
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
            .shared()
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
            // The tiles placed in the window by name (the first region holding an offset names
            // it), the rest of the window as raw bytes.
            regions.extend(k.dynamic().iter().map(|d| Region {
                name: d.name.clone(),
                start: dynamic_base + d.offset,
                end: dynamic_base + d.offset + d.bytes,
                elem_size: d.elem.size().max(1),
                barriers: false,
            }));
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

    /// The region an offset lies in, or else the nearest region below it (an index past
    /// that array's end: `empty[4]` of a 4-barrier array), with whether it is inside.
    fn region_for(&self, off: u32) -> Option<(&Region, bool)> {
        if let Some(r) = self.regions.iter().find(|r| off >= r.start && off < r.end) {
            return Some((r, true));
        }
        self.regions.iter().filter(|r| r.start <= off).max_by_key(|r| r.start).map(|r| (r, false))
    }

    /// `(name, element index)` of a shared offset (past the end of the array below it when
    /// it lies in no array).
    pub fn name_of(&self, off: u32) -> (String, u32) {
        match self.region_for(off) {
            Some((r, _)) => (r.name.clone(), (off - r.start) / r.elem_size),
            None => (format!("smem+0x{off:x}"), 0),
        }
    }

    /// `name[index]` (+ byte offset inside the element when not aligned), saying so when the
    /// index is past the array's end.
    pub fn describe(&self, off: u32) -> String {
        match self.region_for(off) {
            Some((r, inside)) => {
                let rel = off - r.start;
                let (i, b) = (rel / r.elem_size, rel % r.elem_size);
                let mut s = if b == 0 { format!("`{}[{i}]`", r.name) } else { format!("`{}[{i}]`+{b}", r.name) };
                if !inside {
                    let n = (r.end - r.start) / r.elem_size;
                    s.push_str(&format!(" (past the end of `{}`, which has {n} elements)", r.name));
                }
                s
            }
            None => format!("smem+0x{off:x}"),
        }
    }

    /// Whether `off` lies past the end of an array (in no region of the layout).
    pub fn outside_every_array(&self, off: u32) -> bool {
        !self.regions.iter().any(|r| off >= r.start && off < r.end)
    }

    /// Barriers of barrier arrays per CTA (each gets a dense slot).
    pub fn barrier_slots(&self) -> usize {
        self.regions.iter().filter(|r| r.barriers).map(|r| ((r.end - r.start) / 8) as usize).sum()
    }

    /// The dense slot of the barrier at `off`, if it is an element of a barrier array.
    #[inline]
    pub fn barrier_slot(&self, off: u32) -> Option<u32> {
        let mut slot = 0u32;
        for r in self.regions.iter().filter(|r| r.barriers) {
            if off >= r.start && off < r.end {
                return (off - r.start).is_multiple_of(8).then_some(slot + (off - r.start) / 8);
            }
            slot += (r.end - r.start) / 8;
        }
        None
    }

    /// The offset of dense barrier slot `slot`.
    pub fn barrier_offset(&self, slot: usize) -> u32 {
        let mut first = 0usize;
        for r in self.regions.iter().filter(|r| r.barriers) {
            let n = ((r.end - r.start) / 8) as usize;
            if slot < first + n {
                return r.start + ((slot - first) * 8) as u32;
            }
            first += n;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_far_past_a_buffer_lands_in_no_buffer() {
        let mut m = GlobalMemory::default();
        let a = m.alloc(64);
        let b = m.alloc(64);
        assert!(m.load(a + 60, 4).is_some());
        assert!(m.load(a + 64, 4).is_none(), "one past the end");
        // 4 GiB past `a` was `b` when buffers were 4 GiB apart.
        assert!(m.load(a + (1 << 32), 4).is_none());
        assert!(m.load(b, 4).is_some());
        assert!(m.describe(a + (1 << 32)).contains("past the end"), "{}", m.describe(a + (1 << 32)));
        assert!(m.load(u64::MAX - 2, 4).is_none(), "no overflow at the top of the address space");
    }

    #[test]
    fn a_buffer_over_4_gib_is_addressed_in_full() {
        // Zeroed allocations are mapped lazily: this touches two pages, not 5 GiB.
        let mut m = GlobalMemory::default();
        let big = m.alloc((5usize << 30) + 16);
        let small = m.alloc(16);
        let far = big + (5u64 << 30);
        assert!(m.store(far, 4, 0xABCD));
        assert_eq!(m.load(far, 4), Some(0xABCD));
        assert_eq!(m.load(small, 4), Some(0), "the write past 4 GiB stays in its own buffer");
    }

    proptest::proptest! {
        #[test]
        fn a_parameter_slot_names_exactly_one_parameter(i in 0usize..1 << 20, inside in 1u64..PARAM_SLOT_BYTES) {
            proptest::prop_assert_eq!(param_index(param_addr(i)), Some(i));
            proptest::prop_assert_eq!(param_index(param_addr(i) + inside), None);
        }

        #[test]
        fn a_cluster_address_keeps_its_rank_and_offset(rank in 0u32..64, offset in 0u32..=SHARED_OFFSET_MASK) {
            let a = cluster_shared_addr(rank, offset);
            proptest::prop_assert_eq!(a as u32 & SHARED_OFFSET_MASK, offset);
            proptest::prop_assert_eq!(a >> CLUSTER_SHIFT, rank as u64 + 1);
        }
    }

    #[test]
    fn the_address_encodings() {
        assert_eq!(SHARED_OFFSET_MASK, 0xFF_FFFF);
        assert_eq!(param_addr(2), 0x6000_0000_0200);
        assert_eq!(param_index(PARAM_BASE - 1), None, "below the first slot");
    }
}
