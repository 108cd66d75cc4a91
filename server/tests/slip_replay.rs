//! The fast sample of the slip replay (issue 43): a few real `(old, new)` pairs per
//! language, committed under `tests/fixtures/slip_replay/` with their origin, each
//! replayed as a quote edit, an `apply_patch` patch and SEARCH/REPLACE blocks with
//! every slip (see `replay/slips.rs`). The full replay over whole histories is the
//! benchmark `benches/slip_replay.rs`; its figures are in BENCHMARKS.md.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod common;
mod replay;

use replay::cases::Dialect;
use replay::outcome::{Tallies, Tally, tables};
use replay::slips::Slip;

#[test]
fn real_changes_with_every_slip_are_applied_exactly_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let headless = common::replay_headless(&root);
    let mut tallies = Tallies::new();
    let mut failures = Vec::new();
    let languages = replay::runner::replay_fixtures(&headless, &root, None, &mut tallies, &mut failures);
    println!("{}", tables(&tallies));
    assert!(languages >= 5, "the sample has {languages} languages");
    let total = |dialect: Dialect, slip: Slip| {
        let mut sum = Tally::default();
        tallies.iter().filter(|((_, d, s), _)| *d == dialect && *s == slip).for_each(|(_, tally)| sum.merge(tally));
        sum
    };
    for dialect in Dialect::ALL {
        let clean = total(dialect, Slip::Clean);
        assert_eq!(clean.recovered, clean.cases(), "{}: clean cases not applied: {clean:?}", dialect.name());
        let typo = total(dialect, Slip::Typo);
        assert_eq!(
            typo.refused + typo.exact_elsewhere,
            typo.cases(),
            "{}: typos not refused: {typo:?}",
            dialect.name()
        );
    }
    let shown: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert!(shown.is_empty(), "{} cases written wrong or partly:\n\n{}", shown.len(), shown.join("\n\n"));
}
