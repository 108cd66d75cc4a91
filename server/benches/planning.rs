//! Target 3: the cost of planning a one-line strReplace once the quote is found
//! (prediction, minimal edits, ranges, unified diff, the WorkspaceEdit), in a 1 MB
//! and a 100 MB document; and the size of the WorkspaceEdit sent.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

#[path = "support.rs"]
mod support;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ropey::Rope;
use tower_lsp_server::ls_types::ChangeAnnotation;
use verbatim::service::to_proto::{EditorChange, EditorEditOptions, wire_edits, workspace_edit};
use verbatim_engine::diff::unified_diff;
use verbatim_engine::plan::{self, Replacement};
use verbatim_engine::position::PositionEncoding;

fn plan_after_search(rope: &Rope, replacements: &[Replacement]) -> usize {
    let predicted = plan::apply(rope, replacements);
    let reported = wire_edits(rope, replacements, PositionEncoding::Utf16);
    let diff = unified_diff(rope, replacements, "src/big.rs");
    let options = EditorEditOptions {
        encoding: PositionEncoding::Utf16,
        annotation_id: "verbatim/1".into(),
        annotation: ChangeAnnotation {
            label: "agent: bench".into(),
            needs_confirmation: Some(true),
            description: Some("bench".into()),
        },
        document_changes: true,
    };
    let change = EditorChange {
        uri: "file:///p/src/big.rs",
        version: Some(7),
        base: rope,
        replacements,
        create: false,
        delete: false,
        rename_to: None,
    };
    let edit = workspace_edit(&[change], &options).unwrap();
    let wire = serde_json::to_vec(&edit).unwrap();
    std::hint::black_box((predicted.len_bytes(), reported.len(), diff.len()));
    wire.len()
}

fn planning(c: &mut Criterion) {
    let mut group = c.benchmark_group("planning_without_search");
    for megabytes in [1usize, 100] {
        let text = support::code_like_text(megabytes * 1024 * 1024);
        let rope = Rope::from_str(&text);
        let (start, _) = support::unique_quote_near_end(&text);
        let line_end = start + text[start..].find('\n').unwrap();
        let old = &text[start..line_end];
        let replacements = vec![Replacement { range: start..line_end, new_text: old.replace("compute", "recompute") }];
        let size = plan_after_search(&rope, &replacements);
        println!("planning_without_search/{megabytes}MB: WorkspaceEdit on the wire = {size} bytes");
        assert!(size < 1024, "WorkspaceEdit of {size} bytes");
        group.bench_with_input(BenchmarkId::from_parameter(megabytes), &megabytes, |b, _| {
            b.iter(|| plan_after_search(&rope, &replacements));
        });
    }
    group.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
