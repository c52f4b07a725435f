//! Tensor coordinates by name. `#[tma(.., dims = [m, k])]` names a map's dimensions,
//! outermost first, and `[m = m0, k = k0]` gives each coordinate by name. The names must be
//! the map's, every one, in the op's order: outermost first for the `T.tma.*` tile copies
//! (like the tile's shape), innermost first for the `ptx.*` forms (PTX's order). A list in
//! the other order is then a compile error, not a copy of another box.

use super::ops::text;
use super::Checker;
use crate::parse::ast::{named_coord, Expr, ExprKind, Sp};
use crate::suggest::nearest;
use phaser_codegen::registry::{Kind, OpDef};

impl Checker<'_> {
    pub(super) fn named_coords_check(&mut self, spec: &OpDef, args: &[Expr]) {
        let find = |k: Kind| spec.params.iter().zip(args).find(|(p, _)| p.kind == k).map(|(_, a)| a);
        let Some(coords) = find(Kind::Coords) else { return };
        let ExprKind::Array(v) = &coords.kind else { return };
        let names: Vec<_> = v.iter().map(named_coord).collect();
        if names.iter().all(Option::is_none) {
            return;
        }
        let path = spec.path;
        if let Some(unnamed) = v.iter().zip(&names).find(|(_, n)| n.is_none()) {
            self.errs.at(
                unnamed.0.sp,
                format!("`T.{path}`: name every coordinate (`[m = m0, k = k0]`) or none; this one has no name"),
            );
            return;
        }
        let Some(map) = find(Kind::TensorMap) else {
            self.errs.at(
                coords.sp,
                format!("`T.{path}`: named coordinates name a tensor map's dimensions; give indices by position"),
            );
            return;
        };
        let dims = self.root_var(map).and_then(|(_, m)| m.map.as_ref()).and_then(|d| d.dims.clone());
        let Some(dims) = dims else {
            self.errs.at(
                coords.sp,
                format!(
                    "`T.{path}`: the tensor map `{}` names no dimensions: declare them, `#[tma(.., dims = [m, k])]` \
                     (outermost first), or give the coordinates by position",
                    text(map)
                ),
            );
            return;
        };
        let tile_copy = spec.params.iter().any(|p| p.kind == Kind::Tile);
        let expected: Vec<String> = if tile_copy { dims.clone() } else { dims.iter().rev().cloned().collect() };
        let mut unknown = false;
        for (name, _) in names.iter().flatten() {
            let n = name.to_string();
            if !dims.contains(&n) {
                unknown = true;
                let hint = match nearest(&n, dims.iter().map(String::as_str)) {
                    Some(d) => format!("\n  help: did you mean `{d}`?"),
                    None => String::new(),
                };
                self.errs.at(
                    Sp::of(*name),
                    format!("`T.{path}`: `{n}` is not a dimension of `{}` ([{}]){hint}", text(map), dims.join(", ")),
                );
            }
        }
        let given: Vec<String> = names.iter().flatten().map(|(n, _)| n.to_string()).collect();
        if !unknown && given != expected {
            let order = if tile_copy {
                "outermost first, like the tile's shape"
            } else {
                "innermost first: the `ptx.*` forms take PTX's order"
            };
            self.errs.at(
                coords.sp,
                format!(
                    "`T.{path}`: the coordinates are named [{}] but this op takes `{}`'s dimensions as [{}] ({order})",
                    given.join(", "),
                    text(map),
                    expected.join(", ")
                ),
            );
        }
    }
}
