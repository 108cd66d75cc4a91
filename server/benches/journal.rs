//! Issue 33's targets on the server's side: the cost of journaling one edit with the
//! texts kept to undo it, against journaling it without (as before the timeline), at
//! 1,000 and 10,000 lines; and reading a journal of 10,000 entries into the timeline
//! (what `verbatim/timeline` does before the editor draws it).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::cell::Cell;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ropey::Rope;
use verbatim::service::journal::{DocumentTexts, Journal, RevertWrite, Source, WriteInfo};
use verbatim::service::journal_texts::KeepLimits;
use verbatim::service::protocol::DocumentResult;
use verbatim::service::timeline::{self, Filter, Marks};

fn text_of(lines: usize, changed: usize) -> String {
    (0..lines)
        .map(|line| {
            if line == lines / 2 {
                format!("    let changed = {changed};\n")
            } else {
                format!("    let value_{line} = compute({line}, \"some text\");\n")
            }
        })
        .collect()
}

fn result() -> DocumentResult {
    DocumentResult {
        uri: "file:///p/src/big.rs".into(),
        base_rev: Some("e1.1".into()),
        rev: Some("e1.2".into()),
        edits: Vec::new(),
        replaced: vec!["x".into()],
        diff: "--- a/src/big.rs\n+++ b/src/big.rs\n@@ -500 +500 @@\n-    let changed = 0;\n+    let changed = 1;\n"
            .into(),
        modified_by_editor: false,
        editor_diff: None,
        normalizations: Vec::new(),
        operation: None,
        new_uri: None,
        rebased: false,
        rebased_from: None,
        hunks: None,
        partial: false,
        pending_sync: false,
    }
}

fn write_info() -> WriteInfo<'static> {
    WriteInfo {
        source: Source::Editor,
        agent: "bench",
        summary: "Change one line",
        commit: None,
        reason: None,
        diagnostics: None,
        session: "bench-session",
        turn: Some("bench-turn"),
        revert: RevertWrite::default(),
    }
}

fn journaling(c: &mut Criterion) {
    let state = tempfile::tempdir().unwrap();
    let journal = Journal::with_limits(state.path(), KeepLimits::default());
    let roots = [Some(PathBuf::from("/p"))];
    let results = [result()];
    let mut group = c.benchmark_group("journal_one_edit");
    for lines in [1_000, 10_000] {
        group.bench_with_input(BenchmarkId::new("without_texts", lines), &lines, |b, _| {
            b.iter(|| journal.record(&write_info(), &roots, &results, None, &[]));
        });
        let counter = Cell::new(0usize);
        let mut before = Rope::from_str(&text_of(lines, 0));
        group.bench_with_input(BenchmarkId::new("with_texts", lines), &lines, |b, _| {
            b.iter_batched(
                || {
                    counter.set(counter.get() + 1);
                    let after = Rope::from_str(&text_of(lines, counter.get()));
                    let texts = DocumentTexts { before: Some(before.clone()), after: Some(after.clone()) };
                    before = after;
                    texts
                },
                |texts| journal.record(&write_info(), &roots, &results, None, &[texts]),
                criterion::BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

fn journal_of(dir: &Path, entries: usize) -> PathBuf {
    let journal = Journal::with_limits(dir, KeepLimits::default());
    let results = [result()];
    let roots = [Some(PathBuf::from("/p"))];
    for index in 0..entries {
        let session = format!("session-{}", index / 50);
        let turn = format!("turn-{}", index / 5);
        let info = WriteInfo { session: &session, turn: Some(&turn), ..write_info() };
        journal.record(&info, &roots, &results, None, &[]);
    }
    journal.file_for(Some(Path::new("/p")))
}

fn timeline_of_10000(c: &mut Criterion) {
    let state = tempfile::tempdir().unwrap();
    let file = journal_of(state.path(), 10_000);
    c.bench_function("timeline_10000_entries", |b| {
        b.iter(|| {
            let all = timeline::read_all(std::slice::from_ref(&file)).unwrap();
            let result = timeline::timeline(
                &all,
                &Marks::read(std::slice::from_ref(&file)),
                &Filter { limit: Some(10_000), ..Filter::default() },
            );
            serde_json::to_vec(&result).unwrap().len()
        });
    });
}

criterion_group!(benches, journaling, timeline_of_10000);
criterion_main!(benches);
