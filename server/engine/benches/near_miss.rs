//! `near_miss::closest` on a 100,000-line document (issue 26): a one-line quote
//! with one letter changed, a three-line quote with one letter changed in its
//! middle line, and a quote like nothing in the document (every line scanned, no
//! candidate worth comparing). Each case is first checked to find its line before
//! the deadline, so that what is measured is the whole search.
#![allow(clippy::unwrap_used)]

#[path = "../../benches/support.rs"]
mod support;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ropey::Rope;
use std::time::Instant;

use verbatim_engine::near_miss::{DEADLINE, search};

const LINES: usize = 100_000;

fn near_miss(c: &mut Criterion) {
    let text: String = (0..LINES).map(support::line).collect();
    let rope = Rope::from_str(&text);
    let target = LINES / 100 * 95;
    let one_line = support::line(target).replace("compute", "compote");
    let three_lines = format!(
        "{}{}{}",
        support::line(target),
        support::line(target + 1).replace("compute", "compote"),
        support::line(target + 2)
    );
    let cases = [
        ("one_line_typo", one_line.as_str()),
        ("three_lines_typo", three_lines.as_str()),
        ("nothing_alike", "completely unrelated words here\n"),
    ];
    let mut group = c.benchmark_group("near_miss_100k_lines");
    group.sample_size(10);
    for (name, quote) in cases {
        // What is measured is the whole search, not one cut short by its deadline.
        let found = search(&rope, quote, 0..text.len(), "doc", Instant::now() + DEADLINE);
        assert!(!found.work.timed_out, "{name}: {:?}", found.work);
        let first = found.regions.first().map(|near| near.lines.start);
        assert_eq!(first, (name != "nothing_alike").then_some(target), "{name}");
        group.bench_with_input(BenchmarkId::from_parameter(name), &quote, |b, quote| {
            b.iter(|| search(&rope, quote, 0..text.len(), "doc", Instant::now() + DEADLINE));
        });
    }
    group.finish();
}

criterion_group!(benches, near_miss);
criterion_main!(benches);
