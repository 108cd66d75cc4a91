//! The patch dialects agents are trained on, parsed into file operations:
//! OpenAI's `apply_patch` format (`*** Begin Patch` … `*** End Patch`) and
//! SEARCH/REPLACE blocks. Pure text in, operations out: no files, no LSP; where the
//! operations land is `patching.rs`'s business.
//!
//! The `apply_patch` grammar follows the reference implementation in OpenAI's
//! Codex, with its tolerance: whitespace around the marker lines (`*** Begin
//! Patch`, `*** Update File: …`, `*** End of File`, …) is ignored, the patch may be
//! wrapped in a `<<'EOF'` heredoc, the first hunk of a file may omit its `@@` line,
//! and an empty line inside a hunk is an empty context line. Beyond the reference:
//! several `@@` lines in a row narrow the context step by step (as its
//! instructions describe), a git-style `@@ -1,3 +1,4 @@ fn f` header keeps only its
//! text, and empty lines at the end of a hunk separate hunks instead of quoting
//! empty lines. Every error names the 1-based line of the patch it is about.

use std::fmt;

/// Which dialect a patch was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI's `apply_patch`.
    ApplyPatch,
    /// `path`, `<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`.
    SearchReplace,
}

impl Format {
    /// The name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApplyPatch => "applyPatch",
            Self::SearchReplace => "searchReplace",
        }
    }
}

/// A parsed patch: file operations in the order the patch names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub format: Format,
    pub operations: Vec<FileOperation>,
}

/// What one part of a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOperation {
    /// The 1-based line of the patch where the operation starts.
    pub line: usize,
    /// The path as written in the patch.
    pub path: String,
    pub change: FileChange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// `*** Add File`: a new file with this text.
    Add { text: String },
    /// `*** Delete File`.
    Delete,
    /// `*** Update File`: hunks in file order, each searched after the one before;
    /// then a move, with `*** Move to` (`line` is that marker's).
    Update { hunks: Vec<Hunk>, move_to: Option<(String, usize)> },
    /// SEARCH/REPLACE blocks of one file, each searched in the whole file. A block
    /// with an empty SEARCH creates the file.
    Replace { hunks: Vec<Hunk> },
}

/// Lines to find and what to put in their place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// The 1-based line of the patch where the hunk starts.
    pub line: usize,
    /// `@@` lines, outermost first: each is looked for after the one before.
    pub contexts: Vec<String>,
    /// The lines to find (context and `-` lines), without line breaks.
    pub old_lines: Vec<String>,
    /// What replaces them (context and `+` lines).
    pub new_lines: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub end_of_file: bool,
    /// The context lines, as `(index in old_lines, index in new_lines)`, ascending:
    /// written once, they line up with each other. Empty for SEARCH/REPLACE blocks.
    pub context: Vec<(usize, usize)>,
}

/// A patch that cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patch line {line}: {message}")]
pub struct ParseError {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

fn error(line: usize, message: impl fmt::Display) -> ParseError {
    ParseError { line, message: message.to_string() }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Parses a patch in either dialect.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(index, line)| (index + 1, line)).collect();
    // A heredoc wrapper around nothing leaves nothing, too.
    let body = without_heredoc(without_blank_ends(&lines));
    if body.is_empty() {
        return Err(error(
            1,
            "the patch is empty: send an apply_patch patch (`*** Begin Patch` … `*** End Patch`) or SEARCH/REPLACE blocks",
        ));
    }
    if body.first().is_some_and(|(_, line)| line.trim() == BEGIN) {
        return parse_apply_patch(body).map(|operations| Patch { format: Format::ApplyPatch, operations });
    }
    if lines.iter().any(|(_, line)| is_search(line)) {
        return parse_search_replace(&lines).map(|operations| Patch { format: Format::SearchReplace, operations });
    }
    if let Some((number, _)) = lines.iter().find(|(_, line)| line.trim() == BEGIN) {
        return Err(error(
            *number,
            format!("`{BEGIN}` must be the first line of the patch: remove the lines before it"),
        ));
    }
    let unified = lines.iter().any(|(_, line)| line.starts_with("--- ") || line.starts_with("diff --git"));
    let (number, first) = body[0];
    Err(error(
        number,
        format!(
            "`{}` starts no patch verbatim can read{}. Send an apply_patch patch (first line `{BEGIN}`, last line \
             `{END}`) or SEARCH/REPLACE blocks (the file's path, `<<<<<<< SEARCH`, the lines to find, `=======`, \
             the new lines, `>>>>>>> REPLACE`)",
            first.trim(),
            if unified { " (it looks like a unified diff, which is not accepted)" } else { "" },
        ),
    ))
}

fn without_blank_ends<'a, 'b>(lines: &'b [(usize, &'a str)]) -> &'b [(usize, &'a str)] {
    let start = lines.iter().position(|(_, line)| !line.trim().is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|(_, line)| !line.trim().is_empty()).map_or(start, |end| end + 1);
    &lines[start..end]
}

/// `<<'EOF'` … `EOF` around a patch, as some models write the shell call.
fn without_heredoc<'a, 'b>(lines: &'b [(usize, &'a str)]) -> &'b [(usize, &'a str)] {
    match lines {
        [(_, first), inner @ .., (_, last)]
            if matches!(first.trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"") && last.trim().ends_with("EOF") =>
        {
            without_blank_ends(inner)
        }
        _ => lines,
    }
}

/// The path after a marker such as `*** Add File:`, if the line is that marker.
fn marker_path<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.trim().strip_prefix(marker).map(str::trim)
}

fn is_file_marker(line: &str) -> bool {
    let trimmed = line.trim();
    [ADD, DELETE, UPDATE].iter().any(|marker| trimmed.starts_with(marker)) || trimmed == END || trimmed == BEGIN
}

fn parse_apply_patch(lines: &[(usize, &str)]) -> Result<Vec<FileOperation>, ParseError> {
    let (first_number, _) = lines[0];
    let Some(&(last_number, last)) = lines.last().filter(|_| lines.len() > 1) else {
        return Err(error(first_number, format!("the patch has no `{END}` line: end it with `{END}`")));
    };
    if last.trim() != END {
        return Err(error(last_number, format!("the last line of the patch must be `{END}`, not `{}`", last.trim())));
    }
    let body = &lines[1..lines.len() - 1];
    let mut operations = Vec::new();
    let mut index = 0;
    while index < body.len() {
        let (number, line) = body[index];
        index += 1;
        if line.trim().is_empty() {
            continue;
        }
        let named = |marker: &str| -> Result<Option<String>, ParseError> {
            match marker_path(line, marker) {
                Some("") => Err(error(number, format!("`{marker}` names no file: write the path after it"))),
                Some(path) => Ok(Some(path.to_owned())),
                None => Ok(None),
            }
        };
        if let Some(path) = named(ADD)? {
            let mut text = String::new();
            while let Some((_, added)) = body.get(index).and_then(|(n, l)| l.strip_prefix('+').map(|added| (n, added)))
            {
                text.push_str(added);
                text.push('\n');
                index += 1;
            }
            operations.push(FileOperation { line: number, path, change: FileChange::Add { text } });
        } else if let Some(path) = named(DELETE)? {
            operations.push(FileOperation { line: number, path, change: FileChange::Delete });
        } else if let Some(path) = named(UPDATE)? {
            let (change, next) = parse_update(body, index, number, &path)?;
            index = next;
            operations.push(FileOperation { line: number, path, change });
        } else {
            let hint = if line.starts_with(['+', '-', ' ']) || line.starts_with("@@") {
                if operations
                    .last()
                    .is_some_and(|operation: &FileOperation| matches!(operation.change, FileChange::Add { .. }))
                    && line.starts_with('+')
                {
                    ": an added file's lines all start with `+` (a blank line ends them; write `+` alone for an empty line)"
                } else {
                    ": hunk lines belong under `*** Update File: <path>`"
                }
            } else {
                ""
            };
            return Err(error(
                number,
                format!(
                    "`{}` is not a file operation{hint}. Expected `{ADD} <path>`, `{DELETE} <path>` or `{UPDATE} <path>`",
                    line.trim()
                ),
            ));
        }
    }
    if operations.is_empty() {
        return Err(error(
            first_number,
            "the patch changes no file: add `*** Add File:`, `*** Delete File:` or `*** Update File:` sections",
        ));
    }
    Ok(operations)
}

/// The hunks of an `*** Update File` section starting at `index`; returns where the
/// section ends.
fn parse_update(
    lines: &[(usize, &str)],
    mut index: usize,
    header: usize,
    path: &str,
) -> Result<(FileChange, usize), ParseError> {
    let mut move_to = None;
    if let Some(&(number, line)) = lines.get(index)
        && let Some(target) = marker_path(line, MOVE)
    {
        if target.is_empty() {
            return Err(error(number, format!("`{MOVE}` names no file: write the new path after it")));
        }
        move_to = Some((target.to_owned(), number));
        index += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    // Empty patch lines are context only when more hunk lines follow them.
    let mut blanks: Vec<usize> = Vec::new();
    let finish = |current: &mut Option<Hunk>, hunks: &mut Vec<Hunk>| -> Result<(), ParseError> {
        if let Some(hunk) = current.take() {
            if hunk.old_lines.is_empty() && hunk.new_lines.is_empty() {
                return Err(error(
                    hunk.line,
                    format!("the `@@` line has no hunk lines under it (in the section for {path})"),
                ));
            }
            hunks.push(hunk);
        }
        Ok(())
    };
    while let Some(&(number, line)) = lines.get(index) {
        if is_file_marker(line) {
            break;
        }
        index += 1;
        if line.trim() == END_OF_FILE {
            match current.as_mut() {
                Some(hunk) if !hunk.old_lines.is_empty() || !hunk.new_lines.is_empty() => hunk.end_of_file = true,
                _ => return Err(error(number, format!("`{END_OF_FILE}` must follow the lines of a hunk"))),
            }
            blanks.clear();
            finish(&mut current, &mut hunks)?;
            continue;
        }
        if let Some(header_text) = line.strip_prefix("@@") {
            blanks.clear();
            let context = context_of(header_text);
            match current.as_mut() {
                Some(hunk) if hunk.old_lines.is_empty() && hunk.new_lines.is_empty() => {
                    hunk.contexts.extend(context);
                }
                _ => {
                    finish(&mut current, &mut hunks)?;
                    current = Some(Hunk { line: number, contexts: context.into_iter().collect(), ..Hunk::default() });
                }
            }
            continue;
        }
        if line.is_empty() {
            blanks.push(number);
            continue;
        }
        // The marker is one ASCII byte; a line that starts with anything else (a
        // multibyte character included) is not a hunk line.
        let (kind, rest) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
        if !matches!(kind, " " | "+" | "-") {
            return Err(error(
                number,
                format!(
                    "`{line}` is not a hunk line (in the section for {path}): every hunk line starts with ` ` \
                     (context), `-` (removed) or `+` (added); start another hunk with `@@`, another file with \
                     `{UPDATE} <path>`"
                ),
            ));
        }
        let hunk = match current.as_mut() {
            Some(hunk) => hunk,
            None if hunks.is_empty() => current.insert(Hunk { line: number, ..Hunk::default() }),
            None => {
                return Err(error(
                    number,
                    format!("a new hunk must start with an `@@` line (in the section for {path})"),
                ));
            }
        };
        for _ in blanks.drain(..) {
            hunk.context.push((hunk.old_lines.len(), hunk.new_lines.len()));
            hunk.old_lines.push(String::new());
            hunk.new_lines.push(String::new());
        }
        match kind {
            " " => {
                hunk.context.push((hunk.old_lines.len(), hunk.new_lines.len()));
                hunk.old_lines.push(rest.to_owned());
                hunk.new_lines.push(rest.to_owned());
            }
            "-" => hunk.old_lines.push(rest.to_owned()),
            _ => hunk.new_lines.push(rest.to_owned()),
        }
    }
    finish(&mut current, &mut hunks)?;
    if hunks.is_empty() && move_to.is_none() {
        return Err(error(
            header,
            format!("`{UPDATE} {path}` has no hunks: add `@@` and the lines to change, or remove the section"),
        ));
    }
    Ok((FileChange::Update { hunks, move_to }, index))
}

/// The text of an `@@` line: `@@ fn f()` → `fn f()`, `@@ -1,3 +1,4 @@ fn f()` → `fn f()`.
fn context_of(header: &str) -> Option<String> {
    let text = header.trim();
    let text = match text.strip_prefix('-').and_then(|rest| rest.split_once(" @@")) {
        Some((ranges, rest)) if ranges.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | ' ' | '+')) => {
            rest.trim()
        }
        _ => text,
    };
    (!text.is_empty()).then(|| text.to_owned())
}

// --- SEARCH/REPLACE -----------------------------------------------------------------

fn is_marker(line: &str, fill: char, word: &str) -> bool {
    let trimmed = line.trim();
    let run = trimmed.chars().take_while(|c| *c == fill).count();
    (5..=9).contains(&run) && trimmed[run..].trim() == word
}

fn is_search(line: &str) -> bool {
    is_marker(line, '<', "SEARCH")
}

fn is_divider(line: &str) -> bool {
    is_marker(line, '=', "")
}

fn is_replace(line: &str) -> bool {
    is_marker(line, '>', "REPLACE")
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// A path line as agents write it: `src/a.rs`, `` `src/a.rs` ``, `**src/a.rs**`, `src/a.rs:`.
fn clean_path(line: &str) -> String {
    let quoting = |c: char| matches!(c, '`' | '*' | '"' | '\'');
    let trimmed = line.trim().trim_matches(quoting);
    trimmed.strip_suffix(':').unwrap_or(trimmed).trim().trim_matches(quoting).trim().to_owned()
}

fn parse_search_replace(lines: &[(usize, &str)]) -> Result<Vec<FileOperation>, ParseError> {
    let mut operations: Vec<FileOperation> = Vec::new();
    let mut previous_path: Option<String> = None;
    // Lines before this index belong to an earlier block.
    let mut consumed = 0;
    let mut index = 0;
    while index < lines.len() {
        let (number, line) = lines[index];
        if is_replace(line) {
            return Err(error(
                number,
                format!(
                    "`{}` is outside a SEARCH/REPLACE block: every block starts with `<<<<<<< SEARCH`",
                    line.trim()
                ),
            ));
        }
        if !is_search(line) {
            index += 1;
            continue;
        }
        // The path is the nearest line above the marker that is neither blank nor a fence.
        let path_line =
            lines[consumed..index].iter().rev().find(|(_, line)| !line.trim().is_empty() && !is_fence(line));
        let path = match (path_line, &previous_path) {
            (Some((path_number, line)), _) => {
                let path = clean_path(line);
                if path.is_empty() {
                    return Err(error(
                        *path_number,
                        format!(
                            "`{}` is not a file path: put the file's path alone on the line before `<<<<<<< SEARCH`",
                            line.trim()
                        ),
                    ));
                }
                path
            }
            (None, Some(previous)) => previous.clone(),
            (None, None) => {
                return Err(error(
                    number,
                    "this SEARCH block names no file: put the file's path alone on the line before `<<<<<<< SEARCH`",
                ));
            }
        };
        let (search, after_search) = block_part(lines, index + 1, number, is_divider, "=======")?;
        let (replace, after_replace) = block_part(lines, after_search, number, is_replace, ">>>>>>> REPLACE")?;
        index = after_replace;
        consumed = index;
        previous_path = Some(path.clone());
        let hunk = Hunk { line: number, old_lines: search, new_lines: replace, ..Hunk::default() };
        match operations.iter_mut().find(|operation| operation.path == path) {
            Some(FileOperation { change: FileChange::Replace { hunks }, .. }) => hunks.push(hunk),
            _ => {
                operations.push(FileOperation { line: number, path, change: FileChange::Replace { hunks: vec![hunk] } })
            }
        }
    }
    Ok(operations)
}

/// The lines of a block from `index` up to the marker `end` (excluded), and the index
/// after it; `opened` is the line of the block's SEARCH marker.
fn block_part(
    lines: &[(usize, &str)],
    mut index: usize,
    opened: usize,
    is_end: fn(&str) -> bool,
    end: &str,
) -> Result<(Vec<String>, usize), ParseError> {
    let mut part = Vec::new();
    loop {
        let Some(&(at, line)) = lines.get(index) else {
            return Err(error(opened, format!("the SEARCH block opened here has no `{end}` line: add it")));
        };
        index += 1;
        if is_end(line) {
            return Ok((part, index));
        }
        if is_search(line) || is_divider(line) || is_replace(line) {
            return Err(error(
                at,
                format!("`{}` comes before the `{end}` of the block opened at line {opened}", line.trim()),
            ));
        }
        part.push(line.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hunk of an `apply_patch` patch; its context lines are the lines the old and
    /// new lines share at their start and end (as in every test below).
    fn hunk(line: usize, contexts: &[&str], old: &[&str], new: &[&str]) -> Hunk {
        let owned = |lines: &[&str]| lines.iter().map(|line| (*line).to_owned()).collect();
        let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
        let context =
            (0..head).map(|k| (k, k)).chain((0..tail).map(|k| (old.len() - tail + k, new.len() - tail + k))).collect();
        Hunk {
            line,
            contexts: owned(contexts),
            old_lines: owned(old),
            new_lines: owned(new),
            end_of_file: false,
            context,
        }
    }

    fn operation(line: usize, path: &str, change: FileChange) -> FileOperation {
        FileOperation { line, path: path.into(), change }
    }

    fn apply_patch(operations: Vec<FileOperation>) -> Result<Patch, (usize, &'static str)> {
        Ok(Patch { format: Format::ApplyPatch, operations })
    }

    /// Parses `patch` and compares it with the expected operations, or with the
    /// expected error (`line`, and a piece of its message).
    fn check(patch: &str, expected: Result<Patch, (usize, &str)>) {
        let got = parse(patch);
        match (&got, expected) {
            (Err(got), Err((line, message))) => {
                assert_eq!(got.line, line, "{got} for {patch:?}");
                assert!(got.message.contains(message), "`{}` lacks `{message}` for {patch:?}", got.message);
            }
            (got, Ok(expected)) => assert_eq!(got, &Ok(expected), "for {patch:?}"),
            (got, Err(expected)) => panic!("{got:?} instead of the error {expected:?} for {patch:?}"),
        }
    }

    #[test]
    fn every_apply_patch_operation() {
        check(
            "*** Begin Patch\n*** Add File: src/new.rs\n+fn main() {}\n+\n*** Delete File: old.txt\n*** Update File: src/lib.rs\n*** Move to: src/core.rs\n@@ fn greet()\n-    print(\"Hi\")\n+    print(\"Hello\")\n     done()\n@@\n-x\n+y\n*** End of File\n*** End Patch\n",
            apply_patch(vec![
                operation(2, "src/new.rs", FileChange::Add { text: "fn main() {}\n\n".into() }),
                operation(5, "old.txt", FileChange::Delete),
                operation(
                    6,
                    "src/lib.rs",
                    FileChange::Update {
                        hunks: vec![
                            hunk(
                                8,
                                &["fn greet()"],
                                &["    print(\"Hi\")", "    done()"],
                                &["    print(\"Hello\")", "    done()"],
                            ),
                            Hunk { end_of_file: true, ..hunk(12, &[], &["x"], &["y"]) },
                        ],
                        move_to: Some(("src/core.rs".into(), 7)),
                    },
                ),
            ]),
        );
    }

    #[test]
    fn the_references_tolerance_and_a_little_more() {
        let expected = |line| {
            apply_patch(vec![operation(
                line,
                "foo.txt",
                FileChange::Update { hunks: vec![hunk(line + 1, &[], &["old"], &["new"])], move_to: None },
            )])
        };
        // Padding around markers, a heredoc, blank lines around the patch.
        check(" *** Begin Patch \n  *** Update File: foo.txt  \n@@\n-old\n+new\n *** End Patch\n", expected(2));
        check(
            "\n\n<<'EOF'\n*** Begin Patch\n*** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\nEOF\n",
            expected(5),
        );
        check("*** Begin Patch\r\n*** Update File: foo.txt\r\n@@\r\n-old\r\n+new\r\n*** End Patch\r\n", expected(2));
        // The first hunk may omit its @@ line.
        check(
            "*** Begin Patch\n*** Update File: foo.txt\n-old\n+new\n*** End Patch",
            apply_patch(vec![operation(
                2,
                "foo.txt",
                FileChange::Update { hunks: vec![hunk(3, &[], &["old"], &["new"])], move_to: None },
            )]),
        );
        // Stacked and git-style @@ lines; an empty line inside a hunk is an empty context
        // line, empty lines at its end separate hunks.
        check(
            "*** Begin Patch\n*** Update File: a.py\n@@ class A\n@@ \t def f():\n a\n\n-b\n+c\n\n@@ -10,2 +10,2 @@ def g():\n-d\n+e\n\n*** End Patch",
            apply_patch(vec![operation(
                2,
                "a.py",
                FileChange::Update {
                    hunks: vec![
                        hunk(3, &["class A", "def f():"], &["a", "", "b"], &["a", "", "c"]),
                        hunk(10, &["def g():"], &["d"], &["e"]),
                    ],
                    move_to: None,
                },
            )]),
        );
        // A pure move has no hunk.
        check(
            "*** Begin Patch\n*** Update File: a.rs\n*** Move to: b.rs\n*** End Patch",
            apply_patch(vec![operation(
                2,
                "a.rs",
                FileChange::Update { hunks: vec![], move_to: Some(("b.rs".into(), 3)) },
            )]),
        );
    }

    #[test]
    fn malformed_apply_patches_say_which_line_and_what_to_do() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "the patch is empty"),
            ("*** Begin Patch\n*** Add File: a\n+x\n", 3, "the last line of the patch must be `*** End Patch`"),
            ("*** Begin Patch", 1, "has no `*** End Patch` line"),
            ("*** Begin Patch\n*** End Patch", 1, "changes no file"),
            ("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", 2, "is not a file operation"),
            ("*** Begin Patch\n@@\n-a\n+b\n*** End Patch", 2, "hunk lines belong under `*** Update File: <path>`"),
            (
                "*** Begin Patch\n*** Add File: a\n+x\n\n+y\n*** End Patch",
                5,
                "an added file's lines all start with `+`",
            ),
            ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch", 2, "names no file"),
            ("*** Begin Patch\n*** Update File: a\n*** End Patch", 2, "has no hunks"),
            ("*** Begin Patch\n*** Update File: a\n@@ f\n@@ g\n*** End Patch", 3, "has no hunk lines under it"),
            ("*** Begin Patch\n*** Update File: a\n@@\n-x\n#y\n*** End Patch", 5, "`#y` is not a hunk line"),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n-y\n*** End Patch",
                6,
                "must start with an `@@` line",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch",
                3,
                "must follow the lines of a hunk",
            ),
            ("*** Begin Patch\n*** Update File: a\n*** Move to:\n@@\n-x\n*** End Patch", 3, "names no file"),
            ("Here is the patch:\n*** Begin Patch\n*** Delete File: a\n*** End Patch", 2, "must be the first line"),
            ("--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n", 1, "looks like a unified diff"),
            ("just some words", 1, "starts no patch verbatim can read"),
        ];
        for (patch, line, message) in cases {
            check(patch, Err((*line, message)));
        }
    }

    #[test]
    fn search_replace_blocks() {
        check(
            "Edit two files.\n\nsrc/a.rs\n```rust\n<<<<<<< SEARCH\nfn a() {}\n=======\nfn a() { b(); }\n>>>>>>> REPLACE\n```\n\n<<<<<<< SEARCH\nx\n=======\n>>>>>>> REPLACE\n`src/b.rs`:\n<<<<<<< SEARCH\n=======\nnew file\n>>>>>>> REPLACE\n",
            Ok(Patch {
                format: Format::SearchReplace,
                operations: vec![
                    operation(
                        5,
                        "src/a.rs",
                        FileChange::Replace {
                            hunks: vec![hunk(5, &[], &["fn a() {}"], &["fn a() { b(); }"]), hunk(12, &[], &["x"], &[])],
                        },
                    ),
                    operation(17, "src/b.rs", FileChange::Replace { hunks: vec![hunk(17, &[], &[], &["new file"])] }),
                ],
            }),
        );
    }

    proptest::proptest! {
        /// Any text parses or is refused with a line of the text; nothing panics.
        #[test]
        fn any_text_parses_or_names_a_line(lines in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("*** Begin Patch".to_owned()),
                proptest::strategy::Just("*** End Patch".to_owned()),
                proptest::strategy::Just("*** Update File: a".to_owned()),
                proptest::strategy::Just("*** Add File: b".to_owned()),
                proptest::strategy::Just("*** End of File".to_owned()),
                proptest::strategy::Just("<<<<<<< SEARCH".to_owned()),
                proptest::strategy::Just("=======".to_owned()),
                proptest::strategy::Just(">>>>>>> REPLACE".to_owned()),
                "[ +@*-]{0,3}[a-z]{0,3}",
            ],
            0..12,
        )) {
            let text = lines.join("\n");
            if let Err(error) = parse(&text) {
                proptest::prop_assert!(error.line >= 1 && error.line <= lines.len().max(1), "{:?}", error);
            }
        }
    }

    #[test]
    fn malformed_search_replace_blocks_say_which_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", 1, "names no file"),
            ("a.rs\n<<<<<<< SEARCH\na\nb\n", 2, "has no `=======` line"),
            ("a.rs\n<<<<<<< SEARCH\na\n=======\nb\n", 2, "has no `>>>>>>> REPLACE` line"),
            ("a.rs\n<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", 4, "comes before the `=======`"),
            ("a.rs\n<<<<<<< SEARCH\na\n=======\nb\n=======\n>>>>>>> REPLACE", 6, "comes before the `>>>>>>> REPLACE`"),
            (
                "a.rs\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n>>>>>>> REPLACE\n",
                7,
                "outside a SEARCH/REPLACE block",
            ),
        ];
        for (patch, line, message) in cases {
            check(patch, Err((*line, message)));
        }
    }

    #[test]
    fn a_heredoc_around_nothing_is_an_empty_patch() {
        // Found by the patch_parser fuzz target.
        let error = parse("<<EOF\n\0EOF\n").expect_err("empty");
        assert!(error.message.contains("the patch is empty"), "{}", error.message);
    }

    #[test]
    fn a_path_line_of_only_quoting_is_an_error() {
        // Found by the patch_parser fuzz target: `**` cleaned to an empty path.
        let error = parse("**\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n").expect_err("no path");
        assert_eq!(error.line, 1);
        assert!(error.message.contains("not a file path"), "{}", error.message);
    }

    #[test]
    fn a_line_starting_with_a_multibyte_character_is_an_error_not_a_panic() {
        // Found by the patch_parser fuzz target.
        let error = parse("*** Begin Patch\n*** Update File: a.rs\n\u{bf} fc.rs\n*** End Patch\n")
            .expect_err("not a hunk line");
        assert_eq!(error.line, 3);
    }
}
