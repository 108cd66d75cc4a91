//! Issue 42: what answering an agent after the editor's text sync costs on the
//! ordinary path, where nothing the editor sent is pending: the wait
//! (`EditorOrder::caught_up`) with the look at the editor's input it makes
//! (`InputAccount::unread`: a `FIONREAD` on stdin and three atomic loads). An
//! agent's round trip through the editor is milliseconds (`end_to_end`); this is the
//! part of it the causal order adds.

use criterion::{Criterion, criterion_group, criterion_main};
use verbatim::service::editor_order::EditorOrder;
use verbatim::transport::editor_input::InputAccount;

fn ordinary_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let order = EditorOrder::default();
    let account = std::sync::Arc::new(InputAccount::default());
    let watched = account.clone();
    order.watch_input(Box::new(move || watched.unread()));
    order.received();
    order.applied();
    c.bench_function("editor_order: caught up, nothing pending (FIONREAD included)", |b| {
        b.iter(|| runtime.block_on(order.caught_up()));
    });
    c.bench_function("editor_input: unread (FIONREAD on stdin, three atomics)", |b| b.iter(|| account.unread()));
}

criterion_group!(benches, ordinary_path);
criterion_main!(benches);
