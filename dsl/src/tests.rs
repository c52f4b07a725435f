//! The DSL's documents and tests follow the op registry.

use phaser_codegen::registry;

#[test]
fn readme_table_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let (begin, end) = ("<!-- op-table-begin -->\n", "<!-- op-table-end -->");
    let a = readme.find(begin).expect("begin marker") + begin.len();
    let b = readme.find(end).expect("end marker");
    let table = registry::markdown_table();
    if readme[a..b] != table {
        if std::env::var_os("UPDATE_OP_TABLE").is_some() {
            std::fs::write(path, format!("{}{table}{}", &readme[..a], &readme[b..])).unwrap();
        } else {
            panic!("dsl/README.md's op table is stale: rerun with UPDATE_OP_TABLE=1");
        }
    }
}

/// The `T.<path>` ops called in Rust source: `T`, then `.name` segments, then a call's
/// parentheses or a turbofish. The source is parsed, so comments (doc comments become
/// `#[doc = "..."]` string literals) and string literals never count as calls.
fn called_ops(src: &str) -> std::collections::BTreeSet<String> {
    use proc_macro2::{Delimiter, TokenStream, TokenTree};
    use quote::ToTokens;
    fn walk(tokens: TokenStream, out: &mut std::collections::BTreeSet<String>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            if let TokenTree::Group(g) = t {
                walk(g.stream(), out);
            }
            let TokenTree::Ident(root) = t else { continue };
            let after_dot = i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
            if root != "T" || after_dot {
                continue;
            }
            let (mut path, mut j) = (Vec::new(), i + 1);
            while let (Some(TokenTree::Punct(dot)), Some(TokenTree::Ident(seg))) = (tokens.get(j), tokens.get(j + 1)) {
                if dot.as_char() != '.' {
                    break;
                }
                path.push(seg.to_string());
                j += 2;
            }
            let call = match tokens.get(j) {
                Some(TokenTree::Group(g)) => g.delimiter() == Delimiter::Parenthesis,
                // `::<T>(`: a turbofish is `:` `:` `<`.
                Some(TokenTree::Punct(p)) => {
                    p.as_char() == ':' && matches!(tokens.get(j + 2), Some(TokenTree::Punct(lt)) if lt.as_char() == '<')
                }
                _ => false,
            };
            if call && !path.is_empty() {
                out.insert(path.join("."));
            }
        }
    }
    let file = syn::parse_file(src).expect("the test file parses");
    let mut out = std::collections::BTreeSet::new();
    walk(file.into_token_stream(), &mut out);
    out
}

#[test]
fn called_ops_are_calls_not_comments_or_strings() {
    let src = r#"
        /// `T.ptx.mbarrier.init(bar, 1)` in a doc comment
        // T.cuda.cta_sync() in a comment
        fn k() {
            let s = "T.ptx.fence.proxy_async()";
            T.ptx.mbarrier.arrive(bar);
            let t = T.alloc_shared::<f32>([4], "none");
            x.T.cuda.syncwarp();
            T.ptx.elect_sync;
        }
    "#;
    let got: Vec<String> = called_ops(src).into_iter().collect();
    assert_eq!(got, ["alloc_shared", "ptx.mbarrier.arrive"]);
}

#[test]
fn every_op_is_exercised_by_the_kitchen_sink_test() {
    let called = called_ops(include_str!("../../tests/dsl_ops.rs"));
    let missing: Vec<&str> = registry::ops().map(|o| o.path).filter(|p| !called.contains(*p)).collect();
    assert!(missing.is_empty(), "ops not called in tests/dsl_ops.rs: {missing:?}");
}

#[test]
fn a_warp_level_typo_never_suggests_a_cta_barrier() {
    use crate::check::ops::op_suggestion;
    // `__syncwarp` spelled as users do: each gets the warp barrier, never `T.cuda.cta_sync`
    // (a `bar.sync 0` inside a warp-specialized branch deadlocks the other warps).
    for unknown in [
        "syncwarp",
        "__syncwarp",
        "cuda.syncwarp",
        "cuda.__syncwarp",
        "warp_sync",
        "cuda.warpsync",
        "sync_warp",
        "cuda.sync_warp",
        "warp_barrier",
    ] {
        let help = op_suggestion(unknown);
        assert!(help.contains("`T.cuda.warp_sync`"), "{unknown}: {help}");
        assert!(!help.contains("cta_sync") && !help.contains("bar.sync"), "{unknown}: {help}");
    }
    // Other libraries' spellings of the new ops.
    assert!(op_suggestion("__shfl_xor_sync").contains("`T.ptx.shfl.sync.bfly`"));
    assert!(op_suggestion("mbarrier.wait").contains("`T.ptx.mbarrier.try_wait`"));
    assert!(op_suggestion("wait_barrier").contains("`T.cute.wait_barrier`"));
    assert!(op_suggestion("cudaGridDependencySynchronize").contains("`T.ptx.griddepcontrol.wait`"));
    // A CTA-level typo still gets the CTA barrier.
    assert!(op_suggestion("cuda.cta_synk").contains("`T.cuda.cta_sync`"));
}

/// A kernel of about `n` statements of the kinds real kernels have: `let`s, `let mut`s
/// (which immutable `let`s snapshot), assignments, ops, branches and loops.
fn kernel_with_statements(n: usize) -> String {
    let mut body = String::from("let tid = T.thread_idx();\nlet mut acc = 0u32;\n");
    for i in 0..n {
        body.push_str(&match i % 6 {
            0 => format!("let v{i} = tid + {i};\n"),
            1 => format!("let mut m{i} = acc * 3;\n"),
            2 => format!("acc = acc + v{};\n", i - 2),
            3 => format!("if acc > {i} {{ acc = acc - 1; }}\n"),
            4 => format!("let w{i} = acc;\n"),
            _ => "for j in 0..4u32 { acc += j; }\n".to_string(),
        });
    }
    body.push_str("out[tid] = acc;\n");
    format!("#[phaser::kernel(target = \"sm_90a\")] fn big(out: &mut [u32]) {{\n{body}}}")
}

/// Tokens in a stream, nested groups included.
fn count_tokens(ts: proc_macro2::TokenStream) -> usize {
    ts.into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Group(g) => 1 + count_tokens(g.stream()),
            _ => 1,
        })
        .sum()
}

/// (checker work, expansion tokens) for a kernel's source.
fn expansion_cost(src: &str) -> (u64, usize) {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel source");
    let mut errs = crate::parse::Errors::default();
    let f = crate::parse::parse_fn(
        item,
        crate::parse::ast::FnKind::Kernel { target: phaser_codegen::Target::Sm90a },
        &mut errs,
    );
    let work = crate::check::check_fn_counting(&f, &mut errs);
    assert!(errs.is_empty(), "the generated kernel checks cleanly");
    (work, count_tokens(crate::expand::kernel(&f)))
}

#[test]
fn expansion_work_grows_linearly_with_the_statements() {
    // Before: 2000 statements took 2.5 s and 4000 took 17.7 s (cubic: every immutable `let`
    // rescanned every scope for the `let mut`s and listed them all in its expansion). The
    // checker's work and the size of the expansion are deterministic measures of that cost.
    let (w1, t1) = expansion_cost(&kernel_with_statements(1000));
    let (w4, t4) = expansion_cost(&kernel_with_statements(4000));
    let (wr, tr) = (w4 as f64 / w1 as f64, t4 as f64 / t1 as f64);
    assert!((3.8..4.2).contains(&wr), "checker work x{wr:.2} for 4x the statements ({w1} -> {w4})");
    assert!((3.8..4.2).contains(&tr), "expansion tokens x{tr:.2} for 4x the statements ({t1} -> {t4})");
}

/// The most statements (top-level `;`s) any one brace-delimited block of `ts` holds.
fn largest_block(ts: proc_macro2::TokenStream) -> usize {
    let mut here = 0;
    let mut inner = 0;
    for t in ts {
        match t {
            proc_macro2::TokenTree::Group(g) => inner = inner.max(largest_block(g.stream())),
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ';' => here += 1,
            _ => {}
        }
    }
    here.max(inner)
}

#[test]
fn a_long_kernel_is_built_by_tables_and_chunks() {
    // One function of thousands of statements made the release build superlinear (8000
    // statements: 111 s against 8.5 s for plain Rust), and a builder call per operation kept
    // it at 6x plain Rust: straight-line statements are data (a static table of steps per run,
    // `expand::table`), and a long block's units (runs and statements of code) are built by
    // closures of `CHUNK_STATEMENTS` units each, so no block of code grows with the kernel.
    let n = 4000;
    let item: syn::ItemFn = syn::parse_str(&kernel_with_statements(n)).unwrap();
    let mut errs = crate::parse::Errors::default();
    let f = crate::parse::parse_fn(
        item,
        crate::parse::ast::FnKind::Kernel { target: phaser_codegen::Target::Sm90a },
        &mut errs,
    );
    crate::check::check_fn(&f, &mut errs);
    assert!(errs.is_empty());
    let expansion = crate::expand::kernel(&f);
    let text = expansion.to_string();
    // Every sixth statement is a loop (code); the statements between two loops are one run,
    // and each loop's body is a run of its own.
    let runs = text.matches("__p :: run").count();
    assert!(runs >= 2 * (n / 6), "{runs} tables for {n} statements, {} of them loops", n / 6);
    for call in ["__k . add", "__k . sub", "__k . mul", "__k . assign", "__k . if_then_dyn", "__k . st_global"] {
        assert!(!text.contains(call), "`{call}` in the expansion: a statement of the table expanded as code");
    }
    let chunks = text.matches("__p :: chunk").count();
    // Each chunk ends at `CHUNK_STATEMENTS` units or before a name bound twice.
    let units = 2 * (n / 6);
    assert!(chunks >= units / crate::expand::body::CHUNK_STATEMENTS, "{chunks} chunks for {units} units");
    let largest = largest_block(expansion);
    assert!(largest < n / 4, "a block of {largest} statements, for {n} statements in the kernel");
}

#[test]
fn a_long_expression_expands_flat() {
    // A 1000-term sum is 1000 sequential statements, not blocks nested 1000 deep (which
    // overflowed rustc's parser): the expansion's nesting stays that of the kernel itself.
    fn depth(ts: proc_macro2::TokenStream) -> usize {
        ts.into_iter()
            .map(|t| match t {
                proc_macro2::TokenTree::Group(g) => 1 + depth(g.stream()),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
    let sum = |n: usize| {
        let terms: Vec<String> = (0..n).map(|i| format!("x{}", i % 3)).collect();
        format!(
            "#[phaser::kernel(target = \"sm_90a\")] fn sum(out: &mut [u32], x0: u32, x1: u32, x2: u32) {{ out[0] = {}; }}",
            terms.join(" + ")
        )
    };
    let depth_of = |src: String| {
        let item: syn::ItemFn = syn::parse_str(&src).unwrap();
        let mut errs = crate::parse::Errors::default();
        let f = crate::parse::parse_fn(
            item,
            crate::parse::ast::FnKind::Kernel { target: phaser_codegen::Target::Sm90a },
            &mut errs,
        );
        crate::check::check_fn(&f, &mut errs);
        assert!(errs.is_empty());
        depth(crate::expand::kernel(&f))
    };
    // Parsing, checking and expansion walk a left-nested chain with loops: 5000 terms (what
    // plain Rust handles) fit a 2 MiB test thread, a quarter of what rustc gives a macro.
    let flat = (depth_of(sum(5000)), depth_of(sum(2)));
    assert_eq!(flat.0, flat.1, "nesting does not grow with the expression");
}

/// The checker's messages for a kernel's source.
fn check_messages(src: &str) -> Vec<String> {
    messages(src, |f, errs| crate::check::check_fn(f, errs))
}

/// The errors the macro reports for a kernel's source.
fn errors_of(src: &str) -> Vec<String> {
    messages(src, |f, errs| {
        crate::check::check_fn_counting(f, errs);
    })
}

fn messages(src: &str, check: impl FnOnce(&crate::parse::ast::FnDef, &mut crate::parse::Errors)) -> Vec<String> {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel source");
    let mut errs = crate::parse::Errors::default();
    let f = crate::parse::parse_fn(
        item,
        crate::parse::ast::FnKind::Kernel { target: phaser_codegen::Target::Sm90a },
        &mut errs,
    );
    check(&f, &mut errs);
    errs.0.iter().map(|e| e.to_string()).collect()
}

#[test]
fn wgmma_shapes_are_judged_by_arch_rules_on_what_the_macro_knows() {
    let kernel = |acc_len: &str, a: &str, b: &str, k_step: &str| {
        format!(
            "#[phaser::kernel(target = \"sm_90a\")] fn k(#[comptime] N: u32) {{
                T.require_block(128, 1, 1);
                let a = T.alloc_shared::<bf16>({a}, \"128B\");
                let b = T.alloc_shared::<bf16>({b}, \"128B\");
                let acc = T.registers::<f32>([{acc_len}]);
                T.ptx.wgmma.fence();
                T.ptx.wgmma.mma_async(acc, a, b, {k_step}, false);
            }}"
        )
    };
    assert_eq!(check_messages(&kernel("32", "[64, 64]", "[64, 64]", "3")), Vec::<String>::new());
    // A literal accumulator of no wgmma's N: reported by the macro (the builder's rule).
    assert_eq!(
        check_messages(&kernel("132", "[64, 64]", "[264, 64]", "0")),
        [phaser_codegen::arch::wgmma::accumulator_problem(132)
            .map(|p| format!("`T.ptx.wgmma.mma_async`: {p}"))
            .unwrap()]
    );
    // K extents that differ, and a k-step past K in units of bf16's K (16).
    assert_eq!(
        check_messages(&kernel("32", "[64, 32]", "[64, 64]", "2")),
        ["`T.ptx.wgmma.mma_async`: A is 32 wide in K but B is 64"]
    );
    assert_eq!(
        check_messages(&kernel("32", "[64, 32]", "[64, 32]", "2")),
        ["`T.ptx.wgmma.mma_async`: k-step 2 is past the tiles' K of 32 (2 steps of 16: 0..2)"]
    );
    // Sizes from `#[comptime]` values are the build's to judge (once, at the argument).
    assert_eq!(check_messages(&kernel("N / 2", "[64, 64]", "[N, 64]", "0")), Vec::<String>::new());
}

#[test]
fn a_variadic_kernel_is_refused() {
    // `...` in a kernel's signature was accepted and ignored.
    let errs = errors_of("fn k(out: &mut [u32], ...) { out[0] = 1; }");
    assert_eq!(errs, ["a kernel cannot be variadic (`...`): declare each parameter"]);
    assert!(errors_of("fn k(out: &mut [u32]) { out[0] = 1; }").is_empty());
}

#[test]
fn a_pipeline_state_is_not_aliased_by_let_and_clone_state_copies_it() {
    let kernel = |body: &str| {
        format!(
            "#[phaser::kernel(target = \"sm_90a\")] fn k(out: &mut [u32]) {{
                let pipe = T.pipeline.new(2, 1);
                let st = T.pipeline.producer_state(pipe);
                {body}
                T.pipeline.advance(copy);
                out[0] = T.pipeline.stage(st);
            }}"
        )
    };
    assert_eq!(
        check_messages(&kernel("let copy = st;")),
        ["a pipeline state is not copied by `let`: `copy` would be another name for `st` (advancing one moves \
          both); use `st` itself, or make an independent copy with `T.pipeline.clone_state(st)`"]
    );
    assert_eq!(check_messages(&kernel("let copy = T.pipeline.clone_state(st);")), Vec::<String>::new());
}

/// A kernel loading `tile` (`[R, C]`) from a map declared `#[tma(box = [BR, BC], {attr})]`
/// and, with `mma`, using it as a wgmma's B.
fn tma_kernel(attr: &str, coords: &str, mma: &str) -> String {
    format!(
        "#[phaser::kernel(target = \"sm_90a\")] fn k(
            #[tma(box = [64, 64], swizzle = \"128B\")] a: TensorMap<bf16, 2>,
            #[tma(box = [64, 64], swizzle = \"128B\"{attr})] v: TensorMap<bf16, 2>,
            m0: i32, k0: i32,
        ) {{
            T.require_block(128, 1, 1);
            let a_tile = T.alloc_shared::<bf16>([64, 64], \"128B\");
            let v_tile = T.alloc_shared::<bf16>([64, 64], \"128B\");
            let bars = T.alloc_barriers(1);
            let bar = bars.ptr_to([0]);
            let acc = T.registers::<f32>([32]);
            {mma}
            T.tma.load(a_tile, a, [0, 0], bar);
            T.tma.load(v_tile, v, {coords}, bar);
        }}"
    )
}

#[test]
fn named_coordinates_are_held_to_the_maps_dimensions_and_order() {
    let dims = ", dims = [m, k]";
    assert_eq!(check_messages(&tma_kernel(dims, "[m = m0, k = k0]", "")), Vec::<String>::new());
    assert_eq!(check_messages(&tma_kernel("", "[m0, k0]", "")), Vec::<String>::new());
    // PTX's order, innermost first: an error naming the order the op takes.
    assert_eq!(
        check_messages(&tma_kernel(dims, "[k = k0, m = m0]", "")),
        ["`T.tma.load`: the coordinates are named [k, m] but this op takes `v`'s dimensions as [m, k] (outermost \
          first, like the tile's shape)"]
    );
    let errs = check_messages(&tma_kernel(dims, "[m = m0, n = k0]", ""));
    assert!(errs.len() == 1 && errs[0].contains("`n` is not a dimension of `v` ([m, k])"), "{errs:?}");
    let errs = check_messages(&tma_kernel(dims, "[m = m0, k0]", ""));
    assert!(errs.len() == 1 && errs[0].contains("name every coordinate"), "{errs:?}");
    let errs = check_messages(&tma_kernel("", "[m = m0, k = k0]", ""));
    assert!(errs.len() == 1 && errs[0].contains("`v` names no dimensions"), "{errs:?}");
    let errs = check_messages(&tma_kernel(", dims = [m]", "[m0, k0]", ""));
    assert!(errs.len() == 1 && errs[0].contains("`dims` names 1 dimension but the tensor map has rank 2"), "{errs:?}");
}

#[test]
fn a_tiles_majorness_comes_from_the_map_that_fills_it() {
    let mma = |major: &str| format!("T.ptx.wgmma.mma_async(acc, a_tile, v_tile, 0, false{major});");
    let mn = ", major = \"mn\"";
    // Given and agreeing, or omitted (then taken from the tile): no error.
    assert_eq!(check_messages(&tma_kernel(mn, "[0, 0]", &mma(", \"mn\""))), Vec::<String>::new());
    assert_eq!(check_messages(&tma_kernel(mn, "[0, 0]", &mma(""))), Vec::<String>::new());
    assert_eq!(check_messages(&tma_kernel("", "[0, 0]", &mma(", \"k\""))), Vec::<String>::new());
    // Disagreeing, though the MMA comes before the load in the text.
    let errs = check_messages(&tma_kernel(mn, "[0, 0]", &mma(", \"k\"")));
    assert!(
        errs.len() == 1
            && errs[0].starts_with("`T.ptx.wgmma.mma_async`: `b_major` is \"k\" but `v_tile` is MN-major: TMA fills it from `v`"),
        "{errs:?}"
    );
    // The "mn" forgotten on the map: K-major by default, and the help says what to declare.
    let errs = check_messages(&tma_kernel("", "[0, 0]", &mma(", \"mn\"")));
    assert!(errs.len() == 1 && errs[0].contains("declare it: `#[tma(.., major = \"mn\")]`"), "{errs:?}");
    let errs = check_messages(&tma_kernel(", major = \"row\"", "[0, 0]", ""));
    assert!(errs.len() == 1 && errs[0].contains("\"row\" is not a majorness"), "{errs:?}");
    // A ring's stage bound by `let` is part of the ring: the stage's load fills the ring.
    let ring = |major: &str| {
        format!(
            "#[phaser::kernel(target = \"sm_90a\")] fn k(#[tma(box = [64, 64], swizzle = \"128B\", major = \"mn\")] v: TensorMap<bf16, 2>) {{
                T.require_block(128, 1, 1);
                let ring = T.alloc_shared::<bf16>([2, 64, 64], \"128B\");
                let bars = T.alloc_barriers(1);
                let bar = bars.ptr_to([0]);
                let stage = ring[1];
                T.tma.load(stage, v, [0, 0], bar);
                let acc = T.registers::<f32>([32]);
                let p = T.registers::<u32>([4]);
                T.ptx.wgmma.mma_async_rs(acc, p, ring[0], 0, false{major});
            }}"
        )
    };
    assert_eq!(check_messages(&ring(", \"mn\"")), Vec::<String>::new());
    let errs = check_messages(&ring(", \"k\""));
    assert!(errs.len() == 1 && errs[0].contains("`ring[0]` is MN-major"), "{errs:?}");
}

/// The expansion of a kernel's first call of `op` (its quoted path), temporaries unnumbered
/// (they are numbered per thread). The kernel must check without errors.
fn expanded_call(src: &str, op: &str) -> String {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let mut errs = crate::parse::Errors::default();
    let f =
        crate::parse::parse_fn(item, crate::parse::ast::FnKind::Kernel { target: phaser_codegen::Target::Sm90a }, &mut errs);
    crate::check::check_fn(&f, &mut errs);
    assert!(errs.0.is_empty(), "{:?}", errs.0.iter().map(|e| e.to_string()).collect::<Vec<_>>());
    let text = crate::expand::body::stmts(&f.body.stmts).to_string();
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if out.ends_with("__t") {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        }
    }
    let call = out.find(op).unwrap_or_else(|| panic!("no call of {op}"));
    out[call..call + out[call..].find(';').unwrap()].to_string()
}

#[test]
fn named_coordinates_expand_as_the_positional_ones() {
    // The tile copy outermost first; the `ptx.*` form innermost first (PTX's order).
    let dims = ", dims = [m, k]";
    let tile = |coords: &str| expanded_call(&tma_kernel(dims, coords, ""), "[__p :: OpArg :: from (v_tile)");
    let (named, positional) = (tile("[m = m0, k = k0]"), tile("[m0, k0]"));
    assert_eq!(named, positional);
    assert_ne!(positional, tile("[k0, m0]"), "the order reaches the expansion");
    let raw = |coords: &str| {
        let src = tma_kernel(
            dims,
            "[0, 0]",
            &format!("T.ptx.cp_async.bulk.tensor.g2s(T.tile_addr(v_tile, [0, 0]), v, {coords}, bar);"),
        );
        expanded_call(&src, "\"ptx.cp_async.bulk.tensor.g2s\"")
    };
    assert_eq!(raw("[k = k0, m = m0]"), raw("[k0, m0]"));
    assert_ne!(raw("[k0, m0]"), raw("[m0, k0]"), "the order reaches the expansion");
    let errs = check_messages(&tma_kernel(dims, "[0, 0]", "T.ptx.cp_async.bulk.tensor.g2s(0, v, [m = m0, k = k0], bar);"));
    assert!(errs.len() == 1 && errs[0].contains("takes `v`'s dimensions as [k, m] (innermost first"), "{errs:?}");
}

#[test]
fn an_omitted_majorness_is_the_tiles_in_the_expansion() {
    // The expansion passes the tile's majorness as if written: the MMA's call is the same
    // tokens as with `"mn"` (its argument locations list only the arguments written).
    let expand = |src: &str| expanded_call(src, "\"ptx.wgmma.mma_async\"");
    let mn = ", major = \"mn\"";
    let given = expand(&tma_kernel(mn, "[0, 0]", "T.ptx.wgmma.mma_async(acc, a_tile, v_tile, 0, false, \"mn\");"));
    let omitted = expand(&tma_kernel(mn, "[0, 0]", "T.ptx.wgmma.mma_async(acc, a_tile, v_tile, 0, false);"));
    assert!(given.contains("Choice (\"mn\")"), "{given}");
    assert_eq!(given, omitted);
    let k = expand(&tma_kernel("", "[0, 0]", "T.ptx.wgmma.mma_async(acc, a_tile, v_tile, 0, false);"));
    assert!(!k.contains("Choice (\"mn\")"));
}
