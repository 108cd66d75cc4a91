//! The hunks of the change between two texts (3 lines of context, the engine's own
//! diff), each with the line of the old text where it starts, and the indentation
//! unit a file is written with.

use verbatim_engine::diff::unified_diff_of_texts;

/// One hunk: its lines with their marker (` `, `-`, `+`), and the 0-based line of the
/// old text where its first old line is (where it inserts, when it has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub lines: Vec<(char, String)>,
}

impl Hunk {
    /// The lines the hunk reads in the old text (context and removed).
    pub fn old_side(&self) -> Vec<String> {
        self.side('+')
    }

    /// The lines the hunk leaves in the new text (context and added).
    pub fn new_side(&self) -> Vec<String> {
        self.side('-')
    }

    fn side(&self, left_out: char) -> Vec<String> {
        self.lines.iter().filter(|(marker, _)| *marker != left_out).map(|(_, line)| line.clone()).collect()
    }
}

/// The hunks of `old` → `new`.
pub fn hunks_between(old: &str, new: &str) -> Vec<Hunk> {
    parse(&unified_diff_of_texts(old, new, "a", "b"))
}

/// The hunks of a unified diff as the engine writes it (`@@ -start,len +… @@`).
pub fn parse(diff: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("@@ -") {
            let range = header.split(' ').next().unwrap_or("0");
            let (start, len) = range.split_once(',').unwrap_or((range, "1"));
            let (start, len): (usize, usize) = (start.parse().unwrap_or(0), len.parse().unwrap_or(1));
            // A range of 0 lines names the line it inserts after; otherwise its first line (1-based).
            let old_start = if len == 0 { start } else { start.saturating_sub(1) };
            out.push(Hunk { old_start, lines: Vec::new() });
        } else if let Some(hunk) = out.last_mut()
            && let Some(marker) = line.chars().next().filter(|c| matches!(c, ' ' | '-' | '+'))
        {
            hunk.lines.push((marker, line[1..].to_owned()));
        }
    }
    out
}

/// `old` with only `hunk` applied (every line of `old` ends with a line break).
pub fn apply_one(old: &str, hunk: &Hunk) -> String {
    let lines: Vec<&str> = old.split_inclusive('\n').collect();
    let old_len = hunk.old_side().len();
    let mut out = String::with_capacity(old.len());
    lines[..hunk.old_start.min(lines.len())].iter().for_each(|line| out.push_str(line));
    for line in hunk.new_side() {
        out.push_str(&line);
        out.push('\n');
    }
    lines[(hunk.old_start + old_len).min(lines.len())..].iter().for_each(|line| out.push_str(line));
    out
}

/// The file's indentation unit: a tab where most indented lines start with one;
/// otherwise two spaces where more than a tenth of the space-indented lines are
/// indented by 2 modulo 4 (Python's continuation lines are a few), else four.
pub fn unit_of(text: &str) -> &'static str {
    let indents: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
        .filter(|indent| !indent.is_empty())
        .collect();
    let tabs = indents.iter().filter(|indent| indent.starts_with('\t')).count();
    let spaces: Vec<usize> =
        indents.iter().filter(|indent| indent.starts_with(' ')).map(|indent| indent.len()).collect();
    if tabs > spaces.len() {
        "\t"
    } else if spaces.iter().filter(|width| *width % 4 == 2).count() * 10 > spaces.len() {
        "  "
    } else {
        "    "
    }
}
