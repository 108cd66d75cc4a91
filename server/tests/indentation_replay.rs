//! Replaying real history as `apply_patch` patches with slipped indentation (issue
//! 34). The history is the registry's own: crates kept in two versions under
//! `~/.cargo/registry/src` give each file that changed between them as an old and
//! a new text. Their diff (3 lines of context) becomes a patch of two or more
//! hunks, sent headless as `verbatim/applyPatch`, clean or with one hunk slipped:
//!
//! - `contextShifted`: its context and removed lines one level deeper, its added
//!   lines right (the file's own indentation);
//! - `wholeHunkShifted`: every line of it one level deeper;
//! - `tabsForSpaces`: its indentation written with tabs where the file has spaces
//!   (or the reverse), every level kept.
//!
//! Each outcome is counted: recovered (the file is the new version), refused
//! (an error, the file's bytes as they were) or wrong (anything else written).
//! Nothing may be wrong and no refusal may leave a write behind. One more outcome is
//! the protocol's own and counted apart: a slip that makes the hunk's old lines occur
//! exactly elsewhere in the file (three closing braces one level deeper, say) is an
//! exact quote of that place, applied there as sent (`exactElsewhere`). With
//! `VERBATIM_REPLAY_DUMP=<dir>` every case is also written there (old text, new
//! text, patch) for `tests/agents/codex_apply_patch_replay.py` to replay through Codex's
//! own `apply_patch`. `VERBATIM_REPLAY_MAX=<n>` takes up to `n` files instead of
//! [`MAX_FILES`] (and `CARGO_HOME` may point at any registry, a vendored one too).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::Random;
use serde_json::json;
use verbatim_engine::diff::unified_diff_of_texts;

/// Version pairs' changed files replayed at most, and how large a file may be.
const MAX_FILES: usize = 160;
const MAX_FILE_BYTES: usize = 60_000;

const SLIPS: [&str; 4] = ["clean", "contextShifted", "wholeHunkShifted", "tabsForSpaces"];

/// `(old, new)` of every `.rs` file that changed between two versions of a crate in
/// the registry, in a stable order.
fn history() -> Vec<(String, String, String)> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let Some(cargo_home) = cargo_home else { return Vec::new() };
    let mut crates: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let Ok(registries) = std::fs::read_dir(cargo_home.join("registry").join("src")) else { return Vec::new() };
    for registry in registries.flatten() {
        let Ok(entries) = std::fs::read_dir(registry.path()) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(dash) = name.rfind('-') else { continue };
            if name[dash + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                crates.entry(name[..dash].to_owned()).or_default().push(entry.path());
            }
        }
    }
    let mut out = Vec::new();
    for versions in crates.values_mut() {
        versions.sort();
        for pair in versions.windows(2) {
            let mut files = Vec::new();
            rust_files(&pair[0], &pair[0], &mut files);
            files.sort();
            for relative in files {
                let (Ok(old), Ok(new)) = (
                    std::fs::read_to_string(pair[0].join(&relative)),
                    std::fs::read_to_string(pair[1].join(&relative)),
                ) else {
                    continue;
                };
                let plain = |text: &str| text.ends_with('\n') && !text.contains('\r') && text.len() <= MAX_FILE_BYTES;
                if old != new && plain(&old) && plain(&new) {
                    out.push((format!("{}/{}", pair[1].display(), relative.display()), old, new));
                }
            }
        }
    }
    out
}

fn rust_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|extension| extension == "rs")
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push(relative.to_path_buf());
        }
    }
}

/// The hunks of a unified diff: each line with its marker (` `, `-`, `+`).
fn hunks(diff: &str) -> Vec<Vec<(char, String)>> {
    let mut out: Vec<Vec<(char, String)>> = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@") {
            out.push(Vec::new());
        } else if let Some(hunk) = out.last_mut()
            && let Some(marker) = line.chars().next().filter(|c| matches!(c, ' ' | '-' | '+'))
        {
            hunk.push((marker, line[1..].to_owned()));
        }
    }
    out
}

/// The file's indentation unit: a tab, or four spaces.
fn unit_of(text: &str) -> &'static str {
    if text.lines().any(|line| line.starts_with('\t')) { "\t" } else { "    " }
}

/// One hunk slipped as `slip` says.
fn slipped(hunk: &[(char, String)], slip: &str, unit: &str) -> Vec<(char, String)> {
    let deeper = |line: &str| if line.trim().is_empty() { line.to_owned() } else { format!("{unit}{line}") };
    let other_kind = |line: &str| {
        let body = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - body.len()];
        let converted = if unit == "\t" { indent.replace('\t', "    ") } else { indent.replace("    ", "\t") };
        format!("{converted}{body}")
    };
    hunk.iter()
        .map(|(marker, line)| {
            let line = match (slip, marker) {
                ("contextShifted", ' ' | '-') | ("wholeHunkShifted", _) => deeper(line),
                ("tabsForSpaces", _) => other_kind(line),
                _ => line.clone(),
            };
            (*marker, line)
        })
        .collect()
}

fn patch(name: &str, hunks: &[Vec<(char, String)>]) -> String {
    let mut out = format!("*** Begin Patch\n*** Update File: {name}\n");
    for hunk in hunks {
        out.push_str("@@\n");
        for (marker, line) in hunk {
            out.push(*marker);
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("*** End Patch\n");
    out
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    recovered: usize,
    refused: usize,
    wrong: usize,
    partial: usize,
    exact_elsewhere: usize,
}

#[test]
fn slipped_indentation_in_real_patches_is_applied_exactly_or_refused() {
    let history = history();
    if history.is_empty() {
        println!("indentation replay: no crate in the registry has two versions; nothing to replay");
        return;
    }
    let dump = std::env::var_os("VERBATIM_REPLAY_DUMP").map(PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let headless = common::replay_headless(&root);
    let mut random = Random(0x2026_1203_0034_0001);
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut case = 0usize;
    let max_files = std::env::var("VERBATIM_REPLAY_MAX").ok().and_then(|max| max.parse().ok()).unwrap_or(MAX_FILES);
    let step = (history.len() / max_files).max(1);
    for (source, old, new) in history.iter().step_by(step).take(max_files) {
        let diff = unified_diff_of_texts(old, new, "a", "b");
        let hunks = hunks(&diff);
        if hunks.len() < 2 {
            continue;
        }
        let unit = unit_of(old);
        let chosen = random.below(hunks.len());
        for slip in SLIPS {
            let mut sent = hunks.clone();
            sent[chosen] = slipped(&hunks[chosen], slip, unit);
            // A slip that leaves the old lines as they are is no slip of the quote: an
            // exact quote writes its new lines as sent.
            let old_side = |hunk: &[(char, String)]| -> Vec<String> {
                hunk.iter().filter(|(marker, _)| *marker != '+').map(|(_, line)| line.clone()).collect()
            };
            if slip != "clean" && old_side(&sent[chosen]) == old_side(&hunks[chosen]) {
                continue;
            }
            let name = format!("f{case}.rs");
            let path = root.join(&name);
            std::fs::write(&path, old).unwrap();
            let text = patch(&name, &sent);
            if let Some(dump) = &dump {
                let case_dir = dump.join(format!("{case:05}-{slip}"));
                std::fs::create_dir_all(&case_dir).unwrap();
                std::fs::write(case_dir.join("old"), old).unwrap();
                std::fs::write(case_dir.join("new"), new).unwrap();
                std::fs::write(case_dir.join("patch"), text.replace(&name, "f.rs")).unwrap();
            }
            let slipped_lines: String = old_side(&sent[chosen]).iter().map(|line| format!("{line}\n")).collect();
            let exact_elsewhere = slip != "clean" && format!("\n{old}").contains(&format!("\n{slipped_lines}"));
            let answer = headless.call("verbatim/applyPatch", json!({"patch": text, "summary": "replay"}));
            let written = std::fs::read_to_string(&path).unwrap();
            let tally = tallies.entry(slip).or_default();
            match answer {
                Ok(_) if written == *new => tally.recovered += 1,
                Ok(_) if exact_elsewhere => tally.exact_elsewhere += 1,
                Ok(_) => {
                    tally.wrong += 1;
                    wrong.push(format!("{slip} {source} (hunk {chosen}):\n{text}"));
                }
                Err(_) if written == *old => tally.refused += 1,
                Err(error) => {
                    tally.partial += 1;
                    wrong.push(format!("{slip} {source}: refused ({}) but written", error.message));
                }
            }
            std::fs::remove_file(&path).unwrap();
            case += 1;
        }
    }
    println!(
        "indentation replay: {} changed files in the registry's history, every {step}th taken ({max_files} at most)",
        history.len(),
    );
    for (slip, tally) in &tallies {
        println!(
            "indentation replay {slip}: {} recovered, {} refused, {} wrong, {} partial, {} exact elsewhere",
            tally.recovered, tally.refused, tally.wrong, tally.partial, tally.exact_elsewhere
        );
    }
    assert!(tallies.get("clean").is_some_and(|tally| tally.recovered + tally.refused > 20), "too few patches");
    assert!(wrong.is_empty(), "{} cases written wrong:\n\n{}", wrong.len(), wrong.join("\n\n"));
}
