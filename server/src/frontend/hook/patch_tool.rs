//! `apply_patch` in Codex's format (Codex's, and GitHub Copilot CLI's and opencode's
//! for GPT models), for the agents' pre-write hooks: the patch turned into the whole
//! new text of every file it adds, updates, moves or deletes, and the other way round,
//! the patch that writes exactly what the person kept.
//!
//! Each hunk is looked for exactly first, as Codex's own applier does; a patch that
//! applies exactly is allowed unchanged when every hunk is kept. One that applies only
//! through Verbatim's normalization ladder is reviewed as Verbatim reads it, and then
//! always answered with the reviewed texts as a new patch, so that what Codex writes is
//! what the person saw. A patch that does not apply is Codex's own error: no decision.

use std::path::Path;

use ropey::Rope;
use verbatim_engine::agent_tools::{add_file_lines, update_hunks};
use verbatim_engine::hunk::{HunkRules, plan_hunks};
use verbatim_engine::patch::{self, FileChange};

use super::{Proposed, ProposedWrite, absolute, disk_text};

/// The files the patch `text` would write (`asks`: the agent's mode would ask).
pub fn proposed(text: &str, cwd: &Path, asks: bool) -> Result<Proposed, String> {
    let parsed = patch::parse(text).map_err(|error| format!("the patch cannot be read ({error})"))?;
    let mut files: Vec<ProposedWrite> = Vec::new();
    let mut exact = true;
    let mut names = Vec::new();
    for operation in &parsed.operations {
        let path = absolute(cwd, &operation.path);
        let disk = disk_text(&path)?;
        names.push(operation.path.clone());
        match &operation.change {
            FileChange::Add { text } => {
                files.push(ProposedWrite { path, spelled: operation.path.clone(), disk, text: Some(text.clone()) })
            }
            FileChange::Delete => {
                if disk.is_none() {
                    return Err(format!("the patch deletes {}, which does not exist", operation.path));
                }
                files.push(ProposedWrite { path, spelled: operation.path.clone(), disk, text: None });
            }
            FileChange::Update { hunks, move_to } => {
                let Some(before) = disk.as_deref() else {
                    return Err(format!("the patch updates {}, which does not exist", operation.path));
                };
                let (new_text, was_exact) = apply_hunks(before, hunks)
                    .ok_or_else(|| format!("the patch's hunks for {} do not apply", operation.path))?;
                exact &= was_exact;
                match move_to {
                    None => {
                        files.push(ProposedWrite { path, spelled: operation.path.clone(), disk, text: Some(new_text) })
                    }
                    Some((to, _)) => {
                        let target = absolute(cwd, to);
                        let target_disk = disk_text(&target)?;
                        files.push(ProposedWrite { path, spelled: operation.path.clone(), disk, text: None });
                        files.push(ProposedWrite {
                            path: target,
                            spelled: to.clone(),
                            disk: target_disk,
                            text: Some(new_text),
                        });
                    }
                }
            }
            FileChange::Replace { .. } => return Err("a SEARCH/REPLACE block is not an apply_patch patch".into()),
        }
    }
    if files.is_empty() {
        return Err("the patch changes no file".into());
    }
    Ok(Proposed { files, summary: format!("apply_patch {}", names.join(", ")), asks, exact })
}

/// The text after the hunks, and whether they all matched exactly.
fn apply_hunks(before: &str, hunks: &[patch::Hunk]) -> Option<(String, bool)> {
    let rope = Rope::from_str(before);
    for exact in [true, false] {
        let planned: Option<Vec<_>> =
            plan_hunks(&rope, hunks, HunkRules { in_order: true, exact }).into_iter().map(Result::ok).collect();
        let Some(planned) = planned else { continue };
        let mut replacements: Vec<_> = planned.into_iter().flat_map(|planned| planned.replacements).collect();
        replacements.sort_by_key(|replacement| replacement.range.start);
        if replacements.windows(2).any(|pair| pair[0].range.end > pair[1].range.start) {
            return None;
        }
        return Some((verbatim_engine::plan::apply(&rope, &replacements).to_string(), exact));
    }
    None
}

/// The patch that writes `kept` (per file of `proposed`, `None` where the file is to
/// be gone) over the disk as it is now. `Ok(None)` when nothing is left to write (the
/// editor already deleted what was to be deleted).
pub fn rewrite(proposed: &Proposed, kept: &[Option<&str>]) -> Result<Option<String>, String> {
    let mut patch = String::from("*** Begin Patch\n");
    let mut any = false;
    for (file, kept) in proposed.files.iter().zip(kept) {
        let now = disk_text(&file.path)?;
        match (now.as_deref(), kept) {
            (None, None) => {}
            (Some(_), None) => {
                patch.push_str(&format!("*** Delete File: {}\n", file.spelled));
                any = true;
            }
            (None, Some(text)) => {
                patch.push_str(&format!("*** Add File: {}\n{}", file.spelled, add_file_lines(text)));
                any = true;
            }
            (Some(disk), Some(text)) if disk == *text => {}
            (Some(disk), Some(text)) => {
                match update_hunks(disk, text) {
                    Some(hunks) => patch.push_str(&format!("*** Update File: {}\n{hunks}", file.spelled)),
                    // An empty file: written whole.
                    None => patch.push_str(&format!("*** Add File: {}\n{}", file.spelled, add_file_lines(text))),
                }
                any = true;
            }
        }
    }
    patch.push_str("*** End Patch\n");
    Ok(any.then_some(patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_updates_moves_and_deletes_become_whole_texts() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("write");
        std::fs::write(dir.path().join("old.txt"), "x\n").expect("write");
        std::fs::write(dir.path().join("gone.txt"), "bye\n").expect("write");
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n\
                     *** Update File: old.txt\n*** Move to: moved.txt\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\n";
        let proposed = super::proposed(patch, dir.path(), false).expect("read");
        let texts: Vec<(String, Option<&str>)> =
            proposed.files.iter().map(|file| (file.spelled.clone(), file.text.as_deref())).collect();
        assert_eq!(
            texts,
            vec![
                ("new.txt".into(), Some("hello\n")),
                ("a.txt".into(), Some("one\nTWO\n")),
                ("old.txt".into(), None),
                ("moved.txt".into(), Some("y\n")),
                ("gone.txt".into(), None),
            ]
        );
        assert!(proposed.exact);
        assert!(!proposed.asks);
    }

    #[test]
    fn a_patch_that_does_not_apply_gives_no_proposal() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+y\n*** End Patch\n";
        assert!(proposed(patch, dir.path(), false).is_err());
        assert!(proposed("not a patch", dir.path(), false).is_err());
    }

    #[test]
    fn the_rewritten_patch_writes_exactly_what_was_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let disk = "a\nb\nc\nd\ne\nf\ng\nh\n";
        std::fs::write(dir.path().join("f.txt"), disk).expect("write");
        let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n@@\n-h\n+H\n*** End Patch\n";
        let proposed = super::proposed(patch, dir.path(), false).expect("read");
        let rewritten = rewrite(&proposed, &[Some("A\nb\nc\nd\ne\nf\ng\nh\n")]).expect("rewrite").expect("a patch");
        let parsed = patch::parse(&rewritten).expect("parses");
        let FileChange::Update { hunks, .. } = &parsed.operations[0].change else { panic!("an update") };
        let (text, exact) = apply_hunks(disk, hunks).expect("applies");
        assert_eq!(text, "A\nb\nc\nd\ne\nf\ng\nh\n");
        assert!(exact);
        // Nothing kept of a file: it is left out of the patch; nothing at all: no patch.
        assert_eq!(rewrite(&proposed, &[Some(disk)]), Ok(None));
    }
}
