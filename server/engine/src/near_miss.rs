//! Near misses: when a quote is not in a document, the region that looks most like
//! it, so that the agent can fix its quote in one round trip.
//!
//! Similarity only ever explains a failure; it never decides what to edit.
//!
//! The work is bounded whatever the size of the document: the quote's lines vote
//! for where the region might start, through the tokens they share with the
//! document's lines (rarer tokens weigh more) and through lines that are equal once
//! trimmed; only the best few candidates are then compared line by line. At most
//! [`MAX_SCAN_LINES`] lines of the window are scanned, [`MAX_QUOTE_LINES`] lines
//! of the quote are compared, and each line comparison looks at no more than
//! [`MAX_LINE_CHARS`] characters under a deadline.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use ropey::Rope;
use similar::{Algorithm, TextDiff};

/// Lines of the window scanned for candidates.
pub const MAX_SCAN_LINES: usize = 100_000;
/// Lines of the quote compared.
pub const MAX_QUOTE_LINES: usize = 200;
/// Characters of a line compared.
pub const MAX_LINE_CHARS: usize = 400;
/// Candidate regions compared line by line.
const MAX_CANDIDATES: usize = 12;
/// A token found in more lines than this does not vote when rarer ones exist.
const RARE: u32 = 64;
/// Below this a region is not worth showing.
const MIN_SIMILARITY: f32 = 0.5;
/// Recorded (line, token) hits before the scan stops.
const MAX_HITS: usize = 1_000_000;
/// Lines of the diff shown.
const MAX_DIFF_LINES: usize = 60;
const LINE_DIFF_TIMEOUT: Duration = Duration::from_millis(20);

/// The region of a document most like a quote.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMiss {
    /// 0-based lines of the region, end exclusive.
    pub lines: Range<usize>,
    /// Byte range of the region (whole lines, without the last line break).
    pub range: Range<usize>,
    /// 0 to 1: the mean similarity of the quote's lines to the region's.
    pub similarity: f32,
    /// The region's text.
    pub text: String,
    /// A unified diff from the quote to the region.
    pub diff: String,
}

/// The region of `window` most like `quote`, if any is alike enough.
pub fn closest(text: &Rope, quote: &str, window: Range<usize>, region_label: &str) -> Option<NearMiss> {
    let quote_lines: Vec<&str> = quote.lines().take(MAX_QUOTE_LINES).collect();
    let quote_lines: &[&str] = match quote_lines.iter().rposition(|line| !line.trim().is_empty()) {
        Some(last) => &quote_lines[..=last],
        None => return None,
    };
    if text.len_bytes() == 0 || window.start >= text.len_bytes() {
        return None;
    }
    let first_line = text.byte_to_line(window.start);
    let last_line =
        text.byte_to_line(window.end.saturating_sub(1).max(window.start)).min(first_line + MAX_SCAN_LINES - 1);
    let starts = candidate_starts(text, quote_lines, first_line..last_line + 1);
    let (start, similarity) = starts
        .into_iter()
        .map(|start| (start, region_similarity(text, quote_lines, start, last_line + 1)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
    if similarity < MIN_SIMILARITY {
        return None;
    }
    let end = (start + quote_lines.len()).min(last_line + 1);
    let range = text.line_to_byte(start)..line_end_without_break(text, end - 1);
    let region = text.byte_slice(range.clone()).to_string();
    let diff = quote_diff(quote_lines, &region, region_label);
    Some(NearMiss { lines: start..end, range, similarity, text: region, diff })
}

/// Tokens: runs of letters, digits and `_`, at least two characters long.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|token| token.len() >= 2)
}

/// Line numbers where the region might start, best first.
fn candidate_starts(text: &Rope, quote_lines: &[&str], lines: Range<usize>) -> Vec<usize> {
    // Which quote lines hold each token, and each trimmed line.
    let mut token_ids: HashMap<&str, usize> = HashMap::new();
    let mut token_lines: Vec<Vec<usize>> = Vec::new();
    let mut trimmed_lines: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, line) in quote_lines.iter().enumerate() {
        for token in tokens(line) {
            let id = *token_ids.entry(token).or_insert_with(|| {
                token_lines.push(Vec::new());
                token_lines.len() - 1
            });
            if token_lines[id].last() != Some(&index) && token_lines[id].len() < 8 {
                token_lines[id].push(index);
            }
        }
        let trimmed = line.trim();
        if trimmed.len() >= 3 {
            trimmed_lines.entry(trimmed).or_default().push(index);
        }
    }
    // One pass over the window: which line holds which token, and how many lines hold each.
    let mut token_frequency = vec![0u32; token_lines.len()];
    let mut token_hits: Vec<(usize, usize)> = Vec::new();
    let mut line_hits: Vec<(usize, &[usize])> = Vec::new();
    let mut line_frequency: HashMap<&str, u32> = HashMap::new();
    let mut seen: Vec<usize> = Vec::new();
    for number in lines.clone() {
        let line = text.line(number).to_string();
        seen.clear();
        for token in tokens(&line) {
            if let Some(&id) = token_ids.get(token)
                && !seen.contains(&id)
            {
                seen.push(id);
                token_frequency[id] += 1;
                token_hits.push((number, id));
            }
        }
        if let Some((key, indexes)) = trimmed_lines.get_key_value(line.trim()) {
            *line_frequency.entry(key).or_default() += 1;
            line_hits.push((number, indexes.as_slice()));
        }
        if token_hits.len() > MAX_HITS {
            break;
        }
    }
    let rare_exists = token_frequency.iter().any(|&frequency| frequency > 0 && frequency <= RARE);
    let mut votes: HashMap<usize, f32> = HashMap::new();
    let mut vote = |number: usize, index: usize, weight: f32| {
        if let Some(start) = number.checked_sub(index).filter(|start| *start >= lines.start) {
            *votes.entry(start).or_default() += weight;
        }
    };
    for &(number, id) in &token_hits {
        let frequency = token_frequency[id];
        if rare_exists && frequency > RARE {
            continue;
        }
        for &index in &token_lines[id] {
            vote(number, index, 1.0 / frequency as f32);
        }
    }
    for &(number, indexes) in &line_hits {
        let frequency = line_frequency.get(text.line(number).to_string().trim()).copied().unwrap_or(1).max(1);
        for &index in indexes {
            vote(number, index, 2.0 / frequency as f32);
        }
    }
    let mut ranked: Vec<(usize, f32)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(MAX_CANDIDATES).map(|(start, _)| start).collect()
}

/// The mean similarity of the quote's lines to the lines from `start` on.
fn region_similarity(text: &Rope, quote_lines: &[&str], start: usize, end_line: usize) -> f32 {
    let total: f32 = quote_lines
        .iter()
        .enumerate()
        .map(|(index, quoted)| {
            let number = start + index;
            if number >= end_line {
                return 0.0;
            }
            line_similarity(quoted, text.line(number).to_string().trim_end_matches(['\r', '\n']))
        })
        .sum();
    total / quote_lines.len() as f32
}

fn line_similarity(a: &str, b: &str) -> f32 {
    let cut = |line: &str| -> String { line.trim().chars().take(MAX_LINE_CHARS).collect() };
    let (a, b) = (cut(a), cut(b));
    if a == b {
        return 1.0;
    }
    TextDiff::configure().algorithm(Algorithm::Myers).timeout(LINE_DIFF_TIMEOUT).diff_chars(&a, &b).ratio()
}

/// The byte offset of the end of `line`, before its line break.
fn line_end_without_break(text: &Rope, line: usize) -> usize {
    let start = text.line_to_byte(line);
    let content = text.line(line).to_string();
    start + content.trim_end_matches(['\r', '\n']).len()
}

/// A unified diff from the quote's lines to the region, cut to a readable length.
fn quote_diff(quote_lines: &[&str], region: &str, region_label: &str) -> String {
    let quote: String = quote_lines.iter().map(|line| format!("{line}\n")).collect();
    let region: String = region.lines().map(|line| format!("{line}\n")).collect();
    let diff = TextDiff::configure().timeout(Duration::from_millis(100)).diff_lines(&quote, &region);
    let mut out = String::new();
    let _ = write!(out, "--- quote\n+++ {region_label}\n");
    let mut shown = 0;
    for group in diff.grouped_ops(2) {
        for op in &group {
            for change in diff.iter_changes(op) {
                if shown == MAX_DIFF_LINES {
                    out.push_str("…\n");
                    return out;
                }
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let _ = write!(out, "{sign}{}", change.value());
                shown += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closest_in(text: &str, quote: &str) -> Option<NearMiss> {
        closest(&Rope::from_str(text), quote, 0..text.len(), "doc")
    }

    #[test]
    fn the_closest_region_is_found_and_diffed() {
        let text =
            "fn alpha() {\n    let total = 1;\n}\n\nfn beta() {\n    let count = compute(2);\n    finish(count);\n}\n";
        let near = closest_in(text, "fn beta() {\n    let count = compute(3);\n    finish(count);\n")
            .unwrap_or_else(|| panic!("no near miss"));
        assert_eq!(near.lines, 4..7);
        assert_eq!(near.text, "fn beta() {\n    let count = compute(2);\n    finish(count);");
        assert!(near.similarity > 0.9, "{}", near.similarity);
        assert!(near.diff.contains("-    let count = compute(3);\n+    let count = compute(2);\n"), "{}", near.diff);
    }

    #[test]
    fn nothing_alike_is_no_near_miss() {
        assert_eq!(closest_in("alpha\nbeta\n", "completely different words here\n"), None);
        assert_eq!(closest_in("alpha\n", "   \n"), None);
        assert_eq!(closest_in("", "x"), None);
    }

    #[test]
    fn big_documents_stay_cheap() {
        let text: String = (0..300_000).map(|i| format!("let value_{i} = compute({i});\n")).collect();
        let rope = Rope::from_str(&text);
        let started = std::time::Instant::now();
        let near = closest(&rope, "let value_12 = compute(twelve);\n", 0..text.len(), "doc");
        assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
        assert_eq!(near.map(|near| near.lines), Some(12..13));
    }
}
