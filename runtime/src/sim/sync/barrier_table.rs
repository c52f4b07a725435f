//! The mbarriers of one CTA: elements of barrier arrays live in dense slots (found by offset
//! in O(arrays)); a barrier anywhere else (`barrier_at_addr` on a data array) in a short list.

use crate::sim::engine::memory::SmemLayout;
use crate::sim::sync::barrier::Barrier;

pub struct BarrierTable {
    slots: Vec<Barrier>,
    other: Vec<(u32, Barrier)>,
}

impl BarrierTable {
    pub fn new(layout: &SmemLayout) -> BarrierTable {
        BarrierTable { slots: vec![Barrier::default(); layout.barrier_slots()], other: Vec::new() }
    }

    /// The barrier at `off` if it was ever initialized (or is a barrier-array element).
    #[inline]
    pub fn get(&self, layout: &SmemLayout, off: u32) -> Option<&Barrier> {
        match layout.barrier_slot(off) {
            Some(s) => self.slots.get(s as usize),
            None => self.other.iter().find(|(o, _)| *o == off).map(|(_, b)| b),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, layout: &SmemLayout, off: u32) -> Option<&mut Barrier> {
        match layout.barrier_slot(off) {
            Some(s) => self.slots.get_mut(s as usize),
            None => self.other.iter_mut().find(|(o, _)| *o == off).map(|(_, b)| b),
        }
    }

    /// The barrier at `off`, created uninitialized when new.
    pub fn entry(&mut self, layout: &SmemLayout, off: u32) -> &mut Barrier {
        if let Some(s) = layout.barrier_slot(off) {
            return &mut self.slots[s as usize];
        }
        let i = match self.other.iter().position(|(o, _)| *o == off) {
            Some(i) => i,
            None => {
                self.other.push((off, Barrier::default()));
                self.other.len() - 1
            }
        };
        &mut self.other[i].1
    }

    /// Every barrier that was initialized at some point, by offset.
    pub fn used(&self, layout: &SmemLayout) -> Vec<(u32, &Barrier)> {
        let mut v: Vec<(u32, &Barrier)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, b)| b.inited || b.invalidated)
            .map(|(s, b)| (layout.barrier_offset(s), b))
            .chain(self.other.iter().map(|(o, b)| (*o, b)))
            .collect();
        v.sort_by_key(|(o, _)| *o);
        v
    }
}
