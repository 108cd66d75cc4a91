//! Replaying real history as `apply_patch` patches with slipped indentation (issue
//! 34). The history is the registry's own: crates kept in two versions under
//! `~/.cargo/registry/src` give each file that changed between them as an old and
//! a new text. Their diff (3 lines of context) becomes a patch of two or more
//! hunks, sent headless as `verbatim/applyPatch`, clean or with one hunk slipped:
//!
//! - `contextShifted`: its context and removed lines one level deeper, its added
//!   lines right (the file's own indentation);
//! - `wholeHunkShifted`: every line of it one level deeper;
//! - `tabsForSpaces` (`spacesForTabs` in a file of tabs): its indentation written
//!   with tabs where the file has spaces (or the reverse), every level kept.
//!
//! The hunks, slips and patches are the slip replay's (`replay/`), which replays
//! more languages, dialects and slips as a benchmark (`benches/slip_replay.rs`).
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
mod replay;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::Random;
use replay::cases::apply_patch;
use replay::corpus::MAX_FILE_BYTES;
use replay::hunks::{hunks_between, unit_of};
use replay::outcome::{Outcome, Tally, classify};
use replay::slips::{Slip, slipped};
use serde_json::json;

/// Version pairs' changed files replayed at most.
const MAX_FILES: usize = 160;

const SLIPS: [Slip; 5] =
    [Slip::Clean, Slip::ContextShifted, Slip::WholeHunkShifted, Slip::TabsForSpaces, Slip::SpacesForTabs];

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
    let mut tallies: BTreeMap<Slip, Tally> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut case = 0usize;
    let max_files = std::env::var("VERBATIM_REPLAY_MAX").ok().and_then(|max| max.parse().ok()).unwrap_or(MAX_FILES);
    let step = (history.len() / max_files).max(1);
    for (source, old, new) in history.iter().step_by(step).take(max_files) {
        let hunks = hunks_between(old, new);
        if hunks.len() < 2 {
            continue;
        }
        let unit = unit_of(old);
        let chosen = random.below(hunks.len());
        for slip in SLIPS {
            let hunk = &hunks[chosen];
            let Some(sent) = slipped(&hunk.lines, slip, unit, hunk.old_start + 1, &mut random) else { continue };
            // A slip that leaves the old lines as they are is no slip of the quote: an
            // exact quote writes its new lines as sent.
            let old_side = |lines: &[(char, String)]| -> Vec<String> {
                lines.iter().filter(|(marker, _)| *marker != '+').map(|(_, line)| line.clone()).collect()
            };
            if slip != Slip::Clean && old_side(&sent) == hunk.old_side() {
                continue;
            }
            let name = format!("f{case}.rs");
            let path = root.join(&name);
            std::fs::write(&path, old).unwrap();
            let text = apply_patch(&name, &hunks, chosen, &sent, false);
            if let Some(dump) = &dump {
                let case_dir = dump.join(format!("{case:05}-{}", slip.name()));
                std::fs::create_dir_all(&case_dir).unwrap();
                std::fs::write(case_dir.join("old"), old).unwrap();
                std::fs::write(case_dir.join("new"), new).unwrap();
                std::fs::write(case_dir.join("patch"), text.replace(&name, "f.rs")).unwrap();
            }
            let slipped_lines: String = old_side(&sent).iter().map(|line| format!("{line}\n")).collect();
            let exact_elsewhere = slip != Slip::Clean && format!("\n{old}").contains(&format!("\n{slipped_lines}"));
            let answer = headless.call("verbatim/applyPatch", json!({"patch": text, "summary": "replay"}));
            let written = std::fs::read_to_string(&path).unwrap();
            let outcome = classify(answer.is_ok(), old, new, &written, exact_elsewhere);
            tallies.entry(slip).or_default().add(outcome);
            match (outcome, answer) {
                (Outcome::Wrong, _) => wrong.push(format!("{} {source} (hunk {chosen}):\n{text}", slip.name())),
                (Outcome::Partial, Err(error)) => {
                    wrong.push(format!("{} {source}: refused ({}) but written", slip.name(), error.message))
                }
                _ => {}
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
            "indentation replay {}: {} recovered, {} refused, {} wrong, {} partial, {} exact elsewhere",
            slip.name(),
            tally.recovered,
            tally.refused,
            tally.wrong,
            tally.partial,
            tally.exact_elsewhere
        );
    }
    assert!(tallies.get(&Slip::Clean).is_some_and(|tally| tally.recovered + tally.refused > 20), "too few patches");
    assert!(wrong.is_empty(), "{} cases written wrong:\n\n{}", wrong.len(), wrong.join("\n\n"));
}
