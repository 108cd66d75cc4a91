//! Target 1: finding a unique 80-character quote near the end of 1, 10 and 100 MB
//! documents (including the check that there is no second match), side by side
//! with `memchr::memmem` over the same text as one contiguous `&str`.
#![allow(clippy::unwrap_used)]

#[path = "support.rs"]
mod support;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memchr::memmem;
use ropey::Rope;

fn quote_search(c: &mut Criterion) {
    let mut group = c.benchmark_group("quote_search");
    group.sample_size(10);
    for megabytes in [1usize, 10, 100] {
        let text = support::code_like_text(megabytes * 1024 * 1024);
        let rope = Rope::from_str(&text);
        let (start, quote) = support::unique_quote_near_end(&text);
        assert_eq!(verbatim_engine::quote::find_all(&rope, quote, 0..text.len()), vec![start]);
        assert_eq!(memmem::find_iter(text.as_bytes(), quote.as_bytes()).count(), 1);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("verbatim_rope", megabytes), &megabytes, |b, _| {
            b.iter(|| verbatim_engine::quote::find_all(&rope, quote, 0..text.len()));
        });
        group.bench_with_input(BenchmarkId::new("memmem_contiguous", megabytes), &megabytes, |b, _| {
            let finder = memmem::Finder::new(quote.as_bytes());
            b.iter(|| finder.find_iter(text.as_bytes()).count());
        });
    }
    group.finish();
}

criterion_group!(benches, quote_search);
criterion_main!(benches);
