//! Near misses: when a quote is not in a document, the regions that look most like
//! it, so that the agent can fix its quote in one round trip.
//!
//! Similarity only ever explains a failure; it never decides what to edit.
//!
//! The work is bounded whatever the size of the document. One pass over the window
//! collects two kinds of votes for where the region might start: the quote's lines
//! vote through the tokens they share with the document's lines (rarer tokens weigh
//! more) and through lines that are equal once trimmed; and up to
//! [`trigram::MAX_ANCHORS`] of its lines vote through their character trigrams
//! (`trigram.rs`), which survive a changed, added or missing character in any
//! word, the rarest included, and quotes made only of common words. The best
//! [`MAX_CANDIDATES`] starts of each kind are then compared line by line, by the
//! edit distance (Levenshtein) of whole trimmed lines, and the most alike region
//! (the fewest characters to change, add or remove) is shown; a second one that
//! does not overlap it and is nearly as alike (its distance at most
//! [`NEARLY_AS_ALIKE`] more) is shown beside it, so that the agent can say which
//! one it meant. At most [`MAX_SCAN_LINES`] lines of the window are scanned,
//! [`MAX_QUOTE_LINES`] lines of the quote are compared, each line comparison looks
//! at no more than [`MAX_LINE_CHARS`] characters, and all of it stops at a deadline
//! ([`DEADLINE`]): the scan at three quarters of it, the comparisons at it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::time::{Duration, Instant};

use ropey::Rope;
use similar::TextDiff;

use crate::trigram::Anchors;

/// Lines of the window scanned for candidates.
pub const MAX_SCAN_LINES: usize = 100_000;
/// Lines of the quote compared.
pub const MAX_QUOTE_LINES: usize = 200;
/// Characters of a line compared.
pub const MAX_LINE_CHARS: usize = 400;
/// Candidate regions of each kind (token votes, trigram votes) compared line by line.
pub const MAX_CANDIDATES: usize = 12;
/// A second region is shown when its edit distance to the quote exceeds the
/// first's by at most this share of it (none at all below 8 characters).
pub const NEARLY_AS_ALIKE: f32 = 0.125;
/// The whole search, scan and comparisons, stops by then.
pub const DEADLINE: Duration = Duration::from_millis(500);
/// Lines scanned between two looks at the clock.
pub const CLOCK_EVERY: usize = 1024;
/// Regions shown at most: the most alike, and one nearly as alike.
const MAX_REGIONS: usize = 2;
/// A token found in more lines than this does not vote when rarer ones exist.
const RARE: u32 = 64;
/// Below this a region is not worth showing.
const MIN_SIMILARITY: f32 = 0.5;
/// Recorded (line, token) hits before the scan stops.
const MAX_HITS: usize = 1_000_000;
/// Lines of the diff shown.
const MAX_DIFF_LINES: usize = 60;
const QUOTE_DIFF_TIMEOUT: Duration = Duration::from_millis(100);

/// A region of a document like a quote.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMiss {
    /// 0-based lines of the region, end exclusive.
    pub lines: Range<usize>,
    /// Byte range of the region (whole lines, without the last line break).
    pub range: Range<usize>,
    /// 0 to 1: the mean over the quote's lines of 1 − (edit distance / length of
    /// the longer line), lines trimmed.
    pub similarity: f32,
    /// Characters to change, add or remove to turn the quote's lines (trimmed) into the region's.
    pub distance: usize,
    /// The region's text.
    pub text: String,
    /// A unified diff from the quote to the region.
    pub diff: String,
}

/// What a search did, to hold its bounds in tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    /// Lines of the window read for votes.
    pub lines_scanned: usize,
    /// Candidate regions compared line by line.
    pub regions_compared: usize,
    /// The deadline stopped the scan or the comparisons.
    pub timed_out: bool,
}

/// The regions found, and the work it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The most alike region first, then (at most one) nearly as alike that does not overlap it.
    pub regions: Vec<NearMiss>,
    pub work: Work,
}

/// The regions of `window` most like `quote`, most alike first, if any is alike
/// enough: the closest, and a second one when it is nearly as alike.
pub fn closest(text: &Rope, quote: &str, window: Range<usize>, region_label: &str) -> Vec<NearMiss> {
    search(text, quote, window, region_label, Instant::now() + DEADLINE).regions
}

/// [`closest`], stopping at `deadline`.
pub fn search(text: &Rope, quote: &str, window: Range<usize>, region_label: &str, deadline: Instant) -> Search {
    let mut work = Work::default();
    let quote_lines: Vec<&str> = quote.lines().take(MAX_QUOTE_LINES).collect();
    let quote_lines: &[&str] = match quote_lines.iter().rposition(|line| !line.trim().is_empty()) {
        Some(last) => &quote_lines[..=last],
        None => return Search { regions: Vec::new(), work },
    };
    if text.len_bytes() == 0 || window.start >= text.len_bytes() {
        return Search { regions: Vec::new(), work };
    }
    let first_line = text.byte_to_line(window.start);
    let last_line =
        text.byte_to_line(window.end.saturating_sub(1).max(window.start)).min(first_line + MAX_SCAN_LINES - 1);
    let now = Instant::now();
    let scan_deadline = now + deadline.saturating_duration_since(now) * 3 / 4;
    let starts = candidate_starts(text, quote_lines, first_line..last_line + 1, scan_deadline, &mut work);
    let compared: Vec<Compared> = quote_lines.iter().map(|line| Compared::new(line)).collect();
    let mut scored: Vec<(usize, Likeness)> = Vec::with_capacity(starts.len());
    for start in starts {
        match region_likeness(text, &compared, start, last_line + 1, deadline) {
            Some(likeness) => scored.push((start, likeness)),
            None => {
                work.timed_out = true;
                break;
            }
        }
        work.regions_compared += 1;
    }
    scored.retain(|(_, likeness)| likeness.similarity >= MIN_SIMILARITY);
    scored.sort_by(|(a_start, a), (b_start, b)| {
        (a.distance, a.indentation)
            .cmp(&(b.distance, b.indentation))
            .then(b.similarity.total_cmp(&a.similarity))
            .then(a_start.cmp(b_start))
    });
    let height = quote_lines.len();
    let mut shown: Vec<(usize, Likeness)> = Vec::new();
    for &(start, likeness) in &scored {
        if let Some((_, best)) = shown.first() {
            let nearly = best.distance + (best.distance as f32 * NEARLY_AS_ALIKE) as usize;
            if shown.len() == MAX_REGIONS || likeness.distance > nearly {
                break;
            }
        }
        if shown.iter().all(|&(other, _)| start >= other + height || start + height <= other) {
            shown.push((start, likeness));
        }
    }
    let regions = shown
        .into_iter()
        .map(|(start, Likeness { similarity, distance, .. })| {
            let end = (start + height).min(last_line + 1);
            let range = text.line_to_byte(start)..line_end_without_break(text, end - 1);
            let region = text.byte_slice(range.clone()).to_string();
            let diff = quote_diff(quote_lines, &region, region_label, deadline);
            NearMiss { lines: start..end, range, similarity, distance, text: region, diff }
        })
        .collect();
    Search { regions, work }
}

/// The scan's maps, keyed by short tokens, lines and line numbers: hashed with
/// FxHash's mix, several times faster than the default SipHash on such keys. A
/// document made to collide only slows the search, which its deadline bounds.
type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[derive(Debug, Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }
}

/// Tokens: runs of letters, digits and `_`, at least two characters long.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|token| token.len() >= 2)
}

/// Line numbers where the region might start: the best of the token votes, then
/// the best of the trigram votes not already among them.
fn candidate_starts(
    text: &Rope,
    quote_lines: &[&str],
    lines: Range<usize>,
    deadline: Instant,
    work: &mut Work,
) -> Vec<usize> {
    // Which quote lines hold each token, and each trimmed line.
    let mut token_ids: FastMap<&str, usize> = FastMap::default();
    let mut token_lines: Vec<Vec<usize>> = Vec::new();
    let mut trimmed_lines: FastMap<&str, Vec<usize>> = FastMap::default();
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
    let mut anchors = Anchors::new(quote_lines);
    // One pass over the window: which line holds which token, how many lines hold
    // each, and which lines are most like each anchor.
    let mut token_frequency = vec![0u32; token_lines.len()];
    let mut token_hits: Vec<(usize, usize)> = Vec::new();
    let mut line_hits: Vec<(usize, &str, &[usize])> = Vec::new();
    let mut line_frequency: FastMap<&str, u32> = FastMap::default();
    let mut seen: Vec<usize> = Vec::new();
    let mut copy = String::new();
    for (number, slice) in lines.clone().zip(text.lines_at(lines.start)) {
        if work.lines_scanned.is_multiple_of(CLOCK_EVERY) && Instant::now() >= deadline {
            work.timed_out = true;
            break;
        }
        work.lines_scanned += 1;
        // A line within one chunk of the rope is read in place; only the others are copied.
        let line: &str = match slice.as_str() {
            Some(line) => line,
            None => {
                copy.clear();
                copy.extend(slice.chunks());
                &copy
            }
        };
        seen.clear();
        for token in tokens(line) {
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
            line_hits.push((number, *key, indexes.as_slice()));
        }
        anchors.add_line(number, line);
        if token_hits.len() > MAX_HITS {
            break;
        }
    }
    let starts_at = |number: usize, index: usize| number.checked_sub(index).filter(|start| *start >= lines.start);
    let rare_exists = token_frequency.iter().any(|&frequency| frequency > 0 && frequency <= RARE);
    let mut votes: FastMap<usize, f32> = FastMap::default();
    for &(number, id) in &token_hits {
        let frequency = token_frequency[id];
        if rare_exists && frequency > RARE {
            continue;
        }
        for &index in &token_lines[id] {
            if let Some(start) = starts_at(number, index) {
                *votes.entry(start).or_default() += 1.0 / frequency as f32;
            }
        }
    }
    for &(number, key, indexes) in &line_hits {
        let frequency = line_frequency.get(key).copied().unwrap_or(1).max(1);
        for &index in indexes {
            if let Some(start) = starts_at(number, index) {
                *votes.entry(start).or_default() += 2.0 / frequency as f32;
            }
        }
    }
    let mut trigram_votes: FastMap<usize, f32> = FastMap::default();
    for (index, number, weight) in anchors.votes() {
        if let Some(start) = starts_at(number, index) {
            *trigram_votes.entry(start).or_default() += weight;
        }
    }
    let mut starts = best_voted(votes);
    for start in best_voted(trigram_votes) {
        if !starts.contains(&start) {
            starts.push(start);
        }
    }
    starts
}

/// The [`MAX_CANDIDATES`] starts with the most votes, earlier lines first on a tie.
fn best_voted(votes: FastMap<usize, f32>) -> Vec<usize> {
    let mut ranked: Vec<(usize, f32)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(MAX_CANDIDATES).map(|(start, _)| start).collect()
}

/// How alike a region is to the quote.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Likeness {
    /// The mean over the quote's lines of each line's similarity (0 to 1).
    similarity: f32,
    /// Characters changed, added or removed over all lines.
    distance: usize,
    /// How far the lines' indentation is from the quote's, in characters: it only
    /// tells apart regions whose text is equally far (the ladder forgives indentation).
    indentation: usize,
}

/// A line as it is compared: its text, trimmed and cut, and its indentation.
struct Compared {
    chars: Vec<char>,
    indentation: usize,
}

impl Compared {
    fn new(line: &str) -> Self {
        let line = line.trim_end_matches(['\r', '\n']);
        let indentation = line.chars().take_while(|c| c.is_whitespace()).count();
        Self { chars: cut(line), indentation }
    }
}

/// How alike the lines from `start` on are to the quote's, line by line, or `None`
/// once `deadline` has passed. A quote line past `end_line` is wholly unlike.
fn region_likeness(
    text: &Rope,
    quote: &[Compared],
    start: usize,
    end_line: usize,
    deadline: Instant,
) -> Option<Likeness> {
    let mut total = 0.0;
    let mut distance = 0;
    let mut indentation = 0;
    for (index, quoted) in quote.iter().enumerate() {
        let number = start + index;
        if number >= end_line {
            distance += quoted.chars.len();
            continue;
        }
        if Instant::now() >= deadline {
            return None;
        }
        let line = Compared::new(&text.line(number).to_string());
        let line_distance = edit_distance(&quoted.chars, &line.chars);
        let longer = quoted.chars.len().max(line.chars.len());
        total += if longer == 0 { 1.0 } else { 1.0 - line_distance as f32 / longer as f32 };
        distance += line_distance;
        indentation += quoted.indentation.abs_diff(line.indentation);
    }
    Some(Likeness { similarity: total / quote.len() as f32, distance, indentation })
}

/// A line as lines are compared: trimmed, at most [`MAX_LINE_CHARS`] characters.
fn cut(line: &str) -> Vec<char> {
    line.trim().chars().take(MAX_LINE_CHARS).collect()
}

/// The edit distance (Levenshtein) of two lines: how many characters must be
/// changed, added or removed to turn one into the other. At most
/// [`MAX_LINE_CHARS`] squared steps, fewer when the lines start or end alike.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    // One row of the table: row[j] is the distance from a[..i] to b[..j].
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y { diagonal } else { 1 + diagonal.min(above).min(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The byte offset of the end of `line`, before its line break.
fn line_end_without_break(text: &Rope, line: usize) -> usize {
    let start = text.line_to_byte(line);
    let content = text.line(line).to_string();
    start + content.trim_end_matches(['\r', '\n']).len()
}

/// A unified diff from the quote's lines to the region, cut to a readable length.
fn quote_diff(quote_lines: &[&str], region: &str, region_label: &str, deadline: Instant) -> String {
    let quote: String = quote_lines.iter().map(|line| format!("{line}\n")).collect();
    let region: String = region.lines().map(|line| format!("{line}\n")).collect();
    let left = deadline.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(1), QUOTE_DIFF_TIMEOUT);
    let diff = TextDiff::configure().timeout(left).diff_lines(&quote, &region);
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
    use std::fmt::Write as _;

    use super::*;

    /// A deadline no test reaches, so that results never depend on the machine's load.
    fn far_deadline() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    fn search_in(text: &str, quote: &str) -> Search {
        search(&Rope::from_str(text), quote, 0..text.len(), "doc", far_deadline())
    }

    /// The first and last 0-based lines (end exclusive) of each region shown.
    fn shown(text: &str, quote: &str) -> Vec<(usize, usize)> {
        search_in(text, quote).regions.into_iter().map(|near| (near.lines.start, near.lines.end)).collect()
    }

    /// The text of the one region shown.
    fn only_region(text: &str, quote: &str) -> String {
        let regions = search_in(text, quote).regions;
        assert_eq!(regions.len(), 1, "{regions:#?}");
        regions[0].text.clone()
    }

    /// A Go file in the style of cobra's `command.go`: many methods of one type.
    fn go_methods() -> String {
        let mut text = String::from("package cobra\n\n");
        for name in ["Execute", "ExecuteC", "InitDefaultHelpFlag", "InitDefaultVersionFlag", "InitDefaultHelpCmd"] {
            let _ = write!(text, "func (c *Command) {name}() {{\n\tc.mergePersistentFlags()\n}}\n\n");
        }
        text.push_str("func (c *Command) initCompleteCmd(args []string) {\n\tc.ensureCompletion()\n}\n\n");
        text.push_str("func (c *Command) initDefaultCompletionCmd() {\n\tc.ensureCompletion()\n}\n\n");
        text.push_str("func (c *Command) ExecuteContext() {\n\tc.initDefaultHelpCmd()\n\tc.initCompleteCmd(args)\n}\n");
        text
    }

    /// A changelog of many releases: every heading made of the same common words.
    fn changelog() -> String {
        let mut text = String::from("Version 8.2.0\n-------------\n\nUnreleased\n\n-   Fix the thing.\n\n");
        for minor in (0..2).rev() {
            for patch in (0..40).rev() {
                let _ = write!(
                    text,
                    "Version 8.{minor}.{patch}\n-------------\n\nReleased 2024-{:02}-{:02}\n\n-   Fix the thing.\n\n",
                    patch % 12 + 1,
                    patch % 28 + 1
                );
            }
        }
        text
    }

    #[test]
    fn the_closest_region_is_found_and_diffed() {
        let text =
            "fn alpha() {\n    let total = 1;\n}\n\nfn beta() {\n    let count = compute(2);\n    finish(count);\n}\n";
        let regions = search_in(text, "fn beta() {\n    let count = compute(3);\n    finish(count);\n").regions;
        assert_eq!(regions.len(), 1, "{regions:#?}");
        let near = &regions[0];
        assert_eq!(near.lines, 4..7);
        assert_eq!(near.text, "fn beta() {\n    let count = compute(2);\n    finish(count);");
        assert!(near.similarity > 0.9, "{}", near.similarity);
        assert!(near.diff.contains("-    let count = compute(3);\n+    let count = compute(2);\n"), "{}", near.diff);
    }

    #[test]
    fn edit_distance_counts_changed_added_and_removed_characters() {
        let distance = |a: &str, b: &str| edit_distance(&cut(a), &cut(b));
        assert_eq!(distance("initDefaultCompletionCmd", "initDexaultCompletionCmd"), 1);
        assert_eq!(distance("connection", "connections"), 1);
        assert_eq!(distance("Versoin", "Version"), 2);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("  same  ", "same"), 0);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn nothing_alike_is_no_near_miss() {
        assert_eq!(closest(&Rope::from_str("alpha\nbeta\n"), "completely different words here\n", 0..11, "d"), []);
        assert_eq!(shown("alpha\n", "   \n"), []);
        assert_eq!(shown("", "x"), []);
    }

    #[test]
    fn a_typo_in_the_rarest_token_shows_the_line_it_was_copied_from() {
        let text = go_methods();
        // One letter away from line 23, while line 19 shares more whole tokens (75% alike).
        let quote = "func (c *Command) initDexaultCompletionCmd() {";
        assert_eq!(only_region(&text, quote), "func (c *Command) initDefaultCompletionCmd() {");
        let docs = ".. versionadded:: 8.0\n\n.. versionadded:: 8.1\n    Text.\n\n.. versionadded:: 8.2\n    More.\n";
        assert_eq!(only_region(docs, ".. versionadxed:: 8.2"), ".. versionadded:: 8.2");
        assert_eq!(only_region(docs, ".. versionadded:: 8.1\n    Txt."), ".. versionadded:: 8.1\n    Text.");
    }

    #[test]
    fn a_quote_of_common_words_among_repeated_headings_shows_its_own_heading() {
        let text = changelog();
        assert_eq!(
            only_region(&text, "Version 8.2.0\n-------------\n\nUnreleasd\n"),
            "Version 8.2.0\n-------------\n\nUnreleased"
        );
        // Every word of the block but the slipped one is in every heading.
        assert_eq!(only_region(&text, "Versoin 8.1.5\n-------------\n"), "Version 8.1.5\n-------------");
        assert_eq!(
            only_region(&text, "Versoin 8.1.17\n-------------\n\nReleased 2024-06-18\n"),
            "Version 8.1.17\n-------------\n\nReleased 2024-06-18"
        );
        assert_eq!(
            only_region(&text, "Version 8.0.34\n-------------\n\nReleased 2024-10-06\n"),
            "Version 8.0.33\n-------------\n\nReleased 2024-10-06",
            "a typo in the version number"
        );
    }

    #[test]
    fn one_line_quotes_with_a_typo_show_their_line() {
        let text = go_methods();
        for quote in
            ["c.initCompleteCnd(args)", "c.initCompleteCmd(arg)", "c.initCompleteCmmd(args)", "c.initDefaultHelpCm()"]
        {
            let regions = search_in(&text, quote).regions;
            assert!(!regions.is_empty(), "{quote}");
            assert!(regions[0].text.trim_start().starts_with(&quote[..12]), "{quote}: {regions:#?}");
        }
        assert_eq!(only_region(&text, "c.initCompleteCnd(args)"), "\tc.initCompleteCmd(args)");
        assert_eq!(only_region(&text, "func (c *Command) ExecuteContxt() {"), "func (c *Command) ExecuteContext() {");
    }

    #[test]
    fn a_typo_in_the_first_middle_or_last_line_of_a_block() {
        let mut text = String::new();
        for i in 10..40 {
            let _ = write!(
                text,
                "fn handler_{i}(request: &Request) -> Response {{\n    let body = request.body();\n    \
                 let parsed = parse(body)?;\n    respond(parsed, {i})\n}}\n\n"
            );
        }
        let block = "fn handler_17(request: &Request) -> Response {\n    let body = request.body();\n    \
                     let parsed = parse(body)?;\n    respond(parsed, 17)\n}";
        let lines: Vec<&str> = block.lines().collect();
        for (line, typo) in [(0, ("handler_17", "handlr_17")), (2, ("parsed", "parsde")), (3, ("respond", "resppond"))]
        {
            let mut quote = lines.clone();
            let changed = quote[line].replacen(typo.0, typo.1, 1);
            quote[line] = &changed;
            let quote = quote.join("\n");
            assert_eq!(only_region(&text, &quote), block, "a typo in line {line}");
        }
    }

    #[test]
    fn of_regions_equally_alike_the_one_indented_as_the_quote_comes_first() {
        let text = "/// let builder = Builder::new();\n\nfn f() {\n    /// let builder = Builder::new();\n}\n";
        assert_eq!(shown(text, "    /// let builder = Builder::nw();\n"), [(3, 4), (0, 1)]);
        assert_eq!(shown(text, "/// let builder = Builder::nw();\n"), [(0, 1), (3, 4)]);
    }

    #[test]
    fn two_regions_nearly_as_alike_are_both_shown() {
        let text = "fn a() {\n    retry(connection);\n}\n\nfn b() {\n    retry(connection);\n}\n";
        assert_eq!(shown(text, "    retyr(connection);\n"), [(1, 2), (5, 6)]);
        // One character to remove, or one to change: as likely.
        let text = "fn a() {\n    retry(connection);\n}\n\nfn b() {\n    retry(connections);\n}\n";
        assert_eq!(shown(text, "    retry(connectionz);\n"), [(1, 2), (5, 6)]);
        // One character away, or five: only the first.
        let text = "fn a() {\n    retry(connection);\n}\n\nfn b() {\n    retry(connections, 2);\n}\n";
        assert_eq!(shown(text, "    retry(connectionz);\n"), [(1, 2)]);
    }

    #[test]
    fn a_megabyte_document_is_searched_within_its_bounds() {
        // About 1 MB: 30,000 lines, each unique.
        let text: String = (0..30_000).map(|i| format!("    let value_{i} = compute({i}, \"alpha\");\n")).collect();
        assert!(text.len() > 1_000_000);
        let found = search_in(&text, "    let value_29000 = compote(29000, \"alpha\");\n");
        let lines: Vec<(usize, usize)> = found.regions.iter().map(|near| (near.lines.start, near.lines.end)).collect();
        assert_eq!(lines, [(29_000, 29_001)]);
        assert_eq!(found.work.lines_scanned, 30_000);
        assert!(found.work.regions_compared <= 2 * MAX_CANDIDATES, "{:?}", found.work);
        assert!(!found.work.timed_out);
        // Past the deadline nothing more is scanned nor compared.
        let late =
            search(&Rope::from_str(&text), "let value_29000 = compote(1);\n", 0..text.len(), "doc", Instant::now());
        assert_eq!(late.work, Work { lines_scanned: 0, regions_compared: 0, timed_out: true });
        assert_eq!(late.regions, []);
    }

    #[test]
    fn at_most_the_scan_limit_of_lines_is_read() {
        let text: String = (0..(MAX_SCAN_LINES + 5_000)).map(|i| format!("v{i}\n")).collect();
        let found = search_in(&text, "v12 x\n");
        assert_eq!(found.work.lines_scanned, MAX_SCAN_LINES);
        assert_eq!(found.regions.first().map(|near| near.lines.clone()), Some(12..13));
    }
}
