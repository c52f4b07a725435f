//! Typed shared-memory tiles: multi-dimensional arrays laid out row-major or the way a TMA
//! copy with 32/64/128-byte swizzling writes them, so `tile[r][c]` addresses the element
//! the TMA put there. The swizzled layout is [`SmemTile`]'s (one swizzle function, in
//! `arch::swizzle`): the columns are cut into blocks one swizzle row wide, and the 16-byte
//! chunks of every 8 rows are permuted.
//!
//! Tiles live in the dynamic shared-memory window: the builder places them in declaration
//! order at their alignment (1024 bytes for 128-byte swizzling, at least 128 for TMA), and a
//! launch without an explicit dynamic size gets exactly what they need.
//!
//! Indexing with fewer indices than the rank gives a sub-tile (`tile[stage]` of a
//! `[stages, rows, cols]` ring), whose start may be a runtime value; a TMA copy needs the
//! start aligned, which the builder checks from the strides.

use super::handles::*;
use super::kernel_builder::KernelBuilder;
use crate::arch::limits::TMA_MAX_BOX_DIM;
use crate::arch::swizzle::Swizzle;
use crate::ir::*;

/// How a tile's elements are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileLayout {
    /// Dense, innermost dimension contiguous (what a TMA copy without swizzling writes).
    RowMajor,
    /// The layout of a TMA copy with this swizzle (32, 64 or 128 bytes; never `None`).
    Swizzled(Swizzle),
}

impl TileLayout {
    /// The layout a TMA copy with `swizzle` writes.
    pub const fn of_swizzle(swizzle: Swizzle) -> TileLayout {
        match swizzle {
            Swizzle::None => TileLayout::RowMajor,
            s => TileLayout::Swizzled(s),
        }
    }
    /// The TMA swizzle mode that writes this layout.
    pub fn swizzle(self) -> Swizzle {
        match self {
            TileLayout::RowMajor => Swizzle::None,
            TileLayout::Swizzled(s) => s,
        }
    }
    /// Alignment of the tile's start: the swizzle pattern's repeat (1024 bytes for 128-byte
    /// swizzling), and at least the 128 bytes a TMA shared operand needs.
    pub fn align(self) -> u32 {
        match self {
            TileLayout::RowMajor => 128,
            TileLayout::Swizzled(s) => s.repeat_bytes().max(128),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            TileLayout::RowMajor => "row-major",
            TileLayout::Swizzled(s) => s.name(),
        }
    }
}

/// Most dimensions a tile has (a TMA box has at most 5).
pub const MAX_TILE_RANK: usize = 5;

/// A tile, or a sub-tile of one: `dims[..rank]` (outermost first) of `base.elem`s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedTile {
    /// The whole allocation's start and element type.
    pub base: SharedArray,
    pub layout: TileLayout,
    dims: [u32; MAX_TILE_RANK],
    rank: u8,
    /// Unswizzled byte stride of each dimension but the innermost.
    strides: [u32; MAX_TILE_RANK],
    /// Elements per block row and bytes per block (the allocation's column blocking).
    block_cols: u32,
    block_bytes: u32,
    /// Unswizzled byte offset of this (sub-)tile from the allocation's start.
    pub offset: Value,
    /// A power of two that divides `offset` whatever the runtime indices were.
    pub offset_align: u32,
}

/// A tile's element type, shape (outermost first) and layout, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct TileShape {
    pub elem: Type,
    pub dims: Vec<u32>,
    pub layout: TileLayout,
}

impl TileShape {
    pub fn new(elem: Type, dims: &[u32], layout: TileLayout) -> TileShape {
        TileShape { elem, dims: dims.to_vec(), layout }
    }

    /// Why this tile cannot be laid out, if it cannot.
    pub fn problem(&self) -> Option<String> {
        let rank = self.dims.len();
        if !(1..=MAX_TILE_RANK).contains(&rank) {
            return Some(format!("a tile has 1 to {MAX_TILE_RANK} dimensions, not {rank}"));
        }
        if self.elem.size() == 0 {
            return Some(format!("{} has no memory form", self.elem));
        }
        if let Some(d) = self.dims.iter().position(|&d| d == 0) {
            return Some(format!("dimension {d} of {:?} is 0", self.dims));
        }
        if self.bytes_u64() > u32::MAX as u64 {
            return Some(format!("{:?} of {} is {} bytes", self.dims, self.elem, self.bytes_u64()));
        }
        if let TileLayout::Swizzled(s) = self.layout {
            let row = s.row_bytes() as u64;
            let inner = *self.dims.last().expect("rank >= 1") as u64 * self.elem.size() as u64;
            if rank < 2 {
                return Some(format!("a {}d tile has rows of {row} bytes: give it at least 2 dimensions", s.name()));
            }
            if self.elem.size() > 16 || !inner.is_multiple_of(row) {
                return Some(format!(
                    "with {} the rows of a tile are {row} bytes ({} {}s) or a multiple of that, but the innermost \
                     dimension is {} elements ({inner} bytes)",
                    s.name(),
                    row / self.elem.size() as u64,
                    self.elem,
                    self.dims[rank - 1]
                ));
            }
        }
        None
    }

    fn bytes_u64(&self) -> u64 {
        self.dims.iter().fold(self.elem.size() as u64, |b, &d| b.saturating_mul(d as u64))
    }

    /// Bytes of the tile.
    pub fn bytes(&self) -> u32 {
        u32::try_from(self.bytes_u64()).unwrap_or(u32::MAX)
    }

    /// Elements per block row and bytes of one column block of the innermost `[rows, cols]`
    /// matrix. A swizzled tile of rank 3 or more is a stack of such matrices (`[stages, rows,
    /// cols]`), each laid out as its own TMA copies write it; when a row is one block wide,
    /// the stack is also its outer dimensions flattened into rows (`[2, 64, 64]` of bf16 is
    /// the bytes of `[128, 64]`).
    fn blocking(&self) -> (u32, u32) {
        let cols = *self.dims.last().unwrap_or(&1);
        match self.layout {
            TileLayout::RowMajor => (cols, self.bytes()),
            TileLayout::Swizzled(s) => {
                let bc = (s.row_bytes() / self.elem.size().max(1)).max(1);
                let rows = if self.dims.len() >= 2 { self.dims[self.dims.len() - 2] } else { 1 };
                (bc, rows.saturating_mul(s.row_bytes()))
            }
        }
    }

    /// The handle of this shape at `base` (no checks).
    fn handle(&self, base: SharedArray) -> SharedTile {
        let rank = self.dims.len().min(MAX_TILE_RANK);
        let mut dims = [1u32; MAX_TILE_RANK];
        dims[..rank].copy_from_slice(&self.dims[..rank]);
        let (block_cols, block_bytes) = self.blocking();
        let pitch = block_cols * self.elem.size();
        let mut strides = [0u32; MAX_TILE_RANK];
        if rank >= 2 {
            strides[rank - 2] = pitch;
            // The outer dimensions step over whole `[rows, cols]` matrices (all their blocks).
            let matrix = dims[rank - 2].saturating_mul(dims[rank - 1]).saturating_mul(self.elem.size());
            for d in (0..rank - 2).rev() {
                strides[d] = if d == rank - 3 { matrix } else { strides[d + 1].saturating_mul(dims[d + 1]) };
            }
        }
        SharedTile {
            base,
            layout: self.layout,
            dims,
            rank: rank as u8,
            strides,
            block_cols,
            block_bytes,
            offset: Value::u32(0),
            offset_align: self.layout.align(),
        }
    }

    /// The [`SmemTile`] of a 2-dimensional swizzled tile (the wgmma descriptor's view).
    pub fn smem_tile(&self) -> Option<SmemTile> {
        match (self.layout, &self.dims[..]) {
            (TileLayout::Swizzled(s), &[rows, cols]) => Some(SmemTile::new(self.elem.size(), rows, cols, s)),
            _ => None,
        }
    }
}

/// The largest power of two dividing `x` (`u32::MAX`-capped for 0: any alignment).
fn pow2_factor(x: u64) -> u32 {
    if x == 0 {
        1 << 31
    } else {
        1u32 << x.trailing_zeros().min(31)
    }
}

impl SharedTile {
    pub fn elem(&self) -> Type {
        self.base.elem
    }
    pub fn rank(&self) -> usize {
        self.rank as usize
    }
    /// The (sub-)tile's shape, outermost first.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.rank as usize]
    }
    /// Elements of the (sub-)tile.
    pub fn len(&self) -> u32 {
        self.dims().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of the (sub-)tile: what a TMA copy of it moves, and what `expect_tx` registers.
    pub fn bytes(&self) -> u32 {
        self.len().saturating_mul(self.elem().size())
    }
    /// Column blocks (TMA boxes side by side) of a swizzled tile; 1 otherwise.
    pub fn blocks(&self) -> u32 {
        let cols = self.dims()[self.rank() - 1];
        cols.div_ceil(self.block_cols.max(1))
    }

    /// The TMA box that fills one block of this tile, innermost first (TMA order).
    pub fn tma_box(&self) -> Vec<u32> {
        let mut b: Vec<u32> = self.dims().iter().rev().copied().collect();
        b[0] = b[0].min(self.block_cols);
        b
    }

    /// The (sub-)tile as the [`SmemTile`] a wgmma descriptor describes (`MmaOperand::new(t,
    /// Major::K)`): a swizzled (sub-)tile whose rows are one swizzle row apart, starting on the
    /// swizzle's repeat (its start is `T.tile_addr`-able: [`Self::offset`]). A tile of rank 3
    /// or more is its outer dimensions flattened into rows (its rows are exactly one swizzle
    /// row, so `[2, 64, 64]` of bf16 is the bytes of `[128, 64]`): a ring stage split into the
    /// slabs of several warpgroups is, as a whole, one operand.
    pub fn smem_tile(&self) -> Option<SmemTile> {
        let TileLayout::Swizzled(s) = self.layout else { return None };
        let aligned = self.offset_align.is_multiple_of(s.repeat_bytes());
        let r = self.rank();
        let rows = self.dims[..r.saturating_sub(1)].iter().try_fold(1u32, |a, &d| a.checked_mul(d))?;
        // Rows flatten only when each is one block: a stack of wider matrices is no one operand.
        (r >= 2 && self.strides[r - 2] == s.row_bytes() && aligned && (r == 2 || self.blocks() == 1))
            .then(|| SmemTile::new(self.elem().size(), rows, self.dims[r - 1], s))
    }

    /// The TMA box of one block, innermost first, for a map of `rank` dimensions: a tile of
    /// higher rank has its outer dimensions flattened (the layout of a swizzled tile of rank 3
    /// or more is its rows; a row-major tile is dense), so a `[2, 64, 64]` stage of two
    /// 64-row slabs is one `{64, 128}` box.
    pub fn tma_box_for_rank(&self, rank: usize) -> Vec<u32> {
        let mut b = self.tma_box();
        while b.len() > rank.max(1) {
            let outer = b.pop().unwrap_or(1);
            if let Some(last) = b.last_mut() {
                *last = last.saturating_mul(outer);
            }
        }
        b.resize(rank.max(b.len()), 1);
        b
    }

    /// Unswizzled byte offset of element `idx` (one index per dimension) from this
    /// (sub-)tile's start.
    fn linear(&self, idx: &[u32]) -> u64 {
        let r = self.rank();
        let mut off = 0u64;
        for (d, &i) in idx.iter().enumerate().take(r - 1) {
            off += i as u64 * self.strides[d] as u64;
        }
        let c = idx[r - 1];
        let bc = self.block_cols.max(1);
        off + (c / bc) as u64 * self.block_bytes as u64 + (c % bc) as u64 * self.elem().size() as u64
    }

    /// Byte offset from the allocation's start of element `idx` of a tile at a constant
    /// offset: where the TMA copy put it (`None` when the offset is a runtime value).
    pub fn byte_offset(&self, idx: &[u32]) -> Option<u32> {
        let start = self.offset.as_imm_i128()? as u64;
        let unswizzled = u32::try_from(start + self.linear(idx)).ok()?;
        Some(self.layout.swizzle().apply(unswizzled))
    }
}

impl KernelBuilder {
    /// `T.alloc_shared::<T>([d0, d1, ..], layout)`: a tile in the dynamic window, named `name`.
    #[track_caller]
    pub fn alloc_tile(&mut self, name: &str, shape: &TileShape) -> SharedTile {
        if let Some(p) = shape.problem() {
            self.error(format!("tile `{name}`: {p}"));
            let fallback = TileShape::new(Type::U32, &[1], TileLayout::RowMajor);
            return fallback.handle(SharedArray {
                base: SharedBase::Dynamic { offset: 0 },
                elem: Type::U32,
                len: None,
            });
        }
        let align = shape.layout.align();
        let offset = crate::arch::shared_layout::next_dynamic_offset(&self.dynamic, align);
        let bytes = shape.bytes();
        let offset = match u32::try_from(offset) {
            Ok(o) if o.checked_add(bytes).is_some() => o,
            _ => {
                self.error(format!("tile `{name}` would start past 4 GiB of shared memory"));
                0
            }
        };
        let mut unique = name.to_string();
        let mut n = 1;
        while self.dynamic.iter().any(|d| d.name == unique) || self.shared.iter().any(|a| a.name == unique) {
            unique = format!("{name}_{n}");
            n += 1;
        }
        let loc = Some(self.here());
        self.dynamic.push(DynamicAlloc { name: unique, elem: shape.elem, offset, bytes, align, loc });
        self.uses_dynamic_shared = true;
        let base = SharedArray {
            base: SharedBase::Dynamic { offset },
            elem: shape.elem,
            len: Some(shape.dims.iter().product()),
        };
        shape.handle(base)
    }

    /// An index as a `u32` operand, checked against `extent` when it is a constant.
    #[track_caller]
    fn tile_index(&mut self, what: &str, idx: Value, extent: u32) -> Value {
        if let Some(i) = idx.as_imm_i128() {
            if i < 0 || i >= extent as i128 {
                self.error(format!("index {i} is out of bounds for {what} of extent {extent}"));
            }
            return Value::u32(i.clamp(0, u32::MAX as i128) as u32);
        }
        if !idx.ty().is_int() {
            self.error(format!("an index must be an integer, found {}", idx.ty()));
            return Value::u32(0);
        }
        if idx.ty() == Type::U32 {
            idx
        } else {
            self.cvt(idx, Type::U32)
        }
    }

    /// `tile[i]` of a tile of rank 2 or more: the sub-tile at index `i` of the outermost
    /// dimension (its start may be a runtime value).
    #[track_caller]
    pub fn tile_at(&mut self, tile: SharedTile, i: Value) -> SharedTile {
        if tile.rank() < 2 {
            self.error("indexing a 1-dimensional tile gives an element, not a sub-tile (`ld_tile`/`st_tile`)");
            return tile;
        }
        let i = self.tile_index("the tile's outer dimension", i, tile.dims[0]);
        let stride = tile.strides[0];
        let step = self.mul(i, Value::u32(stride));
        let offset = if tile.offset == Value::u32(0) { step } else { self.add(tile.offset, step) };
        let align = match i.as_imm_i128() {
            Some(c) => pow2_factor(c as u64 * stride as u64),
            None => pow2_factor(stride as u64),
        };
        let mut sub = tile;
        sub.dims.copy_within(1.., 0);
        sub.strides.copy_within(1.., 0);
        sub.dims[MAX_TILE_RANK - 1] = 1;
        sub.rank -= 1;
        sub.offset = offset;
        sub.offset_align = tile.offset_align.min(align);
        sub
    }

    /// The 32-bit shared address of the tile's start.
    #[track_caller]
    pub fn tile_addr(&mut self, tile: SharedTile) -> Value {
        let base = self.shared_base_addr(tile.base);
        self.add(base, tile.offset)
    }

    /// The 32-bit shared address of element `c` of a 1-dimensional (sub-)tile, swizzle applied.
    #[track_caller]
    pub fn tile_elem_addr(&mut self, tile: SharedTile, c: Value) -> Value {
        let off = self.tile_elem_offset(tile, c);
        let base = self.shared_base_addr(tile.base);
        self.add(base, off)
    }

    /// The byte offset from the allocation's start of element `c` of a 1-dimensional
    /// (sub-)tile, swizzle applied: [`SharedTile::byte_offset`] as instructions (folded to a
    /// constant when the indices are constants).
    #[track_caller]
    pub fn tile_elem_offset(&mut self, tile: SharedTile, c: Value) -> Value {
        if tile.rank() != 1 {
            self.error(format!("an element of a {}-dimensional tile needs {} indices", tile.rank(), tile.rank()));
        }
        self.at_caller(|k| {
            let cols = tile.dims[tile.rank() - 1];
            let c = k.tile_index("the tile's innermost dimension", c, cols);
            let elem = tile.elem().size();
            let column = if tile.blocks() <= 1 {
                k.mul(c, Value::u32(elem))
            } else {
                // Blocks are a power of two wide (a swizzle row / a power-of-two element size).
                let bc = tile.block_cols;
                let block = k.shr(c, Value::u32(bc.trailing_zeros()));
                let in_block = k.and(c, Value::u32(bc - 1));
                let a = k.mul(block, Value::u32(tile.block_bytes));
                let b = k.mul(in_block, Value::u32(elem));
                k.add(a, b)
            };
            let off = k.add(tile.offset, column);
            match tile.layout {
                TileLayout::RowMajor => off,
                TileLayout::Swizzled(s) => {
                    // `Swizzle::apply`, as instructions: bits [4, 4+B) ^= bits [7, 7+B).
                    let x = k.shr(off, Value::u32(3));
                    let x = k.and(x, Value::u32(((1 << s.xor_bits()) - 1) << 4));
                    k.xor(off, x)
                }
            }
        })
    }

    /// Load element `c` of a 1-dimensional (sub-)tile.
    #[track_caller]
    pub fn ld_tile(&mut self, tile: SharedTile, c: Value) -> Value {
        let addr = self.tile_elem_addr(tile, c);
        self.ld_raw(Space::Shared, tile.elem(), addr, 0)
    }

    /// Store `v` into element `c` of a 1-dimensional (sub-)tile.
    #[track_caller]
    pub fn st_tile(&mut self, tile: SharedTile, c: Value, v: Value) {
        let v = if v.ty() == tile.elem() {
            v
        } else if matches!(v, Value::Imm { .. }) && !tile.elem().is_half() {
            super::arith::retype_imm(v, tile.elem())
        } else {
            self.error(format!("cannot store a {} into a tile of {}; convert with `as`", v.ty(), tile.elem()));
            v
        };
        let addr = self.tile_elem_addr(tile, c);
        self.st_raw(Space::Shared, addr, 0, v);
    }

    /// A tensor map parameter whose element type, box and swizzle the kernel declares: typed
    /// tile copies are checked against it at build time, the map a launch passes at launch.
    #[track_caller]
    pub fn param_tensor_map_with(&mut self, name: &str, rank: u8, mut spec: TensorMapSpec) -> TensorMapRef {
        let t = self.param_tensor_map(name, rank);
        if let Some(b) = &spec.box_dims {
            if b.len() != rank as usize {
                self.error(format!("tensor map `{name}`: a box of {} dimensions for a rank-{rank} map", b.len()));
            }
            if let Some(d) = b.iter().position(|&x| x == 0 || x > TMA_MAX_BOX_DIM) {
                self.error(format!(
                    "tensor map `{name}`: box dimension {d} (innermost first) is {}; TMA boxes are 1..={TMA_MAX_BOX_DIM}",
                    b[d]
                ));
            }
        }
        spec.declared = true;
        spec.loc = Some(self.here());
        if let Some(p) = self.params.last_mut() {
            p.tma = Some(spec);
        }
        t
    }

    /// The declared box's bytes of a tensor map parameter (`map.box_bytes()`).
    #[track_caller]
    pub fn tensor_map_box_bytes(&mut self, tmap: TensorMapRef) -> u32 {
        let spec = self.map_param(tmap).and_then(|i| self.params[i].tma.clone());
        match spec.and_then(|s| s.box_bytes()) {
            Some(b) => b,
            None => {
                self.error("this tensor map declares no element type and box: declare them with the parameter");
                0
            }
        }
    }

    /// The element type of a tensor map parameter, when declared or implied by a typed tile.
    pub(crate) fn map_elem(&self, tmap: TensorMapRef) -> Option<Type> {
        self.map_param(tmap).and_then(|i| self.params[i].tma.as_ref()?.elem)
    }

    fn map_param(&self, tmap: TensorMapRef) -> Option<usize> {
        let r = tmap.addr.as_reg()?;
        self.params.iter().position(|p| p.reg == r && matches!(p.kind, ParamKind::TensorMap { .. }))
    }

    /// Check a tile copy against the map's expectation, or make the tile the expectation.
    #[track_caller]
    fn match_map(&mut self, tmap: TensorMapRef, tile: &SharedTile, what: &str) {
        let tile_box = tile.tma_box_for_rank(tmap.rank as usize);
        let Some(i) = self.map_param(tmap) else { return };
        let (elem, swizzle) = (tile.elem(), tile.layout.swizzle());
        let name = self.params[i].name.clone();
        match self.params[i].tma.clone() {
            Some(spec) => {
                if spec.box_dims.is_none() || spec.swizzle.is_none() || spec.elem.is_none() {
                    // What the declaration left open, the tile fills in (and the launch checks).
                    let loc = Some(self.here());
                    let filled = TensorMapSpec {
                        elem: spec.elem.or(Some(elem)),
                        box_dims: spec.box_dims.clone().or(Some(tile_box.clone())),
                        swizzle: spec.swizzle.or(Some(swizzle)),
                        declared: false,
                        loc,
                    };
                    self.params[i].tma = Some(filled);
                }
                if let Some(m) = spec.mismatch(elem, &tile_box, swizzle) {
                    let from = match (spec.declared, spec.loc) {
                        (true, _) => "declares".to_string(),
                        (false, Some(l)) => format!("was used at {l} with"),
                        (false, None) => "was used with".to_string(),
                    };
                    self.error(format!(
                        "{what}: the tile does not match tensor map `{name}`: {m} (the map {from} {})",
                        spec.describe()
                    ));
                }
            }
            None => {
                let loc = Some(self.here());
                self.params[i].tma = Some(TensorMapSpec {
                    elem: Some(elem),
                    box_dims: Some(tile_box),
                    swizzle: Some(swizzle),
                    declared: false,
                    loc,
                });
            }
        }
    }

    /// Checks shared by TMA copies of tiles: alignment, box limits, the coordinates' count.
    #[track_caller]
    fn tile_copy_checks(&mut self, what: &str, tile: &SharedTile, tmap: TensorMapRef, coords: &[Value]) {
        let need = tile.layout.align();
        if !tile.offset_align.is_multiple_of(need) {
            self.error(format!(
                "{what}: the sub-tile starts at a multiple of {} bytes only, but a {} TMA copy needs {need}-byte \
                 alignment (index the tile by its outermost dimensions only)",
                tile.offset_align,
                tile.layout.name()
            ));
        }
        let tile_box = tile.tma_box_for_rank(tmap.rank as usize);
        if let Some(d) = tile_box.iter().position(|&x| x > TMA_MAX_BOX_DIM) {
            self.error(format!(
                "{what}: the tile's box {tile_box:?} (innermost first) has dimension {d} above {TMA_MAX_BOX_DIM}"
            ));
        }
        if tile.blocks() > 1 && !pow2_factor(tile.block_bytes as u64).is_multiple_of(need) {
            self.error(format!(
                "{what}: the tile's column blocks are {} bytes apart, not a multiple of the {need} bytes a {} TMA \
                 copy needs (give it a multiple of 8 rows)",
                tile.block_bytes,
                tile.layout.name()
            ));
        }
        if tile.rank() > 2 && tile.blocks() > 1 {
            self.error(format!(
                "{what}: the tile {:?} is a stack of matrices {} blocks wide, which no one box per block \
                 describes: copy each matrix (index the tile down to 2 dimensions, e.g. `ring[stage]`)",
                tile.dims(),
                tile.blocks()
            ));
        }
        let _ = (tmap, coords); // the coordinates' count is checked by the copy itself
    }

    /// TMA copies of each column block of `tile`: `(shared address, coordinates innermost first)`.
    #[track_caller]
    fn tile_blocks(&mut self, tile: &SharedTile, coords: &[Value]) -> Vec<(Value, Vec<Value>)> {
        let start = self.tile_addr(*tile);
        let inner: Vec<Value> = coords.iter().rev().copied().collect();
        (0..tile.blocks())
            .map(|b| {
                let dst = self.add(start, Value::u32(b * tile.block_bytes));
                let mut c = inner.clone();
                if let Some(c0) = c.first_mut() {
                    if b > 0 {
                        let step = Value::imm_u((b * tile.block_cols) as u64, c0.ty());
                        *c0 = self.add(*c0, step);
                    }
                }
                (dst, c)
            })
            .collect()
    }

    /// `T.tma.load(tile, map, [outer.., inner], bar)`: TMA copies of the box at `coords`
    /// (outermost first, like the tile's indices) into `tile`, one per column block, completing
    /// `tile.bytes()` on `bar`. The map must describe the tile's element type, box and swizzle.
    #[track_caller]
    pub fn tma_load_tile(&mut self, tile: SharedTile, tmap: TensorMapRef, coords: &[Value], bar: Barrier) {
        self.at_caller(|k| {
            k.tile_copy_checks("TMA load", &tile, tmap, coords);
            k.match_map(tmap, &tile, "TMA load");
            for (dst, c) in k.tile_blocks(&tile, coords) {
                k.tma_load(dst, tmap, &c, bar);
            }
        })
    }

    /// `T.tma.load_multicast(tile, map, coords, bar, cta_mask)`: [`Self::tma_load_tile`] into
    /// `tile` of every CTA of the cluster in the 16-bit `cta_mask` (the same shared offset;
    /// each CTA's copy of `bar` completes the bytes that land there).
    #[track_caller]
    pub fn tma_load_tile_multicast(
        &mut self,
        tile: SharedTile,
        tmap: TensorMapRef,
        coords: &[Value],
        bar: Barrier,
        cta_mask: Value,
    ) {
        self.at_caller(|k| {
            k.tile_copy_checks("TMA multicast load", &tile, tmap, coords);
            k.match_map(tmap, &tile, "TMA multicast load");
            for (dst, c) in k.tile_blocks(&tile, coords) {
                k.tma_load_multicast(dst, tmap, &c, bar, cta_mask);
            }
        })
    }

    /// `T.tma.store(map, [outer.., inner], tile)`: TMA copies of `tile` to the box at
    /// `coords`, one per column block (completing through the bulk groups).
    #[track_caller]
    pub fn tma_store_tile(&mut self, tmap: TensorMapRef, coords: &[Value], tile: SharedTile) {
        self.at_caller(|k| {
            k.tile_copy_checks("TMA store", &tile, tmap, coords);
            k.match_map(tmap, &tile, "TMA store");
            for (src, c) in k.tile_blocks(&tile, coords) {
                k.tma_store(tmap, &c, src);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use proptest::prelude::*;

    fn swizzles() -> impl Strategy<Value = TileLayout> {
        prop_oneof![
            Just(TileLayout::RowMajor),
            Just(TileLayout::Swizzled(Swizzle::B32)),
            Just(TileLayout::Swizzled(Swizzle::B64)),
            Just(TileLayout::Swizzled(Swizzle::B128)),
        ]
    }

    /// The address `tile_elem_addr` builds, when every input is a constant, minus the base.
    fn built_offset(k: &mut KernelBuilder, t: SharedTile, idx: &[u32]) -> u32 {
        let mut sub = t;
        for &i in &idx[..idx.len() - 1] {
            sub = k.tile_at(sub, Value::u32(i));
        }
        let off = k.tile_elem_offset(sub, Value::u32(idx[idx.len() - 1]));
        off.as_imm_i128().expect("constant indices fold") as u32
    }

    proptest! {
        /// 2-D swizzled tiles address every element where `SmemTile` (the TMA layout the wgmma
        /// descriptors use) puts it, through the built instructions and the pure offset.
        #[test]
        fn swizzled_2d_is_smem_tile(
            layout in swizzles(),
            elem in prop_oneof![Just(Type::BF16), Just(Type::F32), Just(Type::U16)],
            row_groups in 1u32..5, blocks in 1u32..4, r in any::<u32>(), c in any::<u32>(),
        ) {
            let TileLayout::Swizzled(s) = layout else { return Ok(()) };
            let (rows, cols) = (row_groups * 8, blocks * s.row_bytes() / elem.size());
            let (r, c) = (r % rows, c % cols);
            let shape = TileShape::new(elem, &[rows, cols], layout);
            prop_assert_eq!(shape.problem(), None);
            let mut k = KernelBuilder::new("t", Target::Sm90a);
            let t = k.alloc_tile("t", &shape);
            let want = SmemTile::new(elem.size(), rows, cols, s).offset(r, c);
            prop_assert_eq!(t.byte_offset(&[r, c]), Some(want));
            prop_assert_eq!(built_offset(&mut k, t, &[r, c]), want);
            prop_assert_eq!(shape.smem_tile().map(|m| m.bytes()), Some(t.bytes()));
        }

        /// Row-major tiles of any rank are dense; swizzled ones of rank 3 or more are their
        /// outer dimensions flattened into rows. Sub-tiles at a constant index address the
        /// same bytes as the full index.
        #[test]
        fn higher_ranks_and_sub_tiles(
            layout in swizzles(),
            outer in proptest::collection::vec(1u32..5, 1..4),
            inner_units in 1u32..3,
            pick in any::<u64>(),
        ) {
            let elem = Type::F32;
            let inner = match layout {
                TileLayout::RowMajor => inner_units * 4,
                TileLayout::Swizzled(s) if outer.len() > 1 => s.row_bytes() / 4,
                TileLayout::Swizzled(s) => inner_units * s.row_bytes() / 4,
            };
            let mut dims = outer.clone();
            dims.push(inner);
            let shape = TileShape::new(elem, &dims, layout);
            prop_assert_eq!(shape.problem(), None, "{:?}", dims);
            let mut k = KernelBuilder::new("t", Target::Sm90a);
            let t = k.alloc_tile("t", &shape);
            let idx: Vec<u32> = dims.iter().enumerate().map(|(i, &d)| ((pick >> (8 * i)) as u32) % d).collect();
            let flat_rows: u32 = dims[..dims.len() - 1].iter().product();
            let row = dims[..dims.len() - 1].iter().zip(&idx).fold(0, |acc, (&d, &i)| acc * d + i);
            let want = match layout {
                TileLayout::RowMajor => (row * inner + idx[dims.len() - 1]) * 4,
                TileLayout::Swizzled(s) => SmemTile::new(4, flat_rows, inner, s).offset(row, idx[dims.len() - 1]),
            };
            prop_assert_eq!(t.byte_offset(&idx), Some(want));
            prop_assert_eq!(built_offset(&mut k, t, &idx), want);
        }
    }

    #[test]
    fn sub_tiles_of_a_ring_are_wgmma_operands() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let b128 = TileLayout::Swizzled(Swizzle::B128);
        let ring = k.alloc_tile("ring", &TileShape::new(Type::BF16, &[3, 128, 64], b128));
        let stage = k.param("s", Type::U32);
        let a = k.tile_at(ring, stage);
        assert_eq!(a.smem_tile(), Some(SmemTile::new(2, 128, 64, Swizzle::B128)));
        let wide = k.alloc_tile("b", &TileShape::new(Type::BF16, &[64, 256], b128));
        assert_eq!(wide.smem_tile().map(|t| t.blocks()), Some(4));
        let row = k.tile_at(a, Value::u32(1));
        assert_eq!(row.smem_tile(), None, "a row is not an operand");
        let flat = k.alloc_tile("c", &TileShape::new(Type::BF16, &[64, 64], TileLayout::RowMajor));
        assert_eq!(flat.smem_tile(), None, "wgmma's unswizzled layout is interleaved, not row-major");
    }

    #[test]
    fn higher_rank_tiles_are_their_rows_for_boxes_and_descriptors() {
        // A stage of two 64-row slabs is the bytes of one 128-row tile: one {64, 128} box for a
        // rank-2 map, one 128 x 64 wgmma operand; each slab is a 64 x 64 operand of its own.
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let b128 = TileLayout::Swizzled(Swizzle::B128);
        let ring = k.alloc_tile("ring", &TileShape::new(Type::BF16, &[4, 2, 64, 64], b128));
        let stage = k.param("s", Type::U32);
        let wg = k.param("wg", Type::U32);
        let a = k.tile_at(ring, stage);
        assert_eq!(a.tma_box_for_rank(2), vec![64, 128]);
        assert_eq!(a.tma_box_for_rank(3), vec![64, 64, 2]);
        assert_eq!(a.smem_tile(), Some(SmemTile::new(2, 128, 64, Swizzle::B128)));
        let slab = k.tile_at(a, wg);
        assert_eq!(slab.smem_tile(), Some(SmemTile::new(2, 64, 64, Swizzle::B128)));
        // The flattened tile addresses its elements where the 128-row tile does.
        let c = k.alloc_tile("c", &TileShape::new(Type::BF16, &[2, 64, 64], b128));
        let flat = SmemTile::new(2, 128, 64, Swizzle::B128);
        for (r, col) in [(0, 0), (63, 17), (64, 0), (100, 63)] {
            assert_eq!(c.byte_offset(&[r / 64, r % 64, col]), Some(flat.offset(r, col)));
        }
        // A multicast copy of the stage through a {64, 128} map: one box, the mask as u16.
        let map = k.param_tensor_map("m", 2);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        k.tma_load_tile_multicast(a, map, &[Value::u32(0), Value::u32(0)], bar, Value::u32(3));
        let kernel = k.finish().unwrap();
        let mut loads = Vec::new();
        walk_insts(kernel.body(), &mut |i, _| {
            if let Inst::Tma(TmaOp::LoadTensor { multicast, .. }) = i {
                loads.push(*multicast);
            }
        });
        assert_eq!(loads, vec![Some(Value::imm_u(3, Type::U16))]);
        let spec = kernel.params().iter().find_map(|p| p.tma.clone()).unwrap();
        assert_eq!(spec.box_dims, Some(vec![64, 128]), "the map expects the flattened box");
    }

    #[test]
    fn stacks_of_wide_matrices_are_each_their_own_multi_block_tile() {
        // A ring of [64, 128] bf16 stages: each stage is two 64-column blocks, laid out as the
        // two TMA boxes of a 2-dimensional [64, 128] tile write them, stage after stage.
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let b128 = TileLayout::Swizzled(Swizzle::B128);
        let shape = TileShape::new(Type::BF16, &[3, 64, 128], b128);
        assert_eq!(shape.problem(), None);
        let ring = k.alloc_tile("ring", &shape);
        let matrix = SmemTile::new(2, 64, 128, Swizzle::B128);
        let base = ring.byte_offset(&[0, 0, 0]).unwrap();
        for (st, r, c) in [(0, 0, 0), (0, 7, 64), (1, 0, 0), (2, 63, 127), (1, 9, 70)] {
            assert_eq!(ring.byte_offset(&[st, r, c]), Some(base + st * matrix.bytes() + matrix.offset(r, c)));
        }
        assert_eq!(ring.smem_tile(), None, "a stack of wide matrices is no one operand");
        let stage = k.param("s", Type::U32);
        let one = k.tile_at(ring, stage);
        assert_eq!(one.smem_tile(), Some(matrix), "each stage is a 64 x 128 operand (N = 128 when MN-major)");
        assert_eq!((one.blocks(), one.tma_box_for_rank(3)), (2, vec![64, 64, 1]));
        // Its copy is two boxes 64 columns apart in the map and one block apart in the tile.
        let map = k.param_tensor_map("m", 3);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        k.tma_load_tile(one, map, &[Value::u32(0), Value::u32(0), Value::u32(0)], bar);
        let kernel = k.finish().unwrap();
        let mut loads = 0;
        walk_insts(kernel.body(), &mut |i, _| {
            if let Inst::Tma(TmaOp::LoadTensor { .. }) = i {
                loads += 1;
            }
        });
        assert_eq!(loads, 2);
        // The whole stack in one copy has no box per block: refused, with the fix named.
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let ring = k.alloc_tile("ring", &shape);
        let map = k.param_tensor_map("m", 3);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        k.tma_load_tile(ring, map, &[Value::u32(0), Value::u32(0), Value::u32(0)], bar);
        let err = k.finish().unwrap_err().to_string();
        assert!(err.contains("index the tile down to 2 dimensions"), "{err}");
    }

    #[test]
    fn placement_alignment_and_bytes() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let a = k.alloc_tile("a", &TileShape::new(Type::F32, &[3, 4], TileLayout::RowMajor));
        let b = k.alloc_tile("b", &TileShape::new(Type::BF16, &[2, 64, 64], TileLayout::Swizzled(Swizzle::B128)));
        assert_eq!((a.bytes(), b.bytes()), (48, 2 * 64 * 128));
        assert_eq!(b.base.base, SharedBase::Dynamic { offset: 1024 }, "128-byte swizzling aligns to 1024");
        let stage = k.param("s", Type::U32);
        let sub = k.tile_at(b, stage);
        assert_eq!((sub.dims(), sub.bytes(), sub.offset_align), (&[64u32, 64][..], 8192, 1024));
        assert_eq!(sub.tma_box(), vec![64, 64]);
        let row = k.tile_at(sub, Value::u32(3));
        assert_eq!(row.offset_align, 128, "one row of a 128-byte swizzled tile");
        let kernel = k.finish().unwrap();
        assert_eq!(kernel.declared_dynamic_bytes(), 1024 + 2 * 8192);
        assert!(kernel.uses_dynamic_shared());
    }

    #[test]
    fn bad_tiles_and_copies_are_explained() {
        let p = |elem, dims: &[u32], l| TileShape::new(elem, dims, l).problem().unwrap_or_default();
        let b128 = TileLayout::Swizzled(Swizzle::B128);
        assert!(p(Type::BF16, &[64, 48], b128).contains("rows of a tile are 128 bytes (64 bf16s)"));
        assert_eq!(p(Type::BF16, &[2, 64, 128], b128), "", "a stack of wide matrices is a tile");
        assert!(p(Type::F32, &[0, 4], TileLayout::RowMajor).contains("dimension 0"));
        assert!(p(Type::F32, &[32], b128).contains("at least 2 dimensions"));

        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let tile = k.alloc_tile("t", &TileShape::new(Type::BF16, &[64, 64], b128));
        let spec = TensorMapSpec {
            elem: Some(Type::BF16),
            box_dims: Some(vec![64, 32]),
            swizzle: Some(Swizzle::B128),
            declared: true,
            loc: None,
        };
        let map = k.param_tensor_map_with("a", 2, spec);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        k.tma_load_tile(tile, map, &[Value::u32(0), Value::u32(0)], bar);
        let row = k.tile_at(tile, Value::u32(1));
        k.tma_load_tile(row, map, &[Value::u32(0)], bar);
        let e = k.finish().unwrap_err().to_string();
        assert!(
            e.contains("TMA load: the tile does not match tensor map `a`: box [64, 64] (rows x cols; {64, 64} innermost first), expected box [32, 64]"),
            "{e}"
        );
        assert!(e.contains("the sub-tile starts at a multiple of 128 bytes only"), "{e}");
        assert!(e.contains("rank 2 but 1 coordinates"), "{e}");
    }

    #[test]
    fn a_constant_misaligned_inner_coordinate_is_refused_at_its_line() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let spec = TensorMapSpec {
            elem: Some(Type::U32),
            box_dims: Some(vec![20, 8]),
            swizzle: Some(Swizzle::None),
            declared: true,
            loc: None,
        };
        let map = k.param_tensor_map_with("a", 2, spec);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        let x = k.param("x", Type::S32);
        let dst = Value::u32(0);
        k.tma_load(dst, map, &[Value::s32(32), Value::s32(35)], bar); // aligned: 128 bytes
        k.tma_load(dst, map, &[Value::s32(-4), Value::s32(-3)], bar); // aligned: -16 bytes
        k.tma_load(dst, map, &[x, Value::s32(3)], bar); // a runtime inner coordinate: the simulator's
        let line = line!() + 1;
        k.tma_load(dst, map, &[Value::s32(30), Value::s32(35)], bar);
        k.tma_store(map, &[Value::s32(-3), Value::s32(0)], dst);
        k.tma_prefetch(map, &[Value::s32(1), Value::s32(0)]);
        // An undeclared map's element type is unknown until a typed tile uses it.
        let open = k.param_tensor_map("b", 2);
        k.tma_load(dst, open, &[Value::s32(30), Value::s32(0)], bar);
        // A wide swizzled tile is one copy per column block, all at one line: one error.
        let wide = k.alloc_tile("w", &TileShape::new(Type::BF16, &[8, 128], TileLayout::Swizzled(Swizzle::B128)));
        let wide_line = line!() + 1;
        k.tma_load_tile(wide, open, &[Value::s32(0), Value::s32(3)], bar);
        let e = k.finish().unwrap_err();
        let msgs: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        let file = file!();
        assert!(msgs[0].contains(&format!("{file}:{line}")), "{}", msgs[0]);
        assert!(
            msgs[0].contains("the innermost tensor coordinate 30 (of u32, 4 bytes each) is 120 bytes, not a multiple of 16: the GPU faults (CUDA_ERROR_ILLEGAL_INSTRUCTION"),
            "{}",
            msgs[0]
        );
        assert!(msgs[1].contains(&format!("{file}:{}", line + 1)) && msgs[1].contains("coordinate -3 (of u32"));
        assert!(msgs[2].contains(&format!("{file}:{}", line + 2)) && msgs[2].contains("coordinate 1 (of u32"));
        assert!(msgs[3].contains(&format!("{file}:{wide_line}")) && msgs[3].contains("coordinate 3 (of bf16"));
        assert!(msgs[3].ends_with("use a multiple of 8 bf16 elements"), "{}", msgs[3]);
    }

    #[test]
    fn an_undeclared_map_takes_the_first_tile_and_rejects_another() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let a = k.alloc_tile("a", &TileShape::new(Type::F32, &[8, 32], TileLayout::Swizzled(Swizzle::B128)));
        let b = k.alloc_tile("b", &TileShape::new(Type::F32, &[8, 32], TileLayout::RowMajor));
        let map = k.param_tensor_map("m", 2);
        let zero = [Value::u32(0), Value::u32(0)];
        k.tma_store_tile(map, &zero, a);
        let spec = k.params[0].tma.clone().unwrap();
        assert_eq!((spec.box_dims, spec.swizzle, spec.declared), (Some(vec![32, 8]), Some(Swizzle::B128), false));
        k.tma_store_tile(map, &zero, b);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("no swizzle, expected 128-byte swizzle (the map was used at"), "{e}");
    }

    #[test]
    fn wide_swizzled_tiles_are_copied_block_by_block() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let t = k.alloc_tile("t", &TileShape::new(Type::BF16, &[64, 256], TileLayout::Swizzled(Swizzle::B128)));
        assert_eq!((t.blocks(), t.tma_box()), (4, vec![64, 64]));
        let map = k.param_tensor_map("m", 2);
        let bars = k.alloc_barriers("bar", 1);
        let bar = k.barrier_at(bars, Value::u32(0));
        let x = k.param("x", Type::S32);
        k.tma_load_tile(t, map, &[Value::s32(0), x], bar);
        let kernel = k.finish().unwrap();
        let mut loads = Vec::new();
        walk_insts(kernel.body(), &mut |i, _| {
            if let Inst::Tma(TmaOp::LoadTensor { coords, .. }) = i {
                loads.push(coords.clone());
            }
        });
        assert_eq!(loads.len(), 4);
        assert_eq!(loads[0][1], Value::s32(0), "the outer coordinate is the same for every block");
        assert_ne!(loads[1][0], loads[0][0], "each block starts 64 columns further");
    }
}
