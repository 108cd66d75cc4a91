//! Planning a quote that only rung 5 of the ladder finds, on a 10,000-line
//! document of nested blocks (issue 34): a str_replace whose quote lost one level
//! of indentation (its new text kept as written, and moved by the shift), and an
//! `apply_patch` hunk whose context and removed lines lost it. The new text's
//! indentation is read from the lines around the match; this is what that costs.
#![allow(clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use ropey::Rope;

use verbatim_engine::hunk::{HunkRules, plan_hunks};
use verbatim_engine::patch::Hunk;
use verbatim_engine::plan::{Edit, StrReplace, plan};

const BLOCKS: usize = 2_000;

/// Block `n`: a function of five lines, its body one and two levels deep.
fn block(n: usize, indent: &str) -> Vec<String> {
    vec![
        format!("{indent}fn f{n}() {{"),
        format!("{indent}    let x{n} = compute({n});"),
        format!("{indent}    if x{n} > 0 {{"),
        format!("{indent}        run(x{n});"),
        format!("{indent}    }}"),
    ]
}

fn ladder(c: &mut Criterion) {
    let text: String = (0..BLOCKS).flat_map(|n| block(n, "    ")).map(|line| format!("{line}\n")).collect();
    let rope = Rope::from_str(&text);
    let target = BLOCKS / 100 * 95;
    let quote = block(target, "").join("\n");
    let mut kept = block(target, "    ");
    kept[3] = format!("            run(x{target} + 1);");
    let mut shifted = block(target, "");
    shifted[3] = format!("        run(x{target} + 1);");
    let edit = |new: &[String]| {
        Edit::StrReplace(StrReplace { old_str: quote.clone(), new_str: new.join("\n"), ..StrReplace::default() })
    };
    let (kept, shifted) = (edit(&kept), edit(&shifted));
    // Context and removed lines in the quote's terms, the added line in the file's;
    // no context marked, so that the bench builds against the engine before issue 34 too.
    let mut new_lines = block(target, "");
    new_lines[3] = format!("            run(x{target} + 1);");
    let hunk = Hunk { old_lines: block(target, ""), new_lines, ..Hunk::default() };
    let hunks = [hunk];
    // Each case plans, so that what is measured is a whole plan.
    assert!(plan(&rope, &kept).is_ok() && plan(&rope, &shifted).is_ok());
    let mut group = c.benchmark_group("ladder_10k_lines");
    group.sample_size(20);
    group.bench_function("str_replace_new_text_kept", |b| b.iter(|| plan(&rope, &kept)));
    group.bench_function("str_replace_new_text_shifted", |b| b.iter(|| plan(&rope, &shifted)));
    group.bench_function("hunk_context_shifted", |b| {
        b.iter(|| plan_hunks(&rope, &hunks, HunkRules { in_order: true, exact: false }))
    });
    group.finish();
}

criterion_group!(benches, ladder);
criterion_main!(benches);
