//! The full slip replay (issue 43): real `(old, new)` pairs from the git histories
//! of public repositories, each replayed as a quote edit, an `apply_patch` patch and
//! SEARCH/REPLACE blocks with every slip, through the headless front-end; one table
//! per language and dialect. Not timed: it counts outcomes (see BENCHMARKS.md for the
//! repositories, how to fetch them, and the figures beside Codex and Aider).
//!
//! ```sh
//! cargo bench -p verbatim --bench slip_replay -- python=/path/to/requests.git go=/path/to/cobra.git
//! ```
//!
//! Each argument is `<language>=<git dir>` (languages: python, go, javascript,
//! typescript, rust, c); `VERBATIM_REPLAY_REPOS` may hold the same, space-separated.
//! `VERBATIM_REPLAY_MAX` pairs per language (150); `VERBATIM_REPLAY_DUMP=<dir>`
//! writes the patch cases for the peers' scripts and `failures.txt`;
//! `VERBATIM_REPLAY_FIXTURES=<dir>` writes the first small pairs of each language
//! as the fast sample's fixtures instead of replaying.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/replay/mod.rs"]
mod replay;

use std::path::{Path, PathBuf};

use replay::corpus::{Pair, extensions_of, from_git, write_fixtures};
use replay::outcome::{Tallies, tables};

/// Pairs written per language as fixtures, and how large each text may be.
const FIXTURES_PER_LANGUAGE: usize = 4;
const FIXTURE_MAX_BYTES: usize = 5_000;

/// `(language, git dir)` from the arguments and `VERBATIM_REPLAY_REPOS`.
fn repositories() -> Vec<(String, PathBuf)> {
    let from_env = std::env::var("VERBATIM_REPLAY_REPOS").unwrap_or_default();
    let words: Vec<String> = std::env::args().skip(1).chain(from_env.split_whitespace().map(str::to_owned)).collect();
    words
        .iter()
        .filter(|word| !word.starts_with("--"))
        .filter_map(|word| {
            let (language, dir) = word.split_once('=')?;
            if extensions_of(language).is_none() {
                eprintln!("slip replay: unknown language {language:?} (python, go, javascript, typescript, rust, c)");
                return None;
            }
            Some((language.to_owned(), PathBuf::from(dir)))
        })
        .collect()
}

/// `owner/name` for a mirror at `…/owner+name/repo`, else the directory's name.
fn label_of(dir: &Path) -> String {
    let named =
        if dir.file_name().is_some_and(|name| name == "repo" || name == ".git") { dir.parent() } else { Some(dir) };
    named
        .and_then(Path::file_name)
        .map_or_else(|| dir.display().to_string(), |name| name.to_string_lossy().replace('+', "/"))
}

fn main() {
    let repositories = repositories();
    let max = std::env::var("VERBATIM_REPLAY_MAX").ok().and_then(|max| max.parse().ok()).unwrap_or(150);
    let dump = std::env::var_os("VERBATIM_REPLAY_DUMP").map(PathBuf::from);
    let fixtures = std::env::var_os("VERBATIM_REPLAY_FIXTURES").map(PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let headless = common::replay_headless(&root);
    let mut tallies = Tallies::new();
    let mut failures = Vec::new();
    if repositories.is_empty() {
        // `cargo bench -- --test` (the test command's smoke run) and a first look: the
        // committed sample, the fast replay of `tests/slip_replay.rs`.
        println!("slip replay: no repository given (<language>=<git dir>, see BENCHMARKS.md): the committed sample");
        replay::runner::replay_fixtures(&headless, &root, dump.as_deref(), &mut tallies, &mut failures);
    }
    for (language, git_dir) in &repositories {
        let pairs = from_git(git_dir, &label_of(git_dir), extensions_of(language).unwrap(), max);
        println!("slip replay: {language}: {} pairs from {}", pairs.len(), git_dir.display());
        if let Some(fixtures) = &fixtures {
            let small: Vec<Pair> = pairs
                .into_iter()
                .filter(|pair| pair.old.len().max(pair.new.len()) <= FIXTURE_MAX_BYTES)
                .take(FIXTURES_PER_LANGUAGE)
                .collect();
            write_fixtures(fixtures, language, &small).unwrap();
            continue;
        }
        replay::runner::replay(&headless, &root, language, &pairs, dump.as_deref(), &mut tallies, &mut failures);
    }
    println!("{}", tables(&tallies));
    let shown: Vec<String> = failures.iter().map(ToString::to_string).collect();
    println!("slip replay: {} cases written wrong or partly", shown.len());
    match &dump {
        Some(dump) => std::fs::write(dump.join("failures.txt"), shown.join("\n\n")).unwrap(),
        None => shown.iter().take(10).for_each(|failure| println!("\n{failure}")),
    }
}
