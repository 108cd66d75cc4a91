//! Planning the revert of a session of 200 edits over 50 files (issue 33). Each file has
//! 1,000 code-like lines (closing braces and blank lines repeat, as in real code) and
//! took 4 of the session's edits (1 to 3 lines replaced by 1 to 5), each followed by
//! someone else's change of one line elsewhere in the file; in one file of five, the last
//! of those lands on the line right after the session's last edit: a conflict, so that
//! the forced text is followed too. What is measured is planning all 50 files, as
//! `verbatim/revert --session` does, from texts already read.
#![allow(clippy::unwrap_used)]

#[path = "../../benches/support.rs"]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};

use verbatim_engine::revert::{Recorded, plan_revert};

const FILES: usize = 50;
const LINES: usize = 1_000;
const EDITS_PER_FILE: usize = 4;

/// One file: its session edits (before, after), oldest first, and its text now.
struct File {
    changes: Vec<(String, String)>,
    current: String,
}

fn file(index: usize) -> File {
    let mut lines: Vec<String> = (0..LINES)
        .map(|i| match i % 10 {
            4 => "    }\n".to_owned(),
            9 => "\n".to_owned(),
            _ => support::line(index * LINES + i),
        })
        .collect();
    let mut random = support::Random::new(index as u64 + 1);
    let conflicted = index.is_multiple_of(5);
    let mut changes = Vec::new();
    for edit in 0..EDITS_PER_FILE {
        let before = lines.concat();
        let at = random.below(lines.len() - 10);
        let removed = 1 + random.below(3);
        let added = 1 + random.below(5);
        lines.splice(at..at + removed, (0..added).map(|j| format!("        session_{edit}_{j}();\n")));
        changes.push((before, lines.concat()));
        let other = if conflicted && edit == EDITS_PER_FILE - 1 {
            at + added
        } else {
            (at + added + 100 + random.below(LINES - 200)) % lines.len()
        };
        lines[other] = format!("        typed_{edit}();\n");
    }
    File { changes, current: lines.concat() }
}

fn revert(c: &mut Criterion) {
    let files: Vec<File> = (0..FILES).map(file).collect();
    let plan_all = || {
        files
            .iter()
            .map(|file| {
                let recorded: Vec<Recorded<'_>> =
                    file.changes.iter().map(|(before, after)| Recorded { before, after }).collect();
                plan_revert(&recorded, &file.current)
            })
            .collect::<Vec<_>>()
    };
    // What is measured reverts every edit, and meets the conflicts it was built with.
    let plans = plan_all();
    let conflicts: usize = plans.iter().map(|plan| plan.conflicts.len()).sum();
    let replacements: usize = plans.iter().map(|plan| plan.replacements.len()).sum();
    assert!(conflicts >= FILES / 5 && replacements >= FILES * EDITS_PER_FILE - 2 * conflicts);
    let mut group = c.benchmark_group("revert");
    group.sample_size(20);
    group.bench_function("session_200_edits_50_files_1000_lines", |b| b.iter(plan_all));
    group.finish();
}

criterion_group!(benches, revert);
criterion_main!(benches);
