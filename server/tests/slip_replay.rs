//! The fast sample of the slip replay (issue 43): a few real `(old, new)` pairs per
//! language, committed under `tests/fixtures/slip_replay/` with their origin, each
//! replayed as a quote edit, an `apply_patch` patch and SEARCH/REPLACE blocks with
//! every slip (see `replay/slips.rs`). The full replay over whole histories is the
//! benchmark `benches/slip_replay.rs`; its figures are in BENCHMARKS.md.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod common;
mod replay;

use std::path::Path;

use replay::cases::Dialect;
use replay::corpus::{LANGUAGES, from_fixtures};
use replay::outcome::{Tallies, Tally, tables};
use replay::slips::Slip;

#[test]
fn real_changes_with_every_slip_are_applied_exactly_or_refused() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("slip_replay");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let headless = common::replay_headless(&root);
    let mut tallies = Tallies::new();
    let mut failures = Vec::new();
    let mut languages = 0;
    for (language, _) in LANGUAGES {
        let pairs = from_fixtures(&fixtures, language);
        languages += usize::from(!pairs.is_empty());
        replay::runner::replay(&headless, &root, language, &pairs, None, &mut tallies, &mut failures);
    }
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
    let shown: Vec<String> = failures
        .iter()
        .map(|f| {
            format!(
                "{} {} {} {} ({:?}):\n{}",
                f.language,
                f.dialect.name(),
                f.slip.name(),
                f.origin,
                f.outcome,
                f.detail
            )
        })
        .collect();
    assert!(shown.is_empty(), "{} cases written wrong or partly:\n\n{}", shown.len(), shown.join("\n\n"));
}
