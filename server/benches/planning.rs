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
    let hunks = verbatim_engine::proposal_hunks::split(rope, replacements);
    let change = EditorChange {
        uri: "file:///p/src/big.rs",
        version: Some(7),
        base: rope,
        hunks: &hunks,
        notes: &[],
        create: false,
        delete: false,
        rename_to: None,
    };
    let (edit, _) = workspace_edit(&[change], &options).unwrap();
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

/// Issue 12: moving an agent's edit near the top of a 10,000-line document over 1,
/// 100 and 10,000 one-character changes the person made since at its end: the text
/// the agent saw rebuilt from the history, and the plan moved (the plan itself is
/// measured above).
fn rebase(c: &mut Criterion) {
    use verbatim_engine::history;
    use verbatim_engine::position::Position;
    use verbatim_engine::store::DocumentStore;
    use verbatim_engine::text_change::TextChange;

    let text: String = (0..10_000).map(|i| format!("    let v{i} = compute({i});\n")).collect();
    let mut group = c.benchmark_group("rebase");
    for changes in [1usize, 100, 10_000] {
        let mut store = DocumentStore::default();
        let key = verbatim_engine::doc_key::DocKey::parse("file:///p/big.rs").unwrap();
        store.open(key.clone(), "file:///p/big.rs".into(), "rust".into(), 0, &text);
        for version in 1..=changes as i32 {
            let at = Position::new(9_999, 4);
            let change = TextChange { range: Some(at..at), text: "x".into() };
            store.change(&key, version, &[change], PositionEncoding::Utf16).unwrap();
        }
        let document = store.get(&key).unwrap();
        let kept = document.history.len();
        let from = (changes as i32 - kept as i32).max(0);
        let replacements = vec![Replacement { range: 100..120, new_text: "edited".into() }];
        println!("rebase/{changes}: {kept} revisions kept");
        group.bench_with_input(BenchmarkId::from_parameter(changes), &changes, |b, _| {
            b.iter(|| {
                // What a rebase adds to an edit: the agent's text rebuilt, and the plan moved.
                let seen = document.history.text_at(from, &document.text).unwrap();
                let edits = document.history.edits_since(from).unwrap();
                (seen.len_bytes(), history::rebase(&replacements, &edits).unwrap())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, planning, rebase);
criterion_main!(benches);
