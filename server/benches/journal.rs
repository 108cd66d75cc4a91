//! Issue 33's targets on the server's side: the cost of journaling one edit with the
//! texts kept to undo it, against journaling it without (as before the timeline), at
//! 1,000 and 10,000 lines, on the edit's path (the background writer has caught up
//! before each edit) and until its texts are on disk (`with_texts_on_disk`: the
//! background thread's work, off the edit's path); and reading a journal of 10,000
//! entries into the timeline (what `verbatim/timeline` does before the editor draws it).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ropey::Rope;
use verbatim::service::journal::{DocumentTexts, Journal, RevertWrite, Source, WriteInfo};
use verbatim::service::journal_cache::JournalCache;
use verbatim::service::journal_texts::{KeepLimits, KeptTexts};
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
        // The same edit, measured the same way, journaled without its texts (as before
        // the timeline) and with them. Edits come seconds apart, so before each one the
        // writer thread and the kernel's writeback of what it wrote are done; only the
        // call that journals the edit is timed (its texts are dropped after timing: the
        // edit's old text is dropped whether or not it is journaled).
        let mut before = Rope::from_str(&text_of(lines, 0));
        let mut counter = 0;
        for keep in [false, true] {
            let name = if keep { "with_texts" } else { "without_texts" };
            group.bench_with_input(BenchmarkId::new(name, lines), &lines, |b, _| {
                b.iter_custom(|iterations| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        counter += 1;
                        let after = Rope::from_str(&text_of(lines, counter));
                        let texts = [DocumentTexts { before: Some(before.clone()), after: Some(after.clone()) }];
                        before = after;
                        KeptTexts::flush(Duration::from_secs(60));
                        rustix::fs::sync();
                        std::thread::sleep(Duration::from_millis(2));
                        let kept = if keep { &texts[..] } else { &[] };
                        let start = Instant::now();
                        std::hint::black_box(journal.record(&write_info(), &roots, &results, None, kept));
                        total += start.elapsed();
                        drop(texts);
                    }
                    total
                });
            });
        }
        let mut before = Rope::from_str(&text_of(lines, 0));
        group.bench_with_input(BenchmarkId::new("with_texts_on_disk", lines), &lines, |b, _| {
            b.iter_batched(
                || {
                    counter += 1;
                    let after = Rope::from_str(&text_of(lines, counter));
                    let texts = DocumentTexts { before: Some(before.clone()), after: Some(after.clone()) };
                    before = after;
                    texts
                },
                |texts| {
                    let texts = [texts];
                    journal.record(&write_info(), &roots, &results, None, &texts);
                    KeptTexts::flush(Duration::from_secs(60));
                    texts
                },
                criterion::BatchSize::PerIteration,
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

/// What an editor's timeline asks for (the newest 500 edits), through the server's
/// cache of the journal: read for the first time (`cold`), and read before (`warm`:
/// every later open, and each refresh after a write, which reads only the new line).
fn timeline_newest_500_of_10000(c: &mut Criterion) {
    let state = tempfile::tempdir().unwrap();
    let file = journal_of(state.path(), 10_000);
    let files = std::slice::from_ref(&file);
    let filter = Filter { max_edits: Some(500), ..Filter::default() };
    let answer = |cache: &JournalCache| {
        let all = cache.read(files).unwrap();
        let result = timeline::timeline(&all, &Marks::read(files), &filter);
        assert!(result.truncated && result.edits == 10_000);
        serde_json::to_vec(&result).unwrap().len()
    };
    c.bench_function("timeline_newest_500_of_10000_cold", |b| b.iter(|| answer(&JournalCache::default())));
    let cache = JournalCache::default();
    answer(&cache);
    c.bench_function("timeline_newest_500_of_10000_warm", |b| b.iter(|| answer(&cache)));
    println!("answer: {} bytes", answer(&cache));
}

criterion_group!(benches, journaling, timeline_of_10000, timeline_newest_500_of_10000);
criterion_main!(benches);
