//! Replaying quotes with one slipped letter over real code (issue 26): blocks of
//! the Rust sources under `~/.cargo/registry/src` (real code in many styles; the
//! project's own sources when there are none), each quoted with one letter
//! changed, added or removed, sent as a headless `verbatim/strReplace`. Every case
//! must be refused as `notFound`, leave the file's bytes as they were, and show the
//! real line in the text the agent reads (the CLI's rendering of the error).
//!
//! The sample is deterministic for a given registry: the paths sorted, then picked
//! by a fixed-seed generator, and bounded so that a debug build runs it in seconds.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod common;

use std::path::{Path, PathBuf};

use common::Random;
use serde_json::json;
use verbatim::frontend::render::{self, Vocabulary};
use verbatim::service::error::ErrorKind;
use verbatim_engine::quote::count_up_to;

/// Files sampled, and quotes made from each.
const FILES: usize = 150;
const QUOTES_PER_FILE: usize = 3;
/// Files larger than this are not sampled: in a debug build a larger file could take the
/// search near its deadline (`near_miss::DEADLINE`) on a loaded machine, and the replay is
/// about what is shown, not about the bound (the unit tests hold that).
const MAX_FILE_BYTES: u64 = 64_000;

fn rust_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            rust_files(&path, out);
        } else if kind.is_file()
            && path.extension().is_some_and(|extension| extension == "rs")
            && entry.metadata().is_ok_and(|meta| (1_000..=MAX_FILE_BYTES).contains(&meta.len()))
        {
            out.push(path);
        }
    }
}

/// The registry's Rust sources, sorted; the project's own when there are none.
fn sources() -> Vec<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let mut files = Vec::new();
    if let Some(cargo_home) = cargo_home {
        rust_files(&cargo_home.join("registry").join("src"), &mut files);
    }
    if files.is_empty() {
        rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("engine").join("src"), &mut files);
    }
    files.sort();
    files
}

/// One letter of `block` changed, added or removed (by `kind`), at a letter chosen by `random`.
fn slip(block: &str, kind: usize, random: &mut Random) -> Option<String> {
    let letters: Vec<(usize, char)> = block.char_indices().filter(|(_, c)| c.is_ascii_alphabetic()).collect();
    if letters.is_empty() {
        return None;
    }
    let (at, letter) = letters[random.below(letters.len())];
    let other = {
        let base = if letter.is_ascii_uppercase() { b'A' } else { b'a' };
        let shifted = (letter as u8 - base + 1 + random.below(24) as u8) % 26;
        (base + shifted) as char
    };
    let mut out = String::with_capacity(block.len() + 1);
    out.push_str(&block[..at]);
    match kind % 3 {
        0 => out.push(other),
        1 => {
            out.push(other);
            out.push(letter);
        }
        _ => {}
    }
    out.push_str(&block[at + 1..]);
    Some(out)
}

#[test]
fn a_quote_with_one_slipped_letter_is_refused_and_shows_the_real_line() {
    let files = sources();
    assert!(!files.is_empty(), "no Rust sources to replay");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let headless = common::replay_headless(&root);
    let mut random = Random(0x2026_1202_0026_0001);
    let (mut cases, mut shown, mut two_regions, mut asked_again) = (0usize, 0usize, 0usize, 0usize);
    let mut lowest: Option<(f64, String)> = None;
    let mut slowest: Option<(std::time::Duration, String)> = None;
    let mut failures = Vec::new();
    for pick in 0..FILES {
        let source = &files[random.below(files.len())];
        let Ok(text) = std::fs::read_to_string(source) else { continue };
        if text.contains('\r') {
            continue;
        }
        let path = root.join(format!("f{pick}.rs"));
        std::fs::write(&path, &text).unwrap();
        let rope = ropey::Rope::from_str(&text);
        let lines: Vec<&str> = text.lines().collect();
        for quote_index in 0..QUOTES_PER_FILE {
            let height = 1 + random.below(4);
            let start = random.below(lines.len().saturating_sub(height));
            let block_lines = &lines[start..(start + height).min(lines.len())];
            let block = block_lines.join("\n");
            if block.chars().filter(|c| !c.is_whitespace()).count() < 12 {
                continue;
            }
            let Some(quote) = slip(&block, pick * QUOTES_PER_FILE + quote_index, &mut random) else { continue };
            // The slipped quote must not be in the file (it can be, e.g. a removed letter).
            if count_up_to(&rope, &quote, 0..rope.len_bytes(), 1) > 0 {
                continue;
            }
            let changed_line = block_lines
                .iter()
                .zip(quote.lines().chain(std::iter::repeat("")))
                .find(|(real, quoted)| **real != *quoted)
                .map(|(real, _)| *real)
                .unwrap();
            cases += 1;
            let label = format!("{} line {} ({height} lines)", source.display(), start + 1);
            // The search stops at its deadline (`near_miss::DEADLINE`, wall-clock time): on
            // a machine loaded enough to reach it, a case is asked again, at most twice.
            // A wrong answer is wrong every time and still fails.
            let mut attempt = 0;
            let (error, took, shown_text, real_line_shown) = loop {
                attempt += 1;
                let started = std::time::Instant::now();
                let answer = headless.call(
                    "verbatim/strReplace",
                    json!({"uri": path.to_str().unwrap(), "oldStr": quote, "newStr": "REPLACED", "summary": "replay"}),
                );
                let took = started.elapsed();
                assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{label}: the file was written");
                let error = match answer {
                    Ok(result) => panic!("{label}: a slipped quote was applied: {result}"),
                    Err(error) => error,
                };
                assert_eq!(error.kind, ErrorKind::NotFound, "{label}: {}", error.message);
                let shown_text = render::error(&error, Vocabulary::Cli);
                let real_line_shown = shown_text.contains(&format!(" | {changed_line}\n"))
                    || shown_text.ends_with(&format!(" | {changed_line}"));
                if real_line_shown || attempt == 3 {
                    break (error, took, shown_text, real_line_shown);
                }
                asked_again += 1;
            };
            if real_line_shown {
                shown += 1;
            } else {
                failures.push(format!("{label}: quote {quote:?}, real line {changed_line:?}\n{shown_text}"));
            }
            if error.data.contains_key("alsoClose") {
                two_regions += 1;
            }
            let similarity =
                error.data.get("closest").and_then(|closest| closest["similarity"].as_f64()).unwrap_or(0.0);
            if lowest.as_ref().is_none_or(|(lowest, _)| similarity < *lowest) {
                lowest = Some((similarity, label.clone()));
            }
            if slowest.as_ref().is_none_or(|(slowest, _)| took > *slowest) {
                slowest = Some((took, label));
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
    println!(
        "replay: {shown} of {cases} slipped quotes showed the real line ({} files sampled of {}); {two_regions} showed \
         two regions; lowest similarity shown {lowest:?}; slowest {slowest:?}; {asked_again} asked again (the \
         deadline reached)",
        FILES,
        files.len()
    );
    assert!(cases >= 100, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases did not show the real line:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
