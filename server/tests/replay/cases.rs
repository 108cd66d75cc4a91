//! A slipped hunk sent in one dialect: a quote edit (`verbatim/strReplace`, the
//! path `verbatim edit --headless` takes), an `apply_patch` patch or SEARCH/REPLACE
//! blocks (both `verbatim/applyPatch`, the path of `verbatim patch`), with the text
//! the file should hold afterwards.

use serde_json::{Value, json};

use super::hunks::{Hunk, apply_one};
use super::slips::{Slip, slipped};
use crate::common::Random;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dialect {
    SingleEdit,
    ApplyPatch,
    SearchReplace,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::SingleEdit, Dialect::ApplyPatch, Dialect::SearchReplace];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::SingleEdit => "singleEdit",
            Dialect::ApplyPatch => "applyPatch",
            Dialect::SearchReplace => "searchReplace",
        }
    }
}

/// One request of the replay.
#[derive(Debug, Clone)]
pub struct Case {
    pub method: &'static str,
    pub params: Value,
    /// The patch's text (for the peers), when the dialect is a patch.
    pub patch: Option<String>,
    /// What the file should hold when the request is applied.
    pub intended: String,
    /// The slipped quote is exactly the text of some other place of the file, which
    /// an exact quote names as sent (counted apart, not wrong).
    pub exact_elsewhere: bool,
}

/// The file `name` (at `path`, holding `old`, which changed by `hunks`), with hunk
/// `chosen` slipped by `slip`, in `dialect`. `None` when the slip does not apply to
/// that hunk, or erases the change itself (a line changed in trailing whitespace
/// only, or an old side then equal to the new side).
pub fn case(
    dialect: Dialect,
    slip: Slip,
    (name, path, old): (&str, &str, &str),
    hunks: &[Hunk],
    chosen: usize,
    random: &mut Random,
) -> Option<Case> {
    let unit = super::hunks::unit_of(old);
    let hunk = &hunks[chosen];
    let split = |hunk: &Hunk| -> Vec<(char, String)> {
        let old_side = hunk.old_side().into_iter().map(|line| ('-', line));
        old_side.chain(hunk.new_side().into_iter().map(|line| ('+', line))).collect()
    };
    let sides = |lines: &[(char, String)]| -> (Vec<String>, Vec<String>) {
        let pick = |left_out: char| lines.iter().filter(|(m, _)| *m != left_out).map(|(_, l)| l.clone()).collect();
        (pick('+'), pick('-'))
    };
    if slip == Slip::TrailingWhitespace && changes_trailing_whitespace(hunk) {
        return None;
    }
    let sent = match dialect {
        Dialect::ApplyPatch => slipped(&hunk.lines, slip, unit, hunk.old_start + 1, random)?,
        Dialect::SingleEdit | Dialect::SearchReplace if slip == Slip::DroppedAnchor => return None,
        Dialect::SingleEdit | Dialect::SearchReplace => slipped(&split(hunk), slip, unit, hunk.old_start + 1, random)?,
    };
    let (quote, replacement) = sides(&sent);
    if quote.is_empty() || quote == replacement {
        return None;
    }
    // A quote edit's text may start and end inside lines; a hunk's or a block's lines are whole lines.
    let exact_elsewhere = slip != Slip::Clean
        && match dialect {
            Dialect::SingleEdit => old.contains(&quote.join("\n")),
            _ => format!("\n{old}").contains(&format!("\n{}\n", quote.join("\n"))),
        };
    match dialect {
        Dialect::SingleEdit => Some(Case {
            method: "verbatim/strReplace",
            params: json!({"uri": path, "oldStr": quote.join("\n"), "newStr": replacement.join("\n"), "summary": "replay"}),
            patch: None,
            intended: apply_one(old, hunk),
            exact_elsewhere,
        }),
        Dialect::ApplyPatch => {
            if slip == Slip::DroppedAnchor && chosen == 0 {
                // The first hunk of a file may omit its `@@` line: no slip.
                return None;
            }
            let text = |file: &str| apply_patch(file, hunks, chosen, &sent, slip == Slip::DroppedAnchor);
            Some(patch_case(text(path), text(name), intended_all(old, hunks), exact_elsewhere))
        }
        Dialect::SearchReplace => {
            let blocks: Vec<Vec<(char, String)>> =
                hunks.iter().enumerate().map(|(i, h)| if i == chosen { sent.clone() } else { split(h) }).collect();
            let text = |file: &str| search_replace(file, &blocks);
            Some(patch_case(text(path), text(name), intended_all(old, hunks), exact_elsewhere))
        }
    }
}

/// Whether an added line differs from a line the hunk reads (context or removed) only
/// in trailing whitespace: a slip in trailing whitespace erases that change itself
/// (which of the two the new line is can no longer be told), so the case is not
/// counted.
fn changes_trailing_whitespace(hunk: &Hunk) -> bool {
    let read = || hunk.lines.iter().filter(|(marker, _)| *marker != '+').map(|(_, line)| line);
    let added = hunk.lines.iter().filter(|(marker, _)| *marker == '+').map(|(_, line)| line);
    added.into_iter().any(|added| read().any(|line| line != added && line.trim_end() == added.trim_end()))
}

/// A patch case: the request names the file by its absolute path, the peers' copy
/// by its bare name (they run in the file's folder).
fn patch_case(sent: String, for_peers: String, intended: String, exact_elsewhere: bool) -> Case {
    let params = json!({"patch": sent, "summary": "replay"});
    Case { method: "verbatim/applyPatch", params, patch: Some(for_peers), intended, exact_elsewhere }
}

/// `old` with every hunk applied, from the last up so that earlier line numbers hold.
fn intended_all(old: &str, hunks: &[Hunk]) -> String {
    hunks.iter().rev().fold(old.to_owned(), |text, hunk| apply_one(&text, hunk))
}

/// An `apply_patch` patch of every hunk, hunk `chosen` as `sent`, its `@@` line
/// left out when `drop_anchor`.
pub fn apply_patch(name: &str, hunks: &[Hunk], chosen: usize, sent: &[(char, String)], drop_anchor: bool) -> String {
    let mut out = format!("*** Begin Patch\n*** Update File: {name}\n");
    for (index, hunk) in hunks.iter().enumerate() {
        let lines = if index == chosen { sent } else { &hunk.lines[..] };
        if !(drop_anchor && index == chosen) {
            out.push_str("@@\n");
        }
        for (marker, line) in lines {
            out.push(*marker);
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("*** End Patch\n");
    out
}

/// SEARCH/REPLACE blocks as Aider's prompts ask for them: the file's name, a fence,
/// then the block; one per hunk, each given as its two sides (`-` and `+` lines).
pub fn search_replace(name: &str, blocks: &[Vec<(char, String)>]) -> String {
    let mut out = String::new();
    for block in blocks {
        out.push_str(&format!("{name}\n```\n<<<<<<< SEARCH\n"));
        let side = |marker: char| block.iter().filter(move |(m, _)| *m == marker).map(|(_, line)| line.as_str());
        side('-').for_each(|line| out.push_str(&format!("{line}\n")));
        out.push_str("=======\n");
        side('+').for_each(|line| out.push_str(&format!("{line}\n")));
        out.push_str(">>>>>>> REPLACE\n```\n\n");
    }
    out
}
