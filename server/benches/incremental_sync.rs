//! Target 2: a one-character `didChange` at a random position of a 1,000,000-line
//! document, UTF-16 position conversion included, against rebuilding a `String`;
//! and a 10,000-change burst that must leave the rope exact.
#![allow(clippy::unwrap_used)]

#[path = "support.rs"]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use ropey::Rope;
use verbatim_engine::position::{Position, PositionEncoding};
use verbatim_engine::text_change::{TextChange, apply_change};

const LINES: usize = 1_000_000;

fn document() -> String {
    (0..LINES).map(support::line).collect()
}

/// 10,000 random one-character changes (inserts and deletes) applied to the rope
/// and to an independent model (one `String` per line); they must agree exactly.
fn burst_keeps_the_rope_exact(text: &str) {
    let mut rope = Rope::from_str(text);
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    let mut random = support::Random::new(7);
    for step in 0..10_000 {
        let line = random.below(LINES);
        let column = random.below(20);
        let position = Position::new(line as u32, column as u32);
        // The byte offset of UTF-16 column `column` in the model's line.
        let model_line = &mut lines[line];
        let mut units = 0;
        let offset = model_line
            .char_indices()
            .find(|(_, ch)| {
                let reached = units >= column;
                units += ch.len_utf16();
                reached
            })
            .map_or(model_line.len(), |(offset, _)| offset);
        if step % 3 == 2 {
            let end = Position::new(line as u32, column as u32 + 1);
            apply_change(
                &mut rope,
                &TextChange { range: Some(position..end), text: String::new() },
                PositionEncoding::Utf16,
            );
            let width = model_line[offset..].chars().next().map_or(0, char::len_utf8);
            model_line.replace_range(offset..offset + width, "");
        } else {
            apply_change(
                &mut rope,
                &TextChange { range: Some(position..position), text: "é".into() },
                PositionEncoding::Utf16,
            );
            model_line.insert(offset, 'é');
        }
    }
    assert!(rope == lines.concat().as_str(), "the rope drifted from the model");
}

fn incremental_sync(c: &mut Criterion) {
    let text = document();
    burst_keeps_the_rope_exact(&text);
    let mut group = c.benchmark_group("incremental_sync");
    let mut rope = Rope::from_str(&text);
    let mut random = support::Random::new(11);
    group.bench_function("rope_one_char_utf16", |b| {
        b.iter(|| {
            let position = Position::new(random.below(LINES) as u32, random.below(20) as u32);
            apply_change(
                &mut rope,
                &TextChange { range: Some(position..position), text: "x".into() },
                PositionEncoding::Utf16,
            );
        });
    });
    group.sample_size(10);
    let mut random = support::Random::new(13);
    group.bench_function("string_rebuild_one_char", |b| {
        b.iter(|| {
            let offset = random.below(text.len() - 1);
            let offset = (0..=offset).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let mut rebuilt = String::with_capacity(text.len() + 1);
            rebuilt.push_str(&text[..offset]);
            rebuilt.push('x');
            rebuilt.push_str(&text[offset..]);
            rebuilt
        });
    });
    group.finish();
}

criterion_group!(benches, incremental_sync);
criterion_main!(benches);
