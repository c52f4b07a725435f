//! A wgmma operand's majorness, carried by its tile. `#[tma(.., major = "mn")]` declares it of
//! a tensor map (a map with `#[tma]` and no `major` is K-major); a tile that map fills with
//! `T.tma.load*` is of that majorness; an `mma_async*` taking the tile as `a` or `b` must give
//! the same `*_major` or omit it, and then the tile's is used. A tile filled from maps of both
//! majornesses (one per `#[comptime]` form of a kernel) has none: each MMA must say which it
//! reads. Tiles and uses are matched by binding once the whole body is checked: a consumer's
//! MMA may come before the producer's load in the text.

use super::ops::text;
use super::Checker;
use crate::parse::ast::{Expr, ExprKind, ImpliedArgs, Sp};
use phaser_codegen::ir::Major;
use phaser_codegen::registry::OpDef;

/// What a tensor-map parameter's `#[tma]` declares of the tiles it fills.
pub(super) struct MapDecl {
    /// The dimensions' names, outermost first (`dims = [m, k]`).
    pub dims: Option<Vec<String>>,
    /// `Some` where the map has a `#[tma]` attribute; `true`: `major` was written.
    pub major: Option<(Major, bool)>,
}

/// A tile's majorness, from the first load that filled it.
#[derive(Clone)]
pub(super) struct Fill {
    major: Major,
    declared: bool,
    map: String,
    /// A later load from a map of the other majorness (its name).
    mixed: Option<String>,
}

/// An MMA operand tile, to be held to its tile's majorness.
pub(super) struct MmaUse {
    path: &'static str,
    tile_seq: u64,
    tile_text: String,
    major_param: (usize, &'static str),
    /// The majorness argument as written, where it was.
    given: Option<(Major, Sp)>,
    tile_sp: Sp,
    implied: ImpliedArgs,
}

/// The `T.tma.*` ops that fill their tile from the map.
const FILLS: &[&str] = &["tma.load", "tma.load_multicast"];

impl Checker<'_> {
    /// The tile an expression is (part of): its root variable's binding, through `let`s of
    /// a part (`let stage = ring[s]` is `ring`).
    pub(super) fn tile_id(&self, e: &Expr) -> Option<u64> {
        self.root_var(e).map(|(_, v)| v.tile_root.unwrap_or(v.seq))
    }

    /// A TMA load gives its tile the map's majorness; a second map of the other majorness
    /// makes the tile's majorness mixed.
    pub(super) fn record_fill(&mut self, spec: &OpDef, tile: &Expr, map: &Expr) {
        if !FILLS.contains(&spec.path) {
            return;
        }
        let (Some(seq), Some((map_name, m))) = (self.tile_id(tile), self.root_var(map)) else { return };
        let Some((major, declared)) = m.map.as_ref().and_then(|d| d.major) else { return };
        let fill = Fill { major, declared, map: map_name, mixed: None };
        match self.fills.get_mut(&seq) {
            None => {
                self.fills.insert(seq, fill);
            }
            Some(first) if first.major != major && first.mixed.is_none() => first.mixed = Some(fill.map),
            Some(_) => {}
        }
    }

    /// The majorness a filled tile gives an MMA operand, where the load was already checked.
    pub(super) fn filled_major(&self, tile: &Expr) -> Option<Major> {
        self.fills.get(&self.tile_id(tile)?).filter(|f| f.mixed.is_none()).map(|f| f.major)
    }

    /// Note an MMA operand (`tile`) and its majorness argument (param `major_param` of
    /// `spec`), to compare once every load is known.
    pub(super) fn record_mma_use(
        &mut self,
        spec: &OpDef,
        tile: &Expr,
        major_param: &'static str,
        args: &[Expr],
        implied: &ImpliedArgs,
    ) {
        let Some(tile_seq) = self.tile_id(tile) else { return };
        let Some(index) = spec.params.iter().position(|p| p.name == major_param) else { return };
        let given = args.get(index).and_then(|a| match &a.kind {
            ExprKind::Str(s) => Major::from_name(&s.value()).map(|m| (m, a.sp)),
            _ => None,
        });
        let use_ = MmaUse {
            path: spec.path,
            tile_seq,
            tile_text: text(tile),
            major_param: (index, major_param),
            given,
            tile_sp: tile.sp,
            implied: implied.clone(),
        };
        // An argument given but not a majorness was reported by the argument check.
        if given.is_some() || args.len() <= index {
            self.mma_uses.push(use_);
        }
    }

    /// After the body: each MMA operand against its tile's majorness. A mismatch is an error
    /// at the argument; an omitted argument takes the tile's.
    pub(super) fn check_mma_majors(&mut self) {
        for u in std::mem::take(&mut self.mma_uses) {
            let Some(fill) = self.fills.get(&u.tile_seq) else { continue };
            let (index, pname) = u.major_param;
            if let Some(other) = &fill.mixed {
                if u.given.is_none() {
                    let msg = format!(
                        "`T.{}`: `{}` is filled from `{}` ({}) and from `{other}` ({}): give `{pname}` (\"k\" or \"mn\"), \
                         this MMA cannot take it from the tile",
                        u.path,
                        u.tile_text,
                        fill.map,
                        words(fill.major),
                        words(other_major(fill.major)),
                    );
                    self.errs.at(u.tile_sp, msg);
                }
                continue;
            }
            match u.given {
                Some((g, sp)) if g != fill.major => {
                    let fix = if fill.declared {
                        format!("give \"{}\" or omit `{pname}` (then the tile's majorness is used)", fill.major.name())
                    } else {
                        format!(
                            "if the box's inner dimension of `{}` is {}, declare it: `#[tma(.., major = \"{}\")]`",
                            fill.map,
                            if g == Major::MN { "M or N" } else { "K" },
                            g.name()
                        )
                    };
                    let msg = format!(
                        "`T.{}`: `{pname}` is \"{}\" but `{}` is {}: TMA fills it from `{}` ({})\n  help: {fix}",
                        u.path,
                        g.name(),
                        u.tile_text,
                        words(fill.major),
                        fill.map,
                        describe(fill)
                    );
                    self.errs.at(sp, msg);
                }
                None if fill.major != Major::K => u.implied.borrow_mut().push((index, fill.major.name())),
                _ => {}
            }
        }
    }
}

fn other_major(m: Major) -> Major {
    match m {
        Major::K => Major::MN,
        Major::MN => Major::K,
    }
}

fn words(m: Major) -> &'static str {
    match m {
        Major::K => "K-major",
        Major::MN => "MN-major",
    }
}

fn describe(f: &Fill) -> String {
    if f.declared {
        format!("declared `major = \"{}\"`", f.major.name())
    } else {
        format!("its `#[tma]` declares no `major`: {}", words(f.major))
    }
}
