//! The normalization ladder: finding a quote that is *almost* verbatim, with
//! certainty, and writing the replacement so that it fits the document.
//!
//! Agents quote almost right more often than they quote wrong. When a quote does not
//! occur exactly in its window, the ladder is climbed one rung at a time; each rung
//! keeps the normalizations of the rungs below it and adds one:
//!
//! 1. line-number prefixes copied from a read (`   42\t`, `42→`, `L42:`, `  42 | `)
//!    are stripped from the quote, but only when every line of the quote carries one
//!    and the numbers count up by one; the lines of the replacement that carry one
//!    lose it too;
//! 2. typographic quotes, dashes and non-breaking spaces compare equal to `'`, `"`,
//!    `-` and a space;
//! 3. `\r\n`, `\r` and `\n` compare equal;
//! 4. spaces and tabs at the end of a line are ignored;
//! 5. indentation is ignored, provided the document's lines are indented by one
//!    uniform shift of the quote's: deeper or shallower by the same prefix, or
//!    levels written with tabs instead of spaces (or back), a tab as wide as the
//!    step between two levels of the side in spaces, or, with one level seen, as
//!    the quote itself maps it line for line (never a guessed width: new lines at
//!    a depth such a mapping does not cover are refused).
//!
//! The climb stops at the first rung where the quote matches at all, and adds
//! every other place the loosest rung fits: a quote that fits two places under
//! any rung or mix of rungs is ambiguous, never applied to the place that needs
//! fewer normalizations. (An exact match is the quote itself and is never
//! climbed from.) What to do with the matches is the caller's rule (unique,
//! `occurrence`, `replaceAll`): the ladder never picks one of several.
//!
//! Matching runs on a canonical copy of the window in which every byte remembers
//! where it came from ([`Canonical`]); a match maps back to an exact byte range of
//! the original text, so a replacement never reaches outside what was matched.
//! [`adapt`] then writes the replacement in the document's own terms: lines the
//! replacement keeps from the quote are taken from the document as they are, new
//! lines get the document's line ending and typography.
//!
//! Their indentation is a question only when rung 5 found the quote: the new text
//! may be written for the file as it stands, or carry the quote's shift. One
//! place, [`decide_reading`], answers it for every path (str_replace, replaceRange,
//! batch entries, patch hunks, SEARCH/REPLACE blocks), from the evidence the edit
//! carries: lines typed in both the quote and the new text (a str_replace, a
//! SEARCH/REPLACE block, a hunk's `-` and `+` lines) must land on their quote
//! line's indentation in the document; a hunk's context lines, written once, say
//! nothing, and runs of inserted lines must be well-formed beside the lines around
//! them. The one reading that fits is taken, applied to every new line alike (a
//! new line equal to a quote line is the document's line only where the reading
//! puts it there) and noted ([`Reading`]: "new text kept as written" or
//! "re-indented by the quote's shift"); both or neither is refused, never picked.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::time::{Duration, Instant};

use memchr::memmem::Finder;
use ropey::Rope;
use similar::{Algorithm, DiffOp, TextDiff, capture_diff_slices_deadline};

use crate::quote::find_all;

/// A way in which a quote or a replacement was adjusted. The first five are the
/// rungs of the ladder, in order; then the deletion nicety of `plan.rs`, and the
/// two readings of a new text's indentation ([`Reading`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Normalization {
    LineNumbers,
    Typography,
    LineEndings,
    TrailingWhitespace,
    Indentation,
    /// An empty replacement of whole lines also removed the line break after them.
    DeletedTrailingNewline,
    /// The quote was found by ignoring a shift of indentation, and the new text
    /// already fit the file: it was written as sent.
    NewTextKept,
    /// The quote was found by ignoring a shift of indentation, and the new text
    /// carried the same shift: it was moved by it.
    NewTextReindented,
}

impl Normalization {
    /// The name used on the wire, in `normalizations`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LineNumbers => "lineNumbers",
            Self::Typography => "typography",
            Self::LineEndings => "lineEndings",
            Self::TrailingWhitespace => "trailingWhitespace",
            Self::Indentation => "indentation",
            Self::DeletedTrailingNewline => "deletedTrailingNewline",
            Self::NewTextKept => "newTextKept",
            Self::NewTextReindented => "newTextReindented",
        }
    }

    /// What the normalization ignores, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::LineNumbers => "line-number prefixes",
            Self::Typography => "typographic quotes, dashes and non-breaking spaces",
            Self::LineEndings => "line endings",
            Self::TrailingWhitespace => "trailing whitespace",
            Self::Indentation => "indentation",
            Self::DeletedTrailingNewline => "the line break after deleted lines",
            Self::NewTextKept => "new text kept as written (it already fit the file)",
            Self::NewTextReindented => "new text re-indented by the quote's shift",
        }
    }
}

/// The longest the line diff of a replacement against its quote may take.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// The rungs of the ladder, in the order they are climbed.
pub const LADDER: [Normalization; 5] = [
    Normalization::LineNumbers,
    Normalization::Typography,
    Normalization::LineEndings,
    Normalization::TrailingWhitespace,
    Normalization::Indentation,
];

/// Which comparisons a canonical copy relaxes (rungs 2 to 5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Rules {
    typography: bool,
    line_endings: bool,
    trailing_whitespace: bool,
    indentation: bool,
}

impl Rules {
    /// The rules of rung `rung` (2..=5) and every rung below it.
    fn up_to(rung: usize) -> Self {
        Self { typography: rung >= 2, line_endings: rung >= 3, trailing_whitespace: rung >= 4, indentation: rung >= 5 }
    }

    fn without(self, step: Normalization) -> Self {
        match step {
            Normalization::Typography => Self { typography: false, ..self },
            Normalization::LineEndings => Self { line_endings: false, ..self },
            Normalization::TrailingWhitespace => Self { trailing_whitespace: false, ..self },
            Normalization::Indentation => Self { indentation: false, ..self },
            Normalization::LineNumbers
            | Normalization::DeletedTrailingNewline
            | Normalization::NewTextKept
            | Normalization::NewTextReindented => self,
        }
    }
}

/// The matches of a quote in a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The quote as it was searched for: without its line-number prefixes when rung
    /// 1 applied.
    pub quote: String,
    /// The line-number format stripped from the quote, if any.
    pub prefixes: Option<PrefixStyle>,
    /// Ascending by start; overlapping matches all count.
    pub matches: Vec<Match>,
}

impl Found {
    /// Every normalization any match needed, in ladder order.
    pub fn normalizations(&self) -> BTreeSet<Normalization> {
        self.matches.iter().flat_map(|found| found.used.iter().copied()).collect()
    }
}

/// One match: where it is in the original text, and what it took to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Byte range in the text, on char boundaries.
    pub range: Range<usize>,
    /// Empty for an exact match.
    pub used: BTreeSet<Normalization>,
    /// How the document's indentation differs from the quote's.
    pub shift: IndentShift,
    /// The match starts a line and its first line shifts like the others, so the
    /// first line counts when the new text's indentation is read.
    pub anchored: bool,
}

/// Every match of `quote` in `window`: the exact ones if there are any, else (with
/// `ladder`) those of the lowest rung of the ladder that finds any. `quote` must not
/// be empty; `window` must lie on char boundaries.
pub fn find(text: &Rope, quote: &str, window: Range<usize>, ladder: bool) -> Found {
    let exact = |quote: &str, used: &[Normalization]| -> Vec<Match> {
        find_all(text, quote, window.clone())
            .into_iter()
            .map(|start| Match {
                range: start..start + quote.len(),
                used: used.iter().copied().collect(),
                shift: IndentShift::Same,
                anchored: false,
            })
            .collect()
    };
    let mut matches = exact(quote, &[]);
    if ladder {
        matches = matches.into_iter().map(|found| into_indentation(text, quote, found)).collect();
    }
    if !matches.is_empty() || !ladder {
        return Found { quote: quote.to_owned(), prefixes: None, matches };
    }
    let (quote, prefixes) = match strip_line_numbers(quote) {
        Some((style, stripped)) if !stripped.is_empty() => {
            let matches = exact(&stripped, &[Normalization::LineNumbers]);
            if !matches.is_empty() {
                return Found { quote: stripped, prefixes: Some(style), matches };
            }
            (stripped, Some(style))
        }
        _ => (quote.to_owned(), None),
    };
    let matches = climb(text, &quote, window, prefixes.is_some());
    Found { quote, prefixes, matches }
}

/// An exact match of a quote that starts with indentation, found inside a line's
/// indentation (after more of it): a quote that starts with indentation quotes
/// whole lines, so this is a quote shifted as on rung 5, and the match takes the
/// whole line when every line shifts alike (otherwise it stays as found).
fn into_indentation(text: &Rope, quote: &str, found: Match) -> Match {
    if !starts_with_blank(quote) {
        return found;
    }
    whole_lines(text, quote, found.clone()).unwrap_or(found)
}

/// A match of a quote of whole lines (a patch hunk's old lines) that starts after
/// some indentation: the whole line, with the quote's first line shifted like the
/// others, or `None` when its lines do not shift alike (the quote's first line is
/// then not the document's line). A match at a line start is returned as it is.
pub(crate) fn whole_lines(text: &Rope, quote: &str, found: Match) -> Option<Match> {
    let line_start = text.line_to_byte(text.byte_to_line(found.range.start));
    if line_start == found.range.start || !text.byte_slice(line_start..found.range.start).chars().all(is_blank) {
        return Some(found);
    }
    let span = text.byte_slice(line_start..found.range.end).to_string();
    let shift = IndentShift::between(quote, &span, true)?;
    if shift == IndentShift::Same {
        // Nothing but blanks to compare: the match stays as found.
        return Some(found);
    }
    let mut used = found.used;
    if shift != IndentShift::Same {
        used.insert(Normalization::Indentation);
    }
    Some(Match { range: line_start..found.range.end, used, shift, anchored: true })
}

/// Rungs 2 to 5: the matches of the lowest rung that has any, and every other
/// place the loosest rung fits (a place that needs more normalizations is still a
/// place the quote fits: the match is ambiguous, never the one that needs fewer).
fn climb(text: &Rope, quote: &str, window: Range<usize>, stripped: bool) -> Vec<Match> {
    let haystack = text.byte_slice(window.clone()).to_string();
    let first_line_is_real = window.start == 0 || {
        let before = text.byte(window.start - 1);
        before == b'\n' || before == b'\r'
    };
    // Every rung only adds matches: if the loosest finds no candidate, none will.
    let loosest = Rules::up_to(5);
    let canonical_quote = Canonical::of(without_trailing_blanks(quote), true, loosest);
    if canonical_quote.text.trim().is_empty() {
        // A quote of nothing but whitespace means nothing once whitespace is ignored.
        return Vec::new();
    }
    let loosest_haystack = Canonical::of(&haystack, first_line_is_real, loosest);
    if loosest_haystack.candidates(&canonical_quote.text).is_empty() {
        return Vec::new();
    }
    let search = Search { haystack: &haystack, first_line_is_real, quote, offset: window.start, stripped };
    for rung in 2..=5 {
        let rules = Rules::up_to(rung);
        let mut matches = if rung == 5 {
            search.matches(&loosest_haystack, rules)
        } else {
            search.matches(&Canonical::of(&haystack, first_line_is_real, rules), rules)
        };
        if matches.is_empty() {
            continue;
        }
        if rung < 5 {
            for other in search.matches(&loosest_haystack, loosest) {
                let overlaps =
                    |found: &Match| found.range.start < other.range.end && other.range.start < found.range.end;
                if !matches.iter().any(overlaps) {
                    matches.push(other);
                }
            }
            matches.sort_by_key(|found| found.range.start);
        }
        return matches;
    }
    Vec::new()
}

/// A quote looked up in a window's canonical copies.
struct Search<'a> {
    haystack: &'a str,
    first_line_is_real: bool,
    quote: &'a str,
    /// Where the window starts in the text.
    offset: usize,
    /// Rung 1 stripped the quote's line numbers.
    stripped: bool,
}

impl Search<'_> {
    /// The matches of the quote in `canonical` (the haystack under `rules`).
    fn matches(&self, canonical: &Canonical, rules: Rules) -> Vec<Match> {
        let (quote, haystack) = (self.quote, self.haystack);
        // Trailing whitespace ignored, a quote's last line ignores it too, even without
        // a line break after it: the quote then ends where a line does.
        let trimmed = without_trailing_blanks(quote);
        let ends_line = rules.trailing_whitespace && trimmed.len() < quote.len();
        let needle = Canonical::of(if rules.trailing_whitespace { trimmed } else { quote }, true, rules);
        if needle.text.is_empty() {
            return Vec::new();
        }
        let anchored = rules.indentation && starts_with_blank(quote);
        let mut matches = Vec::new();
        for candidate in canonical.candidates(&needle.text) {
            let Some(found) = verify(
                canonical,
                haystack,
                self.first_line_is_real,
                quote,
                candidate,
                needle.text.len(),
                rules,
                anchored,
            ) else {
                continue;
            };
            if !whole_lines_quoted(haystack, self.first_line_is_real, quote, &found.range, ends_line) {
                continue;
            }
            let mut used: BTreeSet<Normalization> = BTreeSet::new();
            if self.stripped {
                used.insert(Normalization::LineNumbers);
            }
            let span = &haystack[found.range.clone()];
            // A rung was needed when the match is lost without it (rung 5 may also have
            // dropped a last line of nothing but indentation).
            for step in [
                Normalization::Typography,
                Normalization::LineEndings,
                Normalization::TrailingWhitespace,
                Normalization::Indentation,
            ] {
                let without = rules.without(step);
                let source = if without.trailing_whitespace { trimmed } else { quote };
                if without != rules
                    && Canonical::of(source, true, without).text != Canonical::of(span, true, without).text
                {
                    used.insert(step);
                }
            }
            if found.shift != IndentShift::Same {
                used.insert(Normalization::Indentation);
            }
            let range = self.offset + found.range.start..self.offset + found.range.end;
            matches.push(Match { range, used, shift: found.shift, anchored: found.anchored });
        }
        matches
    }
}

/// A candidate checked against what the rules cannot see (where a line starts, and
/// whether indentation differs uniformly); its range is relative to the haystack.
struct Verified {
    range: Range<usize>,
    shift: IndentShift,
    anchored: bool,
}

#[allow(clippy::too_many_arguments)]
fn verify(
    canonical: &Canonical,
    haystack: &str,
    first_line_is_real: bool,
    quote: &str,
    at: usize,
    len: usize,
    rules: Rules,
    anchored: bool,
) -> Option<Verified> {
    let mut start = canonical.map_start(at);
    let end = canonical.map_end(at + len);
    if anchored {
        // The quote starts with indentation, so it must start where a line does.
        start = canonical.real_line_start(at)?;
    }
    if end < start {
        return None;
    }
    if rules.indentation && !anchored {
        // A quote whose first line lost its indentation, found at the start of a line
        // or after nothing but indentation: the match takes the whole line when the
        // first line shifts like the others, so that the new text's first line is
        // read like its other lines.
        let line_start = haystack[..start].rfind(['\n', '\r']).map(|at| at + 1).or(first_line_is_real.then_some(0));
        if let Some(line_start) = line_start
            && haystack[line_start..start].chars().all(is_blank)
            && let Some(shift) = IndentShift::between(quote, &haystack[line_start..end], true)
        {
            return Some(Verified { range: line_start..end, shift, anchored: true });
        }
    }
    let shift = if rules.indentation {
        IndentShift::between(quote, &haystack[start..end], anchored)?
    } else {
        IndentShift::Same
    };
    Some(Verified { range: start..end, shift, anchored })
}

/// `quote` without the trailing blanks of its last line, when that line has no line
/// break and something besides them.
fn without_trailing_blanks(quote: &str) -> &str {
    let trimmed = quote.trim_end_matches([' ', '\t']);
    if trimmed.ends_with(['\n', '\r']) || trimmed.is_empty() { quote } else { trimmed }
}

/// Whether a match `range` of the haystack, found under a rung of the ladder, quotes
/// whole lines as it must: a quote of several lines starts where a line does (after
/// its indentation), and a quote whose last line ended in trailing whitespace that the
/// rung ignored (`ends_line`) ends where a line does (before its own). Only an exact
/// quote may start inside a line, or end inside one after quoting its end.
fn whole_lines_quoted(
    haystack: &str,
    first_line_is_real: bool,
    quote: &str,
    range: &Range<usize>,
    ends_line: bool,
) -> bool {
    let several = quote.trim_end_matches(['\n', '\r']).contains(['\n', '\r']);
    let line_start = haystack[..range.start].rfind(['\n', '\r']).map(|at| at + 1);
    let starts = match line_start {
        Some(line_start) => haystack[line_start..range.start].chars().all(is_blank),
        None => !first_line_is_real || haystack[..range.start].chars().all(is_blank),
    };
    let rest = &haystack[range.end..];
    let ends = rest.find(['\n', '\r']).map_or(rest, |at| &rest[..at]).chars().all(is_blank);
    (!several || starts) && (!ends_line || ends)
}

fn starts_with_blank(text: &str) -> bool {
    text.starts_with([' ', '\t'])
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// A copy of a text under some [`Rules`], remembering where each byte came from.
#[derive(Debug, Default)]
struct Canonical {
    text: String,
    /// Sorted, non-overlapping, in order in both texts. Original bytes between two
    /// segments were dropped by the rules. A segment whose two sides have the same
    /// length maps byte for byte; any other has a one-byte canonical side.
    segments: Vec<Segment>,
    /// `(canonical offset, original offset)` of every line start that is a line
    /// start in the original too (the first line of a window cut mid-line is not).
    line_starts: Vec<(usize, usize)>,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    canonical: usize,
    canonical_len: usize,
    original: usize,
    original_len: usize,
}

impl Canonical {
    fn of(text: &str, first_line_is_real: bool, rules: Rules) -> Self {
        let mut out = Self { text: String::with_capacity(text.len()), ..Self::default() };
        let mut chars: Vec<(usize, char, char)> = Vec::new();
        for (index, (line_start, content, terminator)) in lines_with_offsets(text).into_iter().enumerate() {
            chars.clear();
            chars.extend(content.char_indices().map(|(offset, c)| {
                let mapped = if rules.typography { ascii_of(c).unwrap_or(c) } else { c };
                (line_start + offset, c, mapped)
            }));
            let mut low = 0;
            let mut high = chars.len();
            if rules.indentation {
                while low < high && is_blank(chars[low].2) {
                    low += 1;
                }
            }
            if rules.trailing_whitespace && !terminator.is_empty() {
                while high > low && is_blank(chars[high - 1].2) {
                    high -= 1;
                }
            }
            if index > 0 || first_line_is_real {
                out.line_starts.push((out.text.len(), line_start));
            }
            for &(offset, original, mapped) in &chars[low..high] {
                out.push(offset, original.len_utf8(), mapped);
            }
            if !terminator.is_empty() {
                let offset = line_start + content.len();
                if rules.line_endings {
                    out.push(offset, terminator.len(), '\n');
                } else {
                    for (i, c) in terminator.char_indices() {
                        out.push(offset + i, 1, c);
                    }
                }
            }
        }
        out
    }

    fn push(&mut self, original: usize, original_len: usize, c: char) {
        let canonical = self.text.len();
        self.text.push(c);
        let canonical_len = c.len_utf8();
        if let Some(last) = self.segments.last_mut() {
            let contiguous =
                last.original + last.original_len == original && last.canonical + last.canonical_len == canonical;
            if contiguous && last.canonical_len == last.original_len && canonical_len == original_len {
                last.canonical_len += canonical_len;
                last.original_len += original_len;
                return;
            }
        }
        self.segments.push(Segment { canonical, canonical_len, original, original_len });
    }

    /// Starts of every occurrence of `needle` (overlapping ones included).
    fn candidates(&self, needle: &str) -> Vec<usize> {
        let mut starts = Vec::new();
        if needle.is_empty() {
            return starts;
        }
        let finder = Finder::new(needle.as_bytes());
        let bytes = self.text.as_bytes();
        let mut from = 0;
        while let Some(i) = finder.find(&bytes[from..]) {
            starts.push(from + i);
            from += i + 1;
        }
        starts
    }

    /// The original offset of a canonical start offset.
    fn map_start(&self, at: usize) -> usize {
        let index = self.segments.partition_point(|segment| segment.canonical <= at);
        let Some(segment) = index.checked_sub(1).and_then(|index| self.segments.get(index)) else { return 0 };
        if at >= segment.canonical + segment.canonical_len {
            // Past the last segment: the end of the text.
            return segment.original + segment.original_len;
        }
        if segment.canonical_len == segment.original_len {
            segment.original + (at - segment.canonical)
        } else {
            segment.original
        }
    }

    /// The original offset of a canonical end offset (exclusive).
    fn map_end(&self, at: usize) -> usize {
        let index = self.segments.partition_point(|segment| segment.canonical < at);
        let Some(segment) = index.checked_sub(1).and_then(|index| self.segments.get(index)) else { return 0 };
        if segment.canonical_len == segment.original_len {
            segment.original + (at - segment.canonical).min(segment.canonical_len)
        } else {
            segment.original + segment.original_len
        }
    }

    /// The original start of the line, when `at` is where a real line starts.
    fn real_line_start(&self, at: usize) -> Option<usize> {
        let index = self.line_starts.binary_search_by_key(&at, |(canonical, _)| *canonical).ok()?;
        Some(self.line_starts[index].1)
    }
}

/// `(offset, content, terminator)` of each line; `\r\n`, `\n` and `\r` end lines, and
/// a final empty line after the last terminator is not a line.
fn lines_with_offsets(text: &str) -> Vec<(usize, &str, &str)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    while let Some(offset) = memchr::memchr2(b'\r', b'\n', &bytes[start..]) {
        let at = start + offset;
        let end = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') { at + 2 } else { at + 1 };
        lines.push((start, &text[start..at], &text[at..end]));
        start = end;
    }
    if start < text.len() {
        lines.push((start, &text[start..], ""));
    }
    lines
}

/// `(content, terminator)` of each line.
fn split_lines(text: &str) -> Vec<(&str, &str)> {
    lines_with_offsets(text).into_iter().map(|(_, content, terminator)| (content, terminator)).collect()
}

/// The ASCII form of a typographic character.
pub fn ascii_of(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Some('"'),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => Some('-'),
        '\u{00A0}' | '\u{2007}' | '\u{202F}' => Some(' '),
        _ => None,
    }
}

// --- Rung 1: line-number prefixes -------------------------------------------------

/// A line-number format copied from a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixStyle {
    /// `cat -n`: optional spaces, the number, a tab.
    Tab,
    /// Optional spaces, the number, `→` (as many agent read tools print it).
    Arrow,
    /// `L42:`, followed by one space when `spaced`.
    L { spaced: bool },
    /// Verbatim's own context snippets: an optional `>` marker, spaces, the number, ` | `.
    Bar,
}

/// The number and the rest of a line that carries a prefix of `style`.
fn split_prefix(line: &str, style: PrefixStyle) -> Option<(u64, &str)> {
    let digits_then = |rest: &str| -> Option<(u64, usize)> {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        Some((rest[..digits].parse().ok()?, digits))
    };
    match style {
        PrefixStyle::Tab | PrefixStyle::Arrow => {
            let rest = line.trim_start_matches(' ');
            let (number, digits) = digits_then(rest)?;
            let separator = if style == PrefixStyle::Tab { "\t" } else { "→" };
            Some((number, rest[digits..].strip_prefix(separator)?))
        }
        PrefixStyle::L { spaced } => {
            let rest = line.strip_prefix('L')?;
            let (number, digits) = digits_then(rest)?;
            let rest = rest[digits..].strip_prefix(':')?;
            Some((number, if spaced { rest.strip_prefix(' ').unwrap_or(rest) } else { rest }))
        }
        PrefixStyle::Bar => {
            let rest = line.strip_prefix('>').unwrap_or(line).trim_start_matches(' ');
            let (number, digits) = digits_then(rest)?;
            let rest = rest[digits..].strip_prefix(" |")?;
            Some((number, rest.strip_prefix(' ').unwrap_or(rest)))
        }
    }
}

/// The quote without its line-number prefixes, when every line carries one of the
/// same format and the numbers count up by one.
fn strip_line_numbers(quote: &str) -> Option<(PrefixStyle, String)> {
    let lines = split_lines(quote);
    if lines.is_empty() {
        return None;
    }
    let spaced = lines.iter().all(|(content, _)| {
        split_prefix(content, PrefixStyle::L { spaced: false })
            .is_some_and(|(_, rest)| rest.is_empty() || rest.starts_with(' '))
    });
    let styles = [PrefixStyle::Tab, PrefixStyle::Arrow, PrefixStyle::L { spaced }, PrefixStyle::Bar];
    'styles: for style in styles {
        let mut stripped = String::with_capacity(quote.len());
        let mut previous: Option<u64> = None;
        for (content, terminator) in &lines {
            let Some((number, rest)) = split_prefix(content, style) else { continue 'styles };
            if previous.is_some_and(|previous| previous + 1 != number) {
                continue 'styles;
            }
            previous = Some(number);
            stripped.push_str(rest);
            stripped.push_str(terminator);
        }
        return Some((style, stripped));
    }
    None
}

/// The replacement without the prefixes of `style` on the lines that carry one.
fn strip_replacement(replacement: &str, style: PrefixStyle) -> String {
    split_lines(replacement)
        .into_iter()
        .map(|(content, terminator)| {
            let content = split_prefix(content, style).map_or(content, |(_, rest)| rest);
            format!("{content}{terminator}")
        })
        .collect()
}

// --- Rung 5: indentation --------------------------------------------------------------

/// How the document's indentation relates to the quote's, line for line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndentShift {
    Same,
    /// Every line of the document is indented by this much more.
    Deeper(String),
    /// Every line of the document is indented by this much less.
    Shallower(String),
    /// The quote is indented with `from` (a space or a tab) where the document uses
    /// the other, `width` spaces to a tab; after converting, `then` applies.
    Converted {
        from: char,
        width: usize,
        then: Box<IndentShift>,
    },
}

/// Tab widths tried when a quote in spaces meets a document in tabs (or back) and
/// the levels differ too.
const TAB_WIDTHS: [usize; 3] = [2, 4, 8];

impl IndentShift {
    /// The shift between the lines of `quote` and of `span`, if it is uniform. The
    /// first line counts only when `anchored` (otherwise it may start mid-line);
    /// blank lines never count.
    fn between(quote: &str, span: &str, anchored: bool) -> Option<Self> {
        let quote_lines = split_lines(quote);
        let span_lines = split_lines(span);
        let pairs: Vec<(&str, &str)> = quote_lines
            .iter()
            .zip(&span_lines)
            .enumerate()
            .filter(|(index, ((content, _), _))| (*index > 0 || anchored) && !content.chars().all(is_blank))
            .map(|(_, ((quoted, _), (found, _)))| (leading_blanks(quoted), leading_blanks(found)))
            .collect();
        Self::of_pairs(&pairs)
    }

    fn of_pairs(pairs: &[(&str, &str)]) -> Option<Self> {
        Self::by_prefix(pairs).or_else(|| Self::conversion(pairs))
    }

    /// The same characters, one prefix more or less on every line.
    fn by_prefix<Q: AsRef<str>>(pairs: &[(Q, &str)]) -> Option<Self> {
        if pairs.iter().all(|(quoted, found)| quoted.as_ref() == *found) {
            return Some(Self::Same);
        }
        let (first_quoted, first_found) = pairs.first()?;
        let first_quoted = first_quoted.as_ref();
        if let Some(prefix) = first_found.strip_suffix(first_quoted)
            && pairs.iter().all(|(quoted, found)| found.strip_prefix(prefix) == Some(quoted.as_ref()))
        {
            return Some(Self::Deeper(prefix.to_owned()));
        }
        if let Some(prefix) = first_quoted.strip_suffix(first_found)
            && pairs.iter().all(|(quoted, found)| quoted.as_ref().strip_prefix(prefix) == Some(*found))
        {
            return Some(Self::Shallower(prefix.to_owned()));
        }
        None
    }

    /// Spaces for tabs (or back): the quote uses only one of them, the document only
    /// the other. A tab is as wide as one level of the side written in spaces (its
    /// smallest step, 2, 4 or 8), and after converting, the levels must differ by a
    /// uniform prefix.
    fn conversion(pairs: &[(&str, &str)]) -> Option<Self> {
        let kind = |indents: &mut dyn Iterator<Item = &str>, aligned: bool| -> Option<char> {
            let mut kind = None;
            for indent in indents.filter(|indent| !indent.is_empty()) {
                let first = indent.chars().next()?;
                let written_one_way = in_kind(indent, first) && (aligned || indent.chars().all(|c| c == first));
                if !written_one_way || kind.is_some_and(|kind| kind != first) {
                    return None;
                }
                kind = Some(first);
            }
            kind
        };
        // The quote's tabs may be followed by a few spaces that align a continuation
        // (a string continued at column 21: five tabs and a space); the document's side
        // is written one way.
        // Lines quoted with the document's own indentation (a comment's ` * ` beside
        // code in tabs) need no conversion, and say nothing of one; they must still be
        // kept as they are (see `fits`). A line at the margin in both is a level (0).
        let converted = || pairs.iter().filter(|(quoted, found)| quoted != found || quoted.is_empty());
        let from = kind(&mut converted().map(|(quoted, _)| *quoted), true)?;
        // A quote in spaces may stand for the document's tabs followed by aligning
        // spaces (a continuation in a tab and four spaces, beside a block in two tabs).
        let to = kind(&mut converted().map(|(_, found)| *found), from == ' ')?;
        // The levels: lines whose quote indentation is whole tabs or spaces, and whose
        // document indentation too (not aligned).
        let levels = || converted().filter(|(quoted, found)| quoted.chars().all(|c| c == from) && !is_aligned(found));
        if from == to {
            return None;
        }
        let fits = |width: usize| -> Option<Self> {
            let mut aligned = false;
            let mut converted: Vec<(String, &str)> = Vec::with_capacity(pairs.len());
            for (quoted, found) in pairs {
                if from == ' ' && (quoted == found || is_aligned(found)) {
                    let written = convert_indent(quoted, from, width);
                    if written != *found {
                        // Line for line only: the document's tabs, `width` columns each,
                        // and its aligning spaces are the quote's spaces (or its spaces
                        // alone, quoted as they are).
                        if expand_tabs(found, width) != *quoted {
                            return None;
                        }
                        aligned = true;
                    } else {
                        converted.push((written, *found));
                    }
                    continue;
                }
                if from == ' ' && quoted != found && quoted.len() % width != 0 {
                    return None;
                }
                converted.push((convert_indent(quoted, from, width), *found));
            }
            let then = if converted.is_empty() { Self::Same } else { Self::by_prefix(&converted)? };
            // Aligned lines map only where the levels are kept.
            (!aligned || then == Self::Same).then(|| Self::Converted { from, width, then: Box::new(then) })
        };
        // The width is the unit of the side written in spaces (the smallest step
        // between its levels), never a width that merely makes the lines fit: two
        // tabs for two spaces is a shift of levels, not a tab of one space.
        let spaces: BTreeSet<usize> =
            levels().map(|(quoted, found)| if from == ' ' { quoted.len() } else { found.len() }).collect();
        // The unit is the step between two levels seen, and every level a whole
        // number of steps.
        if let Some(unit) = spaces.iter().zip(spaces.iter().skip(1)).map(|(low, high)| high - low).min() {
            if !TAB_WIDTHS.contains(&unit) || spaces.iter().any(|len| len % unit != 0) {
                return None;
            }
            return fits(unit);
        }
        // One level seen: the quote itself maps it (so many spaces are so many tabs,
        // line for line), and levels are kept. Only the depths the quote covers are
        // known; [`decide_reading`] refuses new lines at any other.
        let tabs: BTreeSet<usize> =
            levels().map(|(quoted, found)| if from == ' ' { found.len() } else { quoted.len() }).collect();
        let (&level, &tab_count) = (spaces.first()?, tabs.first()?);
        if tabs.len() != 1 || tab_count == 0 || level % tab_count != 0 || !TAB_WIDTHS.contains(&(level / tab_count)) {
            return None;
        }
        fits(level / tab_count).filter(|shift| matches!(shift, Self::Converted { then, .. } if **then == Self::Same))
    }

    /// Whether the quote's line indented `quoted` stands for the document's line
    /// indented `found` only line for line: spaces for a document's tabs followed by
    /// aligning spaces, or its own spaces where others stand for tabs, which
    /// [`Self::apply`] would write in tabs alone. A new line standing for that quote
    /// line, at its indentation, is written at the document line's (see
    /// [`decide_reading`] and [`adapt`]).
    fn aligns(&self, quoted: &str, found: &str) -> bool {
        matches!(self, Self::Converted { from: ' ', width, then }
            if **then == Self::Same
                && expand_tabs(found, *width) == quoted
                && (is_aligned(found) || (quoted == found && convert_indent(quoted, ' ', *width) != found)))
    }

    /// Whether the document's line indented `found` is aligned rather than at a level,
    /// in a document this shift converts spaces to tabs for: tabs followed by spaces,
    /// or spaces alone. Such a line continues another; no line is its sibling.
    fn aligned_in_document(&self, found: &str) -> bool {
        is_aligned(found) || (matches!(self, Self::Converted { from: ' ', .. }) && found.starts_with(' '))
    }

    /// The width of a tab in a conversion of tabs and spaces, if it is one.
    fn tab_width(&self) -> Option<(char, usize)> {
        match self {
            Self::Converted { from, width, .. } => Some((*from, *width)),
            Self::Same | Self::Deeper(_) | Self::Shallower(_) => None,
        }
    }

    /// The indentation a line written as `indent` gets in the document, when the
    /// shift applies to it as it stands: `None` for a line shallower than the prefix
    /// a shallower shift removes, or not written in the quote's kind of indentation.
    fn apply_exactly(&self, indent: &str) -> Option<String> {
        match self {
            Self::Shallower(prefix) => indent.strip_prefix(prefix.as_str()).map(str::to_owned),
            Self::Converted { from, width, then } => {
                let other = if *from == ' ' { '\t' } else { ' ' };
                if indent.chars().all(|c| c == other) {
                    // Already in the document's kind of indentation.
                    return then.apply_exactly(indent);
                }
                if !in_kind(indent, *from) || (*from == ' ' && !indent.len().is_multiple_of(*width)) {
                    return None;
                }
                then.apply_exactly(&convert_indent(indent, *from, *width))
            }
            Self::Same | Self::Deeper(_) => Some(self.apply(indent)),
        }
    }

    /// The same mapping of spaces to tabs (or back), without moving any level: how
    /// new text kept as written is put in the document's kind of indentation.
    fn units_only(&self) -> Self {
        match self {
            Self::Converted { from, width, .. } => {
                Self::Converted { from: *from, width: *width, then: Box::new(Self::Same) }
            }
            Self::Same | Self::Deeper(_) | Self::Shallower(_) => Self::Same,
        }
    }

    /// The indentation a replacement line written as `indent` gets in the document.
    fn apply(&self, indent: &str) -> String {
        match self {
            Self::Same => indent.to_owned(),
            Self::Deeper(prefix) => format!("{prefix}{indent}"),
            Self::Shallower(prefix) => match indent.strip_prefix(prefix.as_str()) {
                Some(rest) => rest.to_owned(),
                None => {
                    let common = indent.bytes().zip(prefix.bytes()).take_while(|(a, b)| a == b).count();
                    indent[common..].to_owned()
                }
            },
            Self::Converted { from, width, then } => then.apply(&convert_indent(indent, *from, *width)),
        }
    }
}

/// Indentation written with `from` rewritten with the other of space and tab.
fn convert_indent(indent: &str, from: char, width: usize) -> String {
    if from == ' ' {
        if indent.bytes().all(|b| b == b' ') {
            format!("{}{}", "\t".repeat(indent.len() / width), " ".repeat(indent.len() % width))
        } else {
            indent.to_owned()
        }
    } else {
        indent.replace('\t', &" ".repeat(width))
    }
}

/// Whether `indent` is written in `kind` of indentation: spaces only, or tabs
/// followed by the spaces that align a continuation (fewer than a tab's width is
/// not checked here: the conversion's pairs decide).
fn in_kind(indent: &str, kind: char) -> bool {
    match kind {
        '\t' => indent.starts_with('\t') && indent.trim_start_matches('\t').bytes().all(|b| b == b' '),
        _ => !indent.is_empty() && indent.bytes().all(|b| b == b' '),
    }
}

/// Whether `indent` is tabs followed by spaces that align a continuation (`\t    `):
/// a depth such a document also writes in tabs alone, so that a quote in spaces maps
/// to it line for line only (see [`IndentShift::aligns`]).
fn is_aligned(indent: &str) -> bool {
    indent.ends_with(' ') && in_kind(indent, '\t')
}

/// `indent` with each tab written as `width` spaces.
fn expand_tabs(indent: &str, width: usize) -> String {
    indent.replace('\t', &" ".repeat(width))
}

fn leading_blanks(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

// --- The new text's indentation: kept as written, or shifted like the quote -----------

/// How the new text's indentation was read, when its quote was found only by
/// ignoring a shift of indentation. The new text is written either for the file as
/// it stands, or in the quote's terms; the lines around the match decide which
/// (see [`decide_reading`]), never a default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reading {
    /// The new text already fits the file: written as sent.
    Kept,
    /// The new text carries the quote's shift: moved by the same shift.
    Reindented,
}

impl Reading {
    /// The other reading.
    fn other(self) -> Self {
        match self {
            Self::Kept => Self::Reindented,
            Self::Reindented => Self::Kept,
        }
    }

    /// The note a result carries for this reading.
    pub fn normalization(self) -> Normalization {
        match self {
            Self::Kept => Normalization::NewTextKept,
            Self::Reindented => Normalization::NewTextReindented,
        }
    }
}

/// The new text's indentation fits both readings, or neither: refused, never guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndecidedIndentation;

/// What [`decide_reading`] decided for a new text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decision {
    /// The reading taken; `None` when there was nothing to decide.
    pub reading: Option<Reading>,
    /// For each new line, the indentation it is written at whatever the reading, where
    /// the document's own lines give one: a line standing for a quote line that maps
    /// only line for line (see [`in_place_indents`]), or an added continuation (see
    /// [`continued_lines`]).
    pub indents: Vec<Option<String>>,
}

/// What a match's neighbourhood says about new lines, beyond the match itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Surroundings<'a> {
    /// The nearest non-blank line before the match (without its line break), if any.
    pub before: Option<&'a str>,
    /// The nearest non-blank line after the match (without its line break), if any.
    pub after: Option<&'a str>,
    /// The match starts where a line does.
    pub at_line_start: bool,
    /// A patch hunk's context lines, as `(index among the quote's lines, index
    /// among the new lines)`: they line up with each other, whatever else is equal.
    /// Empty when the format does not mark them (the lines are then diffed). Only
    /// these lines were written once, and say nothing about the new lines'
    /// indentation: every other line equal in quote and new text (in a str_replace,
    /// a SEARCH/REPLACE block, or a hunk's `-` and `+` lines) was typed twice, and
    /// how it was typed is evidence.
    pub context: &'a [(usize, usize)],
    /// Every indentation the document writes (distinct, without the empty one),
    /// when the match converts tabs and spaces: a new line at a depth the quote
    /// does not cover is written only where the document writes that depth one way.
    pub file_indents: &'a [String],
    /// The last characters of the document's lines that a deeper line follows (see
    /// [`openers`]), read when first needed: a line ending otherwise opens nothing in
    /// this document, whatever it would in another language. `None` or empty: not
    /// known, every ending that may open does.
    pub openers: Option<&'a DocumentOpeners<'a>>,
    /// The document's lines before the match that open the blocks it is in, nearest
    /// first, read when first needed (see [`EnclosingLines`]).
    pub enclosing: Option<&'a EnclosingLines<'a>>,
}

/// The line diff of a quote (`old` lines) and a new text (`new` lines): between
/// the marked `context` pairs (when there are any and they fit), each stretch is
/// diffed by `diff`, with offsets made absolute; otherwise the whole is.
fn aligned(
    old: usize,
    new: usize,
    context: &[(usize, usize)],
    diff: impl Fn(Range<usize>, Range<usize>) -> Vec<DiffOp>,
) -> Vec<DiffOp> {
    let fits = context.windows(2).all(|pair| pair[0].0 < pair[1].0 && pair[0].1 < pair[1].1)
        && context.last().is_none_or(|(i, j)| *i < old && *j < new);
    if context.is_empty() || !fits {
        return diff(0..old, 0..new);
    }
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    let stretch = |ops: &mut Vec<DiffOp>, old: Range<usize>, new: Range<usize>| {
        let (old_start, new_start) = (old.start, new.start);
        for op in diff(old, new) {
            ops.push(match op {
                DiffOp::Equal { old_index, new_index, len } => {
                    DiffOp::Equal { old_index: old_index + old_start, new_index: new_index + new_start, len }
                }
                DiffOp::Delete { old_index, old_len, new_index } => {
                    DiffOp::Delete { old_index: old_index + old_start, old_len, new_index: new_index + new_start }
                }
                DiffOp::Insert { old_index, new_index, new_len } => {
                    DiffOp::Insert { old_index: old_index + old_start, new_index: new_index + new_start, new_len }
                }
                DiffOp::Replace { old_index, old_len, new_index, new_len } => DiffOp::Replace {
                    old_index: old_index + old_start,
                    old_len,
                    new_index: new_index + new_start,
                    new_len,
                },
            });
        }
    };
    for &(context_old, context_new) in context {
        stretch(&mut ops, i..context_old, j..context_new);
        ops.push(DiffOp::Equal { old_index: context_old, new_index: context_new, len: 1 });
        (i, j) = (context_old + 1, context_new + 1);
    }
    stretch(&mut ops, i..old, j..new);
    ops
}

/// The role of one line of the new text in deciding the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// It stands for the quote's line `i` (unchanged, or replacing it one for one).
    Paired(usize),
    /// It is the quote's line `i`, written once (a hunk's context line).
    Context(usize),
    /// A new line with no line of the quote to compare with.
    Inserted,
    /// A line paired with a quote line that lands on its indentation under neither
    /// reading: the edit itself moves it (or it is like a line elsewhere). It says
    /// nothing about the reading, and no run is judged against it.
    Moved,
}

/// The role of each new line: the quote's line it stands for (by content once
/// indentation is ignored, or replacing it one for one), a context line written
/// once (only the marked ones), or inserted; and among the inserted ones, those
/// that rewrite a quote line (see [`rewritten_pairs`]), as `(quote line, new line)`.
fn roles_of(quote: &[&str], new: &[&str], context: &[(usize, usize)]) -> (Vec<Role>, Vec<(usize, usize)>) {
    let trimmed = |lines: &[&str]| -> Vec<String> {
        lines.iter().map(|line| line.trim_matches([' ', '\t']).to_owned()).collect()
    };
    let (quote_keys, new_keys) = (trimmed(quote), trimmed(new));
    let deadline = Instant::now() + DIFF_TIMEOUT;
    let mut roles = vec![Role::Inserted; new.len()];
    let mut rewritten = Vec::new();
    for op in aligned(quote.len(), new.len(), context, |old, new| {
        capture_diff_slices_deadline(Algorithm::Myers, &quote_keys[old], &new_keys[new], Some(deadline))
    }) {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for offset in 0..len {
                    let (i, j) = (old_index + offset, new_index + offset);
                    let written_once = context.contains(&(i, j));
                    roles[j] = if written_once { Role::Context(i) } else { Role::Paired(i) };
                }
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } if old_len == new_len => {
                for offset in 0..new_len {
                    roles[new_index + offset] = Role::Paired(old_index + offset);
                }
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                let (old, added) = (old_index..old_index + old_len, new_index..new_index + new_len);
                let lines = (&quote[old.clone()], &new[added.clone()]);
                let pairs = rewritten_pairs(&quote_keys[old], &new_keys[added], lines, deadline);
                rewritten.extend(pairs.into_iter().map(|(i, j)| (old_index + i, new_index + j)));
            }
            DiffOp::Delete { .. } | DiffOp::Insert { .. } => {}
        }
    }
    (roles, rewritten)
}

/// The most lines a stretch of replaced lines may hold, old times new, for
/// [`rewritten_pairs`] to pair them.
const REWRITTEN_PAIRS_MAX: usize = 400;

/// How alike (the share of characters in common) a line and the line that rewrites
/// it are, at least, for [`rewritten_pairs`].
const REWRITTEN_ALIKE: f32 = 0.6;

/// In a stretch the diff replaced by a stretch of another length (`old` quote lines
/// and `new` lines, indentation trimmed; as sent in `old_lines` and `new_lines`), the
/// lines that rewrite one another: an old line rewritten into a new one at the same
/// indentation that starts with the same word (or character) and keeps most of its
/// characters (`except X:` into `except (X, Y):` and a comment under it), paired in
/// order, the most pairs there can be. Blank lines pair with nothing.
///
/// Such a line is no line the quote stands for (it is new, and a run of added lines
/// with the lines around it), but it is evidence: it lands on its old line's
/// indentation only under the reading that shifts the new text like the quote. A
/// line rewritten at another indentation is no pair: the commit may have moved it by
/// as much as the shift (an argument taken out of a call), and it would then be
/// evidence of the other reading, and wrong.
fn rewritten_pairs(
    old: &[String],
    new: &[String],
    (old_lines, new_lines): (&[&str], &[&str]),
    deadline: Instant,
) -> Vec<(usize, usize)> {
    if old.len() * new.len() > REWRITTEN_PAIRS_MAX {
        return Vec::new();
    }
    // The first word of a line (`except`, `return`), or its first character.
    fn kind(line: &str) -> &str {
        let word = line.len() - line.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_').len();
        &line[..word.max(line.chars().next().map_or(0, char::len_utf8))]
    }
    let alike = |i: usize, j: usize| {
        !old[i].is_empty()
            && !new[j].is_empty()
            && leading_blanks(old_lines[i]) == leading_blanks(new_lines[j])
            && kind(&old[i]) == kind(&new[j])
            && TextDiff::configure().deadline(deadline).diff_chars(&old[i], &new[j]).ratio() >= REWRITTEN_ALIKE
    };
    // most[i][j]: the most pairs among old[i..] and new[j..] (a longest common
    // subsequence, "alike" for "equal").
    let (n, m) = (old.len(), new.len());
    let mut most = vec![vec![0usize; m + 1]; n + 1];
    let mut pairs_here = vec![vec![false; m]; n];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            pairs_here[i][j] = alike(i, j);
            let paired = if pairs_here[i][j] { 1 + most[i + 1][j + 1] } else { 0 };
            most[i][j] = paired.max(most[i + 1][j]).max(most[i][j + 1]);
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if pairs_here[i][j] && most[i][j] == 1 + most[i + 1][j + 1] {
            pairs.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if most[i][j] == most[i + 1][j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// For each new line, the document's indentation it is written at when the shift
/// maps some line of the quote only line for line (see [`IndentShift::aligns`]): a
/// new line that stands for a quote line, at that line's indentation, is written at
/// the document line's (both readings alike: such a shift keeps the levels). `None`
/// for every other line, and for every line under any other shift.
fn in_place_indents<'s>(
    quote: &[&str],
    span: &[&'s str],
    new: &[&str],
    roles: &[Role],
    shift: &IndentShift,
    anchored: bool,
) -> Vec<Option<&'s str>> {
    let counts = |i: usize| i > 0 || anchored;
    let line_for_line = quote
        .iter()
        .zip(span)
        .enumerate()
        .any(|(i, (quoted, found))| counts(i) && shift.aligns(leading_blanks(quoted), leading_blanks(found)));
    if !line_for_line {
        return vec![None; new.len()];
    }
    roles
        .iter()
        .zip(new)
        .map(|(role, line)| match *role {
            Role::Paired(i) | Role::Context(i)
                if counts(i) && !line.trim().is_empty() && leading_blanks(line) == leading_blanks(quote[i]) =>
            {
                span.get(i).map(|found| leading_blanks(found))
            }
            _ => None,
        })
        .collect()
}

/// `line` (with or without its line break) at `indent` instead of its own, when
/// there is one.
fn indented_at(line: String, indent: Option<&str>) -> String {
    match indent {
        Some(indent) if !line.trim().is_empty() => format!("{indent}{}", &line[leading_blanks(&line).len()..]),
        _ => line,
    }
}

/// Which reading the lines around a match support: `quote` and `span` are the
/// quote's lines and the document's matched lines (one for one), `new` the new
/// text's lines (all without line breaks); `anchored` says whether the first line
/// of each starts a line of the document.
///
/// The rule, for each reading (kept: the new lines as sent, only put in the
/// document's kind of indentation when `shift` maps spaces to tabs or back;
/// reindented: moved by `shift`): a line of the new text that stands for a line of the
/// quote (unchanged once indentation is ignored, or replacing it one for one) must land
/// on that line's indentation in the document. Every run of inserted lines must be
/// well-formed beside the lines around it in the result (or around the match), by its
/// shallowest line: at the level of the line before or shallower (a block closes), one
/// level (the file's own unit, read from the same lines) deeper when that line may
/// open a block, or at the level of the line after (a sibling of it); with no line
/// before, it says nothing. Exactly one reading passing both decides it, unless that
/// reading writes a run's first line no deeper than a line before it that opens a
/// bracket (and it does not close one), or a run's last line that only closes
/// brackets before a deeper line: such code is not written, and it can only turn a
/// decision into a refusal. Both or neither is [`UndecidedIndentation`].
/// `Ok(None)`: there is nothing to decide (no non-blank new line has any indentation
/// question).
pub fn decide_reading(
    quote: &[&str],
    span: &[&str],
    new: &[&str],
    shift: &IndentShift,
    anchored: bool,
    surroundings: Surroundings<'_>,
) -> Result<Decision, UndecidedIndentation> {
    if *shift == IndentShift::Same {
        return Ok(Decision::default());
    }
    let first_line_at_start = !anchored && surroundings.at_line_start;
    let counts = |index: usize, line: &str| (index > 0 || anchored) && !line.chars().all(is_blank);
    let quote = &quote[..quote.len().min(span.len())];
    let (roles, rewritten) = roles_of(quote, new, surroundings.context);
    // A match that starts a line with a first line that did not shift like the
    // others (it has no indentation in quote and document alike): the new line that
    // stands for it is written where it is, so it must have none either.
    if first_line_at_start
        && roles.iter().zip(new).any(|(role, line)| *role == Role::Paired(0) && !leading_blanks(line).is_empty())
    {
        return Err(UndecidedIndentation);
    }
    let paired: Vec<(usize, usize)> = roles
        .iter()
        .enumerate()
        .filter_map(|(j, role)| match role {
            Role::Paired(i) if counts(*i, quote[*i]) && counts(j, new[j]) => Some((*i, j)),
            _ => None,
        })
        .collect();
    // A document that aligns lines with spaces after its tabs, for a quote in spaces.
    let aligns = surroundings.file_indents.iter().any(|indent| shift.aligned_in_document(indent));
    let lines = NewLines {
        new,
        shift,
        kept: shift.units_only(),
        depths: ConvertedDepths::of(shift, quote, span, &counts, surroundings.file_indents),
        in_place: in_place_indents(quote, span, new, &roles, shift, anchored),
        unplaceable: unplaceable_lines(quote, span, new, &roles, shift, &counts, aligns, surroundings.openers),
    };
    let moved = lines.moved(&paired, span);
    if !paired.is_empty() && moved.len() == paired.len() {
        return Err(UndecidedIndentation);
    }
    let mut roles = roles;
    for &j in &moved {
        roles[j] = Role::Moved;
    }
    let roles = roles;
    let paired: Vec<(usize, usize)> = paired.into_iter().filter(|&(_, j)| roles[j] != Role::Moved).collect();
    let inserted: Vec<usize> = (0..new.len()).filter(|&j| roles[j] == Role::Inserted && counts(j, new[j])).collect();
    if paired.is_empty() && inserted.is_empty() {
        return Ok(Decision { reading: None, indents: lines.indents(Vec::new()) });
    }
    let siblings = sibling_indents(new, &roles, span, surroundings.before, surroundings.openers, shift);
    // Read only for a line neither written one way nor a sibling.
    let levels = OnceCell::new();
    // An added continuation is written where the document's convention puts it (such
    // a shift keeps the levels: both readings map a line alike).
    let openers = surroundings.openers.filter(|_| aligns);
    let continued = continued_lines(new, &roles, span, &siblings, openers, &|j| lines.mapped(Reading::Reindented, j));
    // An added line at a depth the document writes two ways is still written where it
    // lands on the indentation of the line before it, a sibling (see [`sibling_indents`]),
    // or one level under it, where the document follows its ending with nothing else
    // (see [`levels_opened`]).
    let written = |reading: Reading, j: usize| {
        let added = roles[j] == Role::Inserted;
        if let Some(indent) = continued[j].as_ref().filter(|_| added) {
            return Some(indent.clone());
        }
        lines.write(reading, j, added).or_else(|| {
            let mapped = lines.mapped(reading, j)?;
            let level = || {
                levels.get_or_init(|| levels_opened(new, &roles, span, &siblings, surroundings.openers))[j].as_deref()
                    == Some(mapped.as_str())
            };
            (added && (siblings[j].is_some_and(|sibling| sibling == mapped) || level())).then_some(mapped)
        })
    };
    // Readings that both fit and write every line alike leave nothing to decide
    // (spaces for tabs at the same levels, say).
    let same = paired.iter().map(|(_, j)| *j).chain(inserted.iter().copied()).all(|j| {
        let kept = written(Reading::Kept, j);
        kept.is_some() && kept == written(Reading::Reindented, j)
    });
    // Rewritten lines that land on their old line's indentation under a reading
    // weigh as pairs do.
    let lands = |i: usize, j: usize| {
        [Reading::Kept, Reading::Reindented]
            .into_iter()
            .any(|reading| written(reading, j).as_deref() == Some(leading_blanks(span[i])))
    };
    let weighed: Vec<(usize, usize)> = paired
        .iter()
        .copied()
        .chain(rewritten.into_iter().filter(|&(i, j)| counts(i, quote[i]) && counts(j, new[j]) && lands(i, j)))
        .collect();
    let unit = indent_unit(span, surroundings);
    let neighbours = Neighbours { new, span, roles: &roles, anchored, surroundings };
    let weighing = Weighing {
        new,
        span,
        evidence: evidence_of(&weighed, quote, new, &roles),
        paired: &paired,
        moved: &moved,
        runs: runs_of(&inserted, &roles),
        written: &written,
        neighbours: &neighbours,
        unit: unit.as_deref(),
        openers: surroundings.openers,
        hunk: !surroundings.context.is_empty(),
    };
    Ok(Decision { reading: weighing.verdict(same)?, indents: lines.indents(continued) })
}

/// For each added line in a document that aligns continuations with spaces, the
/// indentation the document's convention gives it as a continuation: the line before
/// it ends as the document only ever continues with that line's own indentation and
/// the same spaces (see [`DocumentOpeners::continued_after`]), and it is that many
/// spaces deeper in the new text (written so), or at the same indentation as that line
/// when that line is itself such a continuation (written where it is). `openers` are
/// given only for a document that aligns; without them, no line is continued.
fn continued_lines(
    new: &[&str],
    roles: &[Role],
    span: &[&str],
    siblings: &[Option<&str>],
    openers: Option<&DocumentOpeners<'_>>,
    mapped: &dyn Fn(usize) -> Option<String>,
) -> Vec<Option<String>> {
    let mut continued: Vec<Option<String>> = vec![None; new.len()];
    let Some(openers) = openers else { return continued };
    // Each line's indentation in the document, where it is known: a base for the next.
    let mut placed: Vec<Option<String>> = vec![None; new.len()];
    let mut previous: Option<usize> = None;
    for j in 0..new.len() {
        if new[j].trim().is_empty() {
            continue;
        }
        placed[j] = match roles[j] {
            // A line rewritten in place may be paired with another by its position only:
            // the base of a continuation is a line the new text copies.
            Role::Paired(i) | Role::Context(i) => {
                (span[i].trim() == new[j].trim()).then(|| leading_blanks(span[i]).to_owned())
            }
            Role::Inserted => {
                let continuation = previous.and_then(|k| {
                    let before = placed[k].clone()?;
                    let spaces = openers.continued_after(new[k])?;
                    let (indent, above) = (leading_blanks(new[j]), leading_blanks(new[k]));
                    if indent.strip_prefix(above) == Some(spaces) {
                        Some(format!("{before}{spaces}"))
                    } else if indent == above && before.ends_with(spaces) && before.contains('\t') {
                        Some(before)
                    } else {
                        None
                    }
                });
                // A line with a sibling is decided by the reading, not here.
                if siblings[j].is_none() {
                    continued[j] = continuation.clone();
                }
                // A sibling is a base only where the line is written there (it is a
                // candidate, which holds where a reading writes the line so).
                continuation
                    .or_else(|| siblings[j].filter(|sibling| mapped(j).as_deref() == Some(*sibling)).map(str::to_owned))
            }
            Role::Moved => None,
        };
        previous = Some(j);
    }
    continued
}

/// The new lines no reading can write, in a document whose tabs are followed by
/// aligning spaces on some lines when the quote converts spaces to tabs: a line that
/// stands for a quote line mapped only line for line, moved to another indentation
/// (its aligning spaces could be kept or not), and an added line deeper than the
/// line before it in the new text, unless it is one level deeper and the document
/// follows that line's ending only with a level (see
/// [`DocumentOpeners::only_levels_after`]): it may be a continuation, aligned with
/// spaces, as well as a statement.
#[allow(clippy::too_many_arguments)]
fn unplaceable_lines(
    quote: &[&str],
    span: &[&str],
    new: &[&str],
    roles: &[Role],
    shift: &IndentShift,
    counts: &dyn Fn(usize, &str) -> bool,
    aligns: bool,
    openers: Option<&DocumentOpeners<'_>>,
) -> Vec<bool> {
    let mut previous: Option<usize> = None;
    let mut unplaceable = vec![false; new.len()];
    for (j, line) in new.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        unplaceable[j] = match roles[j] {
            Role::Paired(i) | Role::Context(i) => {
                counts(i, quote[i])
                    && shift.aligns(leading_blanks(quote[i]), leading_blanks(span[i]))
                    && leading_blanks(line) != leading_blanks(quote[i])
            }
            Role::Inserted => previous.is_some_and(|k| {
                let (indent, before) = (leading_blanks(line), leading_blanks(new[k]));
                let one_level = shift.tab_width().is_some_and(|(_, width)| indent.len() == before.len() + width);
                aligns
                    && indent.len() > before.len()
                    && indent.starts_with(before)
                    && !(one_level && openers.is_some_and(|openers| openers.only_levels_after(new[k])))
            }),
            Role::Moved => false,
        };
        previous = Some(j);
    }
    unplaceable
}

/// How each reading writes the new lines' indentation, before their neighbours are
/// weighed.
struct NewLines<'n> {
    new: &'n [&'n str],
    shift: &'n IndentShift,
    /// The shift a new text kept as written takes (see [`IndentShift::units_only`]).
    kept: IndentShift,
    depths: ConvertedDepths<'n>,
    /// See [`in_place_indents`].
    in_place: Vec<Option<&'n str>>,
    /// New lines no reading can write (see [`decide_reading`]).
    unplaceable: Vec<bool>,
}

impl NewLines<'_> {
    /// The indentation each new line is written at whatever the reading (see
    /// [`Decision::indents`]): in place, or as one of the `continued` lines.
    fn indents(&self, continued: Vec<Option<String>>) -> Vec<Option<String>> {
        let continued = continued.into_iter().chain(std::iter::repeat(None));
        self.in_place.iter().zip(continued).map(|(kept, continued)| kept.map(str::to_owned).or(continued)).collect()
    }

    /// How `reading` writes new line `j`'s indentation, if it can.
    fn mapped(&self, reading: Reading, j: usize) -> Option<String> {
        if self.unplaceable[j] {
            return None;
        }
        if let Some(indent) = self.in_place[j] {
            return Some(indent.to_owned());
        }
        if reading == Reading::Kept { &self.kept } else { self.shift }.apply_exactly(leading_blanks(self.new[j]))
    }

    /// The new lines among `paired` that land on their quote line's indentation under
    /// neither reading: lines the edit itself moves (a block wrapped in a new one), or
    /// lines paired with like ones elsewhere (see [`Role::Moved`]).
    fn moved(&self, paired: &[(usize, usize)], span: &[&str]) -> Vec<usize> {
        paired
            .iter()
            .filter(|&&(i, j)| {
                [Reading::Kept, Reading::Reindented]
                    .iter()
                    .all(|&reading| self.write(reading, j, false).as_deref() != Some(leading_blanks(span[i])))
            })
            .map(|&(_, j)| j)
            .collect()
    }

    /// [`Self::mapped`], where the document's depths allow it (`added`: no line of the
    /// quote stands for it).
    fn write(&self, reading: Reading, j: usize, added: bool) -> Option<String> {
        let written = self.mapped(reading, j)?;
        if self.in_place[j].is_some() {
            return Some(written);
        }
        self.depths.allows(leading_blanks(self.new[j]), &written, added).then_some(written)
    }
}

/// Among `paired` lines, those that are evidence of a reading. A line inside a block
/// that an inserted line opens may have been moved into it by the edit, by as much
/// as the quote's shift, and then looks like a copy of the quote: no evidence. A
/// line of only brackets and punctuation (`}`, `});`) is paired with any such line
/// once indentation is ignored, often one of another block: evidence only where no
/// line of words is. A line of code rewritten as a comment (code commented out, its
/// `//` at the level of the block around it) or back is written at another level by
/// the edit itself: no evidence.
fn evidence_of(paired: &[(usize, usize)], quote: &[&str], new: &[&str], roles: &[Role]) -> Vec<(usize, usize)> {
    // The line each new line is nested in: the nearest line before it whose
    // indentation is a shorter prefix of its own (a stack of them, in one pass).
    let mut in_new_block = vec![false; new.len()];
    let mut enclosing: Vec<usize> = Vec::new();
    for (j, line) in new.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let indent = leading_blanks(line);
        while let Some(&k) = enclosing.last() {
            let outer = leading_blanks(new[k]);
            if outer.len() < indent.len() && indent.starts_with(outer) {
                break;
            }
            enclosing.pop();
        }
        // Nested in a line that is itself inside the new block (a continuation's
        // aligned line, an inner block) is inside it too.
        in_new_block[j] = enclosing.last().is_some_and(|&k| {
            in_new_block[k] || (roles[k] == Role::Inserted && new[k].trim_end().ends_with(['{', '(', '[', ':']))
        });
        enclosing.push(j);
    }
    let candidates: Vec<(usize, usize)> = paired
        .iter()
        .copied()
        .filter(|&(i, j)| !in_new_block[j] && is_comment(quote[i]) == is_comment(new[j]))
        .collect();
    let worded = |line: &str| line.chars().any(char::is_alphanumeric);
    if candidates.iter().any(|&(_, j)| worded(new[j])) {
        candidates.into_iter().filter(|&(_, j)| worded(new[j])).collect()
    } else {
        candidates
    }
}

/// The document's lines around the new lines in the result: lines taken from the
/// quote are the document's own.
struct Neighbours<'n> {
    new: &'n [&'n str],
    span: &'n [&'n str],
    roles: &'n [Role],
    /// Whether the quote's first line starts a line of the document (see
    /// [`decide_reading`]).
    anchored: bool,
    surroundings: Surroundings<'n>,
}

impl<'n> Neighbours<'n> {
    /// Where the document's line before (`step` -1) or after (1) new line `j` is: a
    /// line of the match (`Some((i, k))`: quote line `i`, new line `k`), or the line
    /// around the match (`None`); nothing where a new line comes first, or no line is
    /// there.
    fn at(&self, j: usize, step: isize) -> Option<Option<(usize, usize)>> {
        let first_line_at_start = !self.anchored && self.surroundings.at_line_start;
        let mut at = j as isize + step;
        while at >= 0 && (at as usize) < self.new.len() {
            let k = at as usize;
            match self.roles[k] {
                Role::Paired(i) | Role::Context(i) if !self.span[i].chars().all(is_blank) => {
                    // A first line that starts a line is the document's own, shifted or not.
                    return (i > 0 || self.anchored || first_line_at_start).then_some(Some((i, k)));
                }
                Role::Inserted | Role::Moved if !self.new[k].chars().all(is_blank) => return None,
                _ => {}
            }
            at += step;
        }
        let around = if step < 0 { self.surroundings.before } else { self.surroundings.after };
        around.map(|_| None)
    }

    /// The document's line before (`step` -1) or after (1) new line `j` in the result.
    fn line(&self, j: usize, step: isize) -> Option<&'n str> {
        self.line_at(self.at(j, step)?, step)
    }

    /// The line that [`Neighbours::at`] found in direction `step`.
    fn line_at(&self, at: Option<(usize, usize)>, step: isize) -> Option<&'n str> {
        match at {
            Some((i, _)) => Some(self.span[i]),
            None if step < 0 => self.surroundings.before,
            None => self.surroundings.after,
        }
    }

    /// The document's own line after the line before new line `j`, before the edit:
    /// how deep the document goes after that line.
    fn followed(&self, j: usize) -> Option<&'n str> {
        let from = self.at(j, -1)?.map_or(0, |(i, _)| i + 1);
        self.span[from..].iter().find(|line| !line.chars().all(is_blank)).copied().or(self.surroundings.after)
    }
}

/// What [`decide_reading`] weighs, once every new line has its role: how each
/// reading writes a line, and the document's lines around each run of inserted ones.
struct Weighing<'w> {
    new: &'w [&'w str],
    span: &'w [&'w str],
    /// Paired lines `(quote line, new line)` that are no lines the edit moves.
    paired: &'w [(usize, usize)],
    /// The paired and rewritten lines that count as evidence (see [`evidence_of`]).
    evidence: Vec<(usize, usize)>,
    /// New lines the edit moves (see [`Role::Moved`]).
    moved: &'w [usize],
    runs: Vec<Vec<usize>>,
    /// How a reading writes new line `j`'s indentation, if it may.
    written: &'w dyn Fn(Reading, usize) -> Option<String>,
    /// The document's lines around the new lines.
    neighbours: &'w Neighbours<'w>,
    unit: Option<&'w str>,
    openers: Option<&'w DocumentOpeners<'w>>,
    /// A patch hunk, its context lines marked.
    hunk: bool,
}

impl Weighing<'_> {
    /// Paired lines land on their quote line's indentation in the document. A pair
    /// that lands under one reading only is evidence for it; a pair that lands under
    /// neither was set apart as moved. A reading fits the pairs when some pair lands
    /// under it, none lands under the other reading alone, and every one is written.
    fn paired_fit(&self, reading: Reading) -> bool {
        let other = reading.other();
        self.paired.iter().all(|&(_, j)| (self.written)(reading, j).is_some())
            && self.evidence.iter().all(|&(i, j)| self.lands(reading, i, j) || !self.lands(other, i, j))
            && self.evidence.iter().any(|&(i, j)| self.lands(reading, i, j))
    }

    /// Whether `reading` writes new line `j` at quote line `i`'s indentation in the
    /// document.
    fn lands(&self, reading: Reading, i: usize, j: usize) -> bool {
        (self.written)(reading, j).as_deref() == Some(leading_blanks(self.span[i]))
    }

    /// Each run, by its shallowest line, is well-formed beside the lines around it
    /// (see [`run_fits`]); `strict` leaves out the block that closes, and the lines
    /// that rewrite a quote line and land on its indentation (placed by that).
    fn runs_fit(&self, reading: Reading, strict: bool) -> bool {
        let placed = |j: usize| strict && self.evidence.iter().any(|&(i, k)| k == j && self.lands(reading, i, j));
        self.runs.iter().all(|run| {
            let weighed = run.iter().filter(|&&j| !placed(j));
            let Some(indents) = weighed.map(|&j| (self.written)(reading, j)).collect::<Option<Vec<String>>>() else {
                return false;
            };
            let Some(shallowest) = indents.iter().min_by_key(|indent| indent.chars().count()) else {
                // Every line of it is placed.
                return true;
            };
            // With no line before it, it tells neither reading apart.
            let Some(before) = self.neighbours.line(run[0], -1) else { return true };
            let level = leading_blanks(before);
            let around = Around {
                before,
                opens: may_open_in(before, self.openers),
                opened: self
                    .neighbours
                    .followed(run[0])
                    .map(leading_blanks)
                    .filter(|depth| *depth != level && !level.starts_with(depth)),
                // Only a document in tabs tells a continuation (spaces after the tabs)
                // from a level; in spaces, what follows an ending is as likely a block.
                continued: self
                    .openers
                    .filter(|_| self.unit == Some("\t"))
                    .and_then(|openers| openers.continued_after(before)),
                after: self.neighbours.line(run[run.len() - 1], 1),
            };
            run_fits(shallowest, &around, self.unit, strict)
        })
    }

    /// Paired lines (and rewritten ones) decide where there are any, and the runs
    /// must agree.
    fn fits(&self, reading: Reading) -> bool {
        ((self.paired.is_empty() && self.evidence.is_empty()) || self.paired_fit(reading))
            && self.runs_fit(reading, false)
            && self.moved.iter().all(|&j| (self.written)(reading, j).is_some())
    }

    /// In a hunk, a `-` line equal to a `+` line once shifted may be the commit
    /// re-indenting it: the pairs' reading stands only if its runs sit as plainly as
    /// the other's.
    fn contradicted(&self, reading: Reading) -> bool {
        self.hunk && !self.runs_fit(reading, true) && self.runs_fit(reading.other(), true)
    }

    /// A reading that writes code no one writes may stop a reading from being taken,
    /// The line before (`step` -1) or after (1) new line `j` in the result under
    /// `reading`: the document's line, or a pair's line where the reading writes it
    /// (a pair that is no evidence may land elsewhere than its quote line).
    fn around(&self, reading: Reading, j: usize, step: isize) -> Option<Cow<'_, str>> {
        let at = self.neighbours.at(j, step)?;
        let line = self.neighbours.line_at(at, step)?;
        Some(match at {
            Some((_, k)) if matches!(self.neighbours.roles[k], Role::Paired(_)) => match (self.written)(reading, k) {
                Some(indent) if indent != leading_blanks(line) => {
                    Cow::Owned(format!("{indent}{}", line.trim_start_matches([' ', '\t'])))
                }
                _ => Cow::Borrowed(line),
            },
            _ => Cow::Borrowed(line),
        })
    }

    /// never make one taken: a run that opens flat, closes deeper, or leaves a bracket
    /// open.
    fn malformed(&self, reading: Reading) -> bool {
        self.runs.iter().any(|run| {
            let (first, last) = (self.new[run[0]], self.new[run[run.len() - 1]]);
            let before = self.around(reading, run[0], -1);
            let after = self.around(reading, run[run.len() - 1], 1);
            let opens_flat = before
                .as_deref()
                .zip((self.written)(reading, run[0]))
                .is_some_and(|(before, indent)| opens_flat(before, first, &indent));
            let closes_deeper = after
                .as_deref()
                .zip((self.written)(reading, run[run.len() - 1]))
                .is_some_and(|(after, indent)| closes_deeper(last, &indent, after));
            // The block the run opens is opened by its shallowest line.
            let shallowest = run.iter().filter_map(|&j| (self.written)(reading, j)).min_by_key(String::len);
            let left_open = after
                .as_deref()
                .zip(shallowest)
                .is_some_and(|(after, indent)| leaves_open(run.iter().map(|&j| self.new[j]), &indent, after));
            opens_flat || closes_deeper || left_open
        })
    }

    /// Whether the lines that decide for `reading` (evidence that lands under it
    /// alone) are all at the edge of a block, where the other reading would have the
    /// edit move each across that edge by as much as the quote is shifted (see
    /// [`Weighing::across_an_edge`]), and that reading is otherwise as well formed.
    /// Such a hunk reads the same whether it was shifted as a whole and rewrites its
    /// lines in place, or shifted in its quote only and moves them: the lines of one
    /// edit cannot tell which.
    fn moves_at_edges(&self, reading: Reading) -> bool {
        let other = reading.other();
        let deciding: Vec<(usize, usize)> = self
            .evidence
            .iter()
            .copied()
            .filter(|&(i, j)| self.lands(reading, i, j) && !self.lands(other, i, j))
            .collect();
        !deciding.is_empty()
            && deciding.iter().all(|&(i, j)| self.across_an_edge(other, i, j))
            && self.paired.iter().all(|&(_, j)| (self.written)(other, j).is_some())
            && self.runs_fit(other, false)
            && !self.malformed(other)
    }

    /// Whether `other` writes new line `j` across the edge of a block from quote line
    /// `i`'s place: one level out of the block it ends, to the depth of the line that
    /// opened that block (no deeper than the document's line after it), or one level
    /// into the block that the document's line before it ends, to that block's depth
    /// (its opener at quote line `i`'s depth). The line after a block left, or the last
    /// line of a block joined, is no line that closes or continues it (`}`, `else:`),
    /// nor is the line moved (nor does it close a bracket), which would make the move
    /// malformed; and a line of the block stands between its opener and the line moved
    /// (with the new lines right after it, a line taken out).
    fn across_an_edge(&self, other: Reading, i: usize, j: usize) -> bool {
        let Some(moved) = (self.written)(other, j) else { return false };
        let own = leading_blanks(self.span[i]);
        if continues_a_block(self.new[j]) || bracket_balance(self.new[j]) < 0 {
            false
        } else if moved.len() > own.len() && moved.starts_with(own) {
            self.neighbours
                .line(j, -1)
                .is_some_and(|before| leading_blanks(before).starts_with(&moved) && !continues_a_block(before))
                && self.block_opened(i, &moved, own)
        } else if own.len() > moved.len() && own.starts_with(moved.as_str()) {
            // New lines right after it go with it; with no line after them (the end of
            // the document), the block ends with them.
            let roles = self.neighbours.roles;
            let last = (j + 1..self.new.len())
                .take_while(|&k| matches!(roles[k], Role::Inserted | Role::Moved) || self.new[k].chars().all(is_blank))
                .last()
                .unwrap_or(j);
            self.neighbours
                .line(last, 1)
                .is_none_or(|after| moved.starts_with(leading_blanks(after)) && !continues_a_block(after))
                && self.block_opened(i, own, &moved)
        } else {
            false
        }
    }

    /// Whether the block of lines at `body` depth that quote line `i` sits in (or, one
    /// level deeper, would join) was opened by a line at `opener` depth that opens a
    /// block, with a line of the block between that line and quote line `i`.
    fn block_opened(&self, i: usize, body: &str, opener: &str) -> bool {
        self.opener_before(i, body).is_some_and(|(at, line)| {
            leading_blanks(line) == opener && self.may_open_a_block(line) && at + 1 < i as isize
        })
    }

    /// Whether `line` opens a block of statements (see [`opens_a_block`]) or may be the
    /// first line of one that does on a later line (`if (a &&` then `    b) {`). A
    /// string continued with `\` opens nothing.
    fn may_open_a_block(&self, line: &str) -> bool {
        opens_a_block(line) || (may_open_in(line, self.openers) && !code_of(line).trim_end().ends_with('\\'))
    }

    /// The nearest line before quote line `i` shallower than `depth`, among the quote's
    /// lines, the document's line before them and the lines that open the blocks they
    /// are in, with its index (-1 for the line before them, -2 for those).
    fn opener_before(&self, i: usize, depth: &str) -> Option<(isize, &str)> {
        let shallower = |line: &str| {
            let indent = leading_blanks(line);
            !line.chars().all(is_blank) && indent.len() < depth.len() && depth.starts_with(indent)
        };
        let surroundings = &self.neighbours.surroundings;
        (0..i)
            .rev()
            .map(|k| (k as isize, self.span[k]))
            .chain(surroundings.before.map(|line| (-1, line)))
            .chain(
                surroundings
                    .enclosing
                    .map(EnclosingLines::get)
                    .unwrap_or_default()
                    .iter()
                    .map(|line| (-2, line.as_str())),
            )
            .find(|&(_, line)| shallower(line))
    }

    /// Exactly one reading that fits and is taken; both writing every line alike
    /// (`same`) leave nothing to decide; anything else is undecided.
    fn verdict(&self, same: bool) -> Result<Option<Reading>, UndecidedIndentation> {
        let taken =
            |reading: Reading| !self.malformed(reading) && !self.contradicted(reading) && !self.moves_at_edges(reading);
        match (self.fits(Reading::Kept), self.fits(Reading::Reindented)) {
            (true, false) if taken(Reading::Kept) => Ok(Some(Reading::Kept)),
            (false, true) if taken(Reading::Reindented) => Ok(Some(Reading::Reindented)),
            (true, true) if same => Ok(None),
            _ => Err(UndecidedIndentation),
        }
    }
}

/// For each added line, the indentation of the document's line it is a sibling of,
/// if any: the nearest line before it at the same indentation in the new text, with
/// only deeper lines between them (a block it opened, or a line it continued, now
/// closed), or right before it and continuing nothing (see [`may_open`]); or, with no
/// line before it in the new text, the document's line before the match, continuing
/// nothing. That line is the document's own line or an added line with a sibling
/// itself. A statement after a statement sits where that statement does, however many
/// ways the document writes that depth elsewhere (a continuation line, which would be
/// the other way, follows a line that continues).
fn sibling_indents<'s>(
    new: &[&str],
    roles: &[Role],
    span: &[&'s str],
    before: Option<&'s str>,
    openers: Option<&DocumentOpeners<'_>>,
    shift: &IndentShift,
) -> Vec<Option<&'s str>> {
    let mut siblings: Vec<Option<&'s str>> = vec![None; new.len()];
    // Non-blank lines so far, each at most once per depth still open: the nearest line
    // at each indentation that no shallower line has closed since (one pass, a stack).
    let mut open: Vec<usize> = Vec::new();
    for j in 0..new.len() {
        if new[j].trim().is_empty() {
            continue;
        }
        let indent = leading_blanks(new[j]);
        let right_before = open.last().copied();
        while open.last().is_some_and(|&k| {
            let outer = leading_blanks(new[k]);
            outer.len() > indent.len() && outer.starts_with(indent)
        }) {
            open.pop();
        }
        let same = open.last().copied().filter(|&k| leading_blanks(new[k]) == indent);
        if roles[j] == Role::Inserted {
            siblings[j] = match (right_before, same) {
                (Some(_), Some(k)) if Some(k) != right_before || !may_open_in(new[k], openers) => match roles[k] {
                    // A line aligned with spaces after its tabs is a continuation in
                    // the document: what follows it at its depth is no sibling.
                    Role::Paired(i) | Role::Context(i) => {
                        Some(leading_blanks(span[i])).filter(|indent| !shift.aligned_in_document(indent))
                    }
                    Role::Inserted => siblings[k],
                    Role::Moved => None,
                },
                (Some(_), _) => None,
                (None, _) => before
                    .filter(|line| !may_open_in(line, openers))
                    .map(leading_blanks)
                    .filter(|indent| !shift.aligned_in_document(indent)),
            };
        }
        if same.is_some() {
            open.pop();
        }
        open.push(j);
    }
    siblings
}

/// For each added line, the level one tab under the line before it, where that line's
/// ending is one the document follows only with such a level (see
/// [`DocumentOpeners::only_levels_after`]): `goto error;` after `} else`, the body
/// after an `if (...)` whose condition was continued with aligning spaces. The line
/// before is the document's own line, or an added line whose indentation is known
/// (a sibling, or such a level itself).
fn levels_opened(
    new: &[&str],
    roles: &[Role],
    span: &[&str],
    siblings: &[Option<&str>],
    openers: Option<&DocumentOpeners<'_>>,
) -> Vec<Option<String>> {
    let mut levels: Vec<Option<String>> = vec![None; new.len()];
    let Some(openers) = openers else { return levels };
    let mut previous: Option<usize> = None;
    for j in 0..new.len() {
        if new[j].trim().is_empty() {
            continue;
        }
        if let (Role::Inserted, Some(k)) = (roles[j], previous) {
            let before = match roles[k] {
                Role::Paired(i) | Role::Context(i) => Some(leading_blanks(span[i]).to_owned()),
                Role::Inserted => siblings[k].map(str::to_owned).or_else(|| levels[k].clone()),
                Role::Moved => None,
            };
            if let Some(before) = before
                && openers.only_levels_after(new[k])
            {
                let tabs = &before[..before.len() - before.trim_start_matches('\t').len()];
                levels[j] = Some(format!("{tabs}\t"));
            }
        }
        previous = Some(j);
    }
    levels
}

/// The document's lines around a run of new lines in the result.
struct Around<'a> {
    before: &'a str,
    /// Whether `before` may open a block (see [`may_open_in`]).
    opens: bool,
    /// The indentation of the document's line after `before`, before the edit, where
    /// it is neither the same nor shallower: the depth the document writes under it
    /// (two levels for Python's hanging indents; two tabs under a condition continued
    /// with spaces, `\t    b) {`), whatever its unit elsewhere.
    opened: Option<&'a str>,
    /// The spaces the document always continues a line ending as `before` does with,
    /// in a document in tabs (see [`DocumentOpeners::continued_after`]).
    continued: Option<&'a str>,
    after: Option<&'a str>,
}

/// Whether a run of new lines whose shallowest line is written at `shallowest` is
/// well-formed between the line before it and the line after it: at the level of the
/// line before (unless that line opens a block, which wants a deeper one), one `unit`
/// deeper than a line before that may open a block (or as deep as the document's own
/// line after it, where that is deeper: see [`Around::opened`]), that line's
/// indentation and the spaces a document in tabs always continues its ending with (a
/// continuation), at the
/// level of the line after (a sibling of it), or, unless `strict`, shallower than the
/// line before (a block closes).
fn run_fits(shallowest: &str, around: &Around<'_>, unit: Option<&str>, strict: bool) -> bool {
    let level = leading_blanks(around.before);
    let closes = level.starts_with(shallowest) && level != shallowest;
    let opens = around.before.trim_end().ends_with(['{', '(', '[', ':']);
    let deeper_by = |step: &str| shallowest.strip_prefix(level) == Some(step);
    (level == shallowest && !(strict && opens))
        || (!strict && closes)
        || (around.opens && around.opened.map_or(unit.is_some_and(deeper_by), |depth| depth == shallowest))
        || around.continued.is_some_and(deeper_by)
        || around.after.is_some_and(|after| leading_blanks(after) == shallowest)
}

/// How far back [`EnclosingLines`] reads: a match deeper in a block longer than
/// this is taken as having no line that opens it.
const ENCLOSING_REACH: usize = 4000;

/// The document's non-blank lines before line `first` that are each shallower than
/// every non-blank line after them up to `first`, nearest first: the lines that open
/// the blocks line `first` is in, up to one at the margin. Read once, and only when
/// a reading asks where a block opens beyond the lines it sees (most never do).
#[derive(Debug)]
pub struct EnclosingLines<'a> {
    text: &'a Rope,
    first: usize,
    lines: OnceCell<Vec<String>>,
}

impl<'a> EnclosingLines<'a> {
    pub fn new(text: &'a Rope, first: usize) -> Self {
        Self { text, first, lines: OnceCell::new() }
    }

    fn get(&self) -> &[String] {
        self.lines.get_or_init(|| {
            let mut lines = Vec::new();
            let mut shallowest: Option<usize> = None;
            for index in (self.first.saturating_sub(ENCLOSING_REACH)..self.first).rev() {
                let line = self.text.line(index);
                let depth = line.chars().take_while(|c| *c == ' ' || *c == '\t').count();
                if line.chars().skip(depth).all(|c| c == '\n' || c == '\r') {
                    continue;
                }
                if shallowest.is_none_or(|shallowest| depth < shallowest) {
                    shallowest = Some(depth);
                    lines.push(line.chars().filter(|c| *c != '\n' && *c != '\r').collect());
                    if depth == 0 {
                        break;
                    }
                }
            }
            lines
        })
    }
}

/// Whether the code of `line` ends by opening a block of statements (`{`, `:`, `do`,
/// `then`, `else`, `begin`), not a continuation (`(`, `,`, `=`, `\`).
fn opens_a_block(line: &str) -> bool {
    let code = code_of(line).trim_end();
    !is_comment(line)
        && (code.ends_with('{')
            || (code.ends_with(':') && !code.ends_with("::"))
            || ["do", "then", "else", "begin"]
                .iter()
                .any(|word| code.strip_suffix(word).is_some_and(|rest| rest.is_empty() || rest.ends_with([' ', '\t']))))
}

/// Whether `line` closes a block or goes on with it (`}`, `end`, `else:`,
/// `except E:`): no statement can stand right before it one level shallower than the
/// block, nor right after it one level deeper.
fn continues_a_block(line: &str) -> bool {
    const WORDS: [&str; 14] = [
        "end", "fi", "done", "esac", "else", "elif", "elsif", "except", "finally", "catch", "rescue", "ensure", "case",
        "default",
    ];
    let code = line.trim_start_matches([' ', '\t']);
    let word: &str = code.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("");
    code.starts_with(['}', ')', ']']) || code.starts_with("</") || WORDS.contains(&word)
}

/// The inserted lines (indexes of new lines, ascending) in runs of consecutive
/// ones: lines between them that are neither inserted nor counted (blank) do not
/// break a run.
fn runs_of(inserted: &[usize], roles: &[Role]) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for &j in inserted {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|&last| (last + 1..j).all(|k| roles[k] == Role::Inserted)) => {
                run.push(j)
            }
            _ => runs.push(vec![j]),
        }
    }
    runs
}

/// A run whose `first` line, written at `indent`, is no deeper than the line
/// `before` it, which opens a bracket (and `first` does not close one).
fn opens_flat(before: &str, first: &str, indent: &str) -> bool {
    before.trim_end().ends_with(['{', '(', '['])
        && leading_blanks(before).starts_with(indent)
        && !first.trim_start_matches([' ', '\t']).starts_with(['}', ')', ']'])
}

/// A run whose lines open more brackets than they close, its shallowest line written
/// at `indent`, followed by a line `after` that is no deeper and closes nothing:
/// the block the run opens would hold a line at the level of its opener.
fn leaves_open<'l>(run: impl Iterator<Item = &'l str>, indent: &str, after: &str) -> bool {
    let depth: isize = run.map(bracket_balance).sum();
    let deeper = leading_blanks(after).len() > indent.len() && leading_blanks(after).starts_with(indent);
    depth > 0 && !deeper && !after.trim_start_matches([' ', '\t']).starts_with(['}', ')', ']'])
}

/// How many more brackets a line opens than it closes, outside its string literals
/// in double quotes or backticks and its character literals (`"{{"`, `'('`). A line
/// that ends by closing one (`)`, `]`, `}`, or a statement's `;`) opens nothing it
/// leaves open: a bracket it leaves unbalanced before that (`r = get(url('x')`) is a
/// typo or a literal this reading missed, no block.
fn bracket_balance(line: &str) -> isize {
    let code = code_of(line);
    let mut balance = 0isize;
    let mut chars = code.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                // A literal runs to the same quote, unescaped, on this line; a quote
                // without one is a character. A single quote opens only a character
                // literal (`'('`, `'\\''`): it is also an apostrophe, a Rust lifetime,
                // or a string in some languages, whose brackets are counted.
                let rest = &code[at + 1..];
                let mut escaped = false;
                let close = rest
                    .char_indices()
                    .find(|&(_, r)| {
                        let closes = r == c && !escaped;
                        escaped = r == '\\' && !escaped;
                        closes
                    })
                    .filter(|&(offset, _)| c != '\'' || offset <= 2);
                if let Some((offset, _)) = close {
                    while chars.peek().is_some_and(|&(next, _)| next <= at + 1 + offset) {
                        chars.next();
                    }
                }
            }
            '{' | '(' | '[' => balance += 1,
            '}' | ')' | ']' => balance -= 1,
            _ => {}
        }
    }
    if balance > 0 && code.trim_end().ends_with([')', ']', '}', ';']) { 0 } else { balance }
}

/// A run whose `last` line, written at `indent`, only closes brackets and is
/// followed by a deeper line.
fn closes_deeper(last: &str, indent: &str, after: &str) -> bool {
    let body = last.trim();
    !body.is_empty()
        && body.starts_with(['}', ')', ']'])
        && body.chars().all(|c| matches!(c, '}' | ')' | ']' | ';' | ','))
        && leading_blanks(after).len() > indent.len()
        && leading_blanks(after).starts_with(indent)
}

/// What a conversion of tabs and spaces knows about depths: the quote's own
/// indentations map line for line; any other depth is converted by the tab's width
/// only when that width was read from two levels, and only where the document does
/// not write the same depth another way (two tabs, or a tab and four spaces).
struct ConvertedDepths<'a> {
    /// The quote's kind of indentation and the tab's width; `None` when the shift
    /// converts nothing.
    conversion: Option<(char, usize)>,
    covered: BTreeSet<&'a str>,
    /// The width was read from one level only: no other depth is known.
    one_level: bool,
    file_indents: &'a [String],
}

impl<'a> ConvertedDepths<'a> {
    fn of(
        shift: &IndentShift,
        quote: &[&'a str],
        span: &[&'a str],
        counts: &dyn Fn(usize, &str) -> bool,
        file_indents: &'a [String],
    ) -> Self {
        let conversion = shift.tab_width();
        let counted = || quote.iter().zip(span).enumerate().filter(|(i, (line, _))| counts(*i, line));
        // A quote indentation covers its depth where it stands for one indentation of
        // the document (spaces may stand for two tabs on one line and for a tab and
        // aligning spaces on another).
        let mut ways: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (_, (quoted, found)) in counted() {
            ways.entry(leading_blanks(quoted)).or_default().insert(leading_blanks(found));
        }
        let covered = ways.into_iter().filter(|(_, found)| found.len() == 1).map(|(quoted, _)| quoted).collect();
        let spaces: BTreeSet<usize> = counted()
            .filter(|(_, (quoted, _))| {
                conversion.is_none_or(|(from, _)| leading_blanks(quoted).chars().all(|c| c == from))
            })
            .map(|(_, (quoted, found))| {
                let side = if conversion.is_some_and(|(from, _)| from == ' ') { quoted } else { found };
                leading_blanks(side).len()
            })
            .collect();
        Self { conversion, covered, one_level: spaces.len() < 2, file_indents }
    }

    /// Whether a new line indented `indent` may be written with `written`. An
    /// `added` line (one no line of the quote stands for) is written only where the
    /// document writes its depth one way, even at a depth the quote covers: the
    /// quote's line at that depth is one of the ways, not the one an added line takes
    /// (a continuation in a tab and four spaces beside a block in two tabs).
    fn allows(&self, indent: &str, written: &str, added: bool) -> bool {
        let Some((from, width)) = self.conversion else { return true };
        let in_quote_kind = in_kind(indent, from);
        let covered = self.covered.contains(indent);
        if !in_quote_kind || (covered && !added) {
            return true;
        }
        if self.one_level && !covered {
            return false;
        }
        let column = |indent: &str| indent.chars().map(|c| if c == '\t' { width } else { 1 }).sum::<usize>();
        let depth = column(written);
        self.file_indents.iter().all(|other| other == written || column(other) != depth)
    }
}

/// Every distinct indentation of the lines of `text` (the empty one left out).
pub fn indentations(text: &Rope) -> Vec<String> {
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        let indent: String = line.chars().take_while(|c| is_blank(*c)).collect();
        if !indent.is_empty() && line.chars().nth(indent.chars().count()).is_some_and(|c| c != '\n' && c != '\r') {
            seen.insert(indent);
        }
    }
    seen.into_iter().collect()
}

/// Whether a line may be followed by a deeper one: it ends in a bracket, a colon,
/// an operator or a comma (a block or a continuation), or in a word that opens a
/// block in some language. Lines that end a statement (`x := 1`, `return y;`) may
/// not, nor comments (a sentence ending in a full stop): new lines one level deeper
/// than such a line are not well-formed.
fn may_open(line: &str, openers: &[char]) -> bool {
    if is_comment(line) {
        return false;
    }
    let opens_here = |code: &str| {
        ends_open(code) && (openers.is_empty() || code.trim_end().chars().last().is_some_and(|c| openers.contains(&c)))
    };
    // A comment after the code (`if x { // why`) may hide how the code ends: either
    // ending counts.
    opens_here(code_of(line)) || opens_here(line)
}

/// The document's [`openers`] and [`followers`], each read once, and only when a
/// line's ending is in question.
#[derive(Debug)]
pub struct DocumentOpeners<'a> {
    text: &'a Rope,
    read: OnceCell<Vec<char>>,
    followers: OnceCell<Followers>,
}

impl<'a> DocumentOpeners<'a> {
    pub fn of(text: &'a Rope) -> Self {
        Self { text, read: OnceCell::new(), followers: OnceCell::new() }
    }

    fn get(&self) -> &[char] {
        self.read.get_or_init(|| openers(self.text))
    }

    /// Whether every deeper line after a line ending as `line` does is, in this
    /// document, one tab deeper than its tabs: a statement, never a continuation.
    fn only_levels_after(&self, line: &str) -> bool {
        ending_of(line).is_some_and(|ending| self.followers().levels.contains(ending))
    }

    /// The spaces this document always continues a line ending as `line` does with,
    /// after that line's own indentation, if it only ever does so.
    fn continued_after(&self, line: &str) -> Option<&str> {
        ending_of(line).and_then(|ending| self.followers().continued.get(ending)).map(String::as_str)
    }

    fn followers(&self) -> &Followers {
        self.followers.get_or_init(|| followers(self.text))
    }
}

/// The last word of a line's code (`else`, `do`), or its last character (`{`, `)`,
/// `&`).
fn ending_of(line: &str) -> Option<&str> {
    let code = code_of(line).trim_end();
    let last = code.chars().last()?;
    if !(last.is_alphanumeric() || last == '_') {
        return Some(&code[code.len() - last.len_utf8()..]);
    }
    let word = code.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
    Some(&code[word.len()..])
}

/// How a document follows each ending (see [`ending_of`]) of its lines with a deeper
/// line: how it tells a statement from a continuation.
#[derive(Debug, Default)]
struct Followers {
    /// Only ever one tab deeper, in tabs alone (`} else`, an `if (...)` continued or
    /// not, `{`), never aligned with spaces.
    levels: BTreeSet<String>,
    /// Only ever the line's own indentation and the same spaces (`&&` and `,` in C in
    /// tabs: a tab and four spaces after a line at one tab).
    continued: BTreeMap<String, String>,
}

fn followers(text: &Rope) -> Followers {
    let tabs_of = |indent: &str| indent.len() - indent.trim_start_matches('\t').len();
    let (mut levels, mut others) = (BTreeSet::new(), BTreeSet::new());
    let mut suffixes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut previous: Option<(String, String)> = None;
    for_each_code_line(text, |content| {
        let indent = leading_blanks(content);
        if let Some((before, ending)) = &previous {
            let tabs = tabs_of(before);
            let deeper = indent.len() > before.len() && indent.starts_with(before.as_str());
            if indent.bytes().all(|b| b == b'\t')
                && indent.len() == tabs + 1
                && before[..tabs].bytes().all(|b| b == b'\t')
            {
                levels.insert(ending.clone());
            } else if deeper && indent[before.len()..].bytes().all(|b| b == b' ') {
                suffixes.entry(ending.clone()).or_default().insert(indent[before.len()..].to_owned());
            } else if deeper
                || (tabs_of(indent) == tabs && indent.len() > before.len() && indent.starts_with(&before[..tabs]))
            {
                others.insert(ending.clone());
            }
        }
        previous = ending_of(content).map(|ending| (indent.to_owned(), ending.to_owned()));
    });
    let continued = suffixes
        .iter()
        .filter(|(ending, spaces)| spaces.len() == 1 && !levels.contains(*ending) && !others.contains(*ending))
        .filter_map(|(ending, spaces)| Some((ending.clone(), spaces.first()?.clone())))
        .collect();
    let levels =
        levels.into_iter().filter(|ending| !others.contains(ending) && !suffixes.contains_key(ending)).collect();
    Followers { levels, continued }
}

/// [`may_open`] in a document whose openers are read only if the line ends open at
/// all (most lines do not, and reading them scans the document).
fn may_open_in(line: &str, openers: Option<&DocumentOpeners<'_>>) -> bool {
    if is_comment(line) || !(ends_open(line) || ends_open(code_of(line))) {
        return false;
    }
    may_open(line, openers.map_or(&[], DocumentOpeners::get))
}

/// A line without the comment after its code (` //`, ` #`), if it has code.
fn code_of(line: &str) -> &str {
    [" //", "\t//", " #"]
        .iter()
        .filter_map(|marker| line.find(marker))
        .min()
        .map(|at| &line[..at])
        .filter(|code| !code.trim().is_empty())
        .unwrap_or(line)
}

/// The last characters of the lines of `text` that a deeper line follows (the next
/// line that is not blank is indented by more, the same way), distinct: how this
/// document opens blocks and continues lines.
pub fn openers(text: &Rope) -> Vec<char> {
    let mut seen = BTreeSet::new();
    let (mut previous_indent, mut previous_last) = (String::new(), None);
    for_each_code_line(text, |content| {
        let indent = leading_blanks(content);
        if let Some(last) = previous_last
            && indent.len() > previous_indent.len()
            && indent.starts_with(previous_indent.as_str())
        {
            seen.insert(last);
        }
        previous_indent.clear();
        previous_indent.push_str(indent);
        previous_last = content.chars().last();
    });
    seen.into_iter().collect()
}

/// Calls `f` with each line of `text` that holds code (not blank, not a comment of
/// its own), without its line break and trailing blanks; a line held in one chunk of
/// the rope is read in place.
fn for_each_code_line(text: &Rope, mut f: impl FnMut(&str)) {
    for line in text.lines() {
        let owned;
        let line = match line.as_str() {
            Some(line) => line,
            None => {
                owned = line.to_string();
                owned.as_str()
            }
        };
        let content = line.trim_end();
        if !content.trim_start().is_empty() && !is_comment(content) {
            f(content);
        }
    }
}

/// Whether the code of a line ends open (see [`may_open`]).
fn ends_open(line: &str) -> bool {
    let line = line.trim_end();
    line.ends_with(['{', '(', '[', ':', ',', '\\', '=', '+', '-', '*', '/', '&', '|', '.', '<', '>', '?'])
        || ["do", "then", "else", "begin", "where"]
            .iter()
            .any(|word| line.strip_suffix(word).is_some_and(|rest| rest.is_empty() || rest.ends_with([' ', '\t'])))
}

/// Whether `line` is a comment of its own (`//`, `/*`, ` * `, `# `): a sentence
/// in it that ends in a comma or a full stop continues nothing.
fn is_comment(line: &str) -> bool {
    let body = line.trim_start_matches([' ', '\t']);
    body.starts_with("//")
        || body.starts_with("/*")
        || body == "*"
        || body.starts_with("* ")
        || body.starts_with("*/")
        || ((body == "#" || body.starts_with("# ")) && !body.trim_end().ends_with('\\'))
}

/// The file's own indentation unit, read from the matched lines and their
/// neighbours: the smallest step between two consecutive non-blank lines of code
/// (comments left out) where one indentation extends the other.
fn indent_unit(span: &[&str], surroundings: Surroundings<'_>) -> Option<String> {
    let indents: Vec<&str> = surroundings
        .before
        .into_iter()
        .chain(span.iter().copied().filter(|line| !line.chars().all(is_blank)))
        .chain(surroundings.after)
        // A comment's ` * ` and ` */` are a space off its code's level: no step.
        .filter(|line| !is_comment(line))
        .map(leading_blanks)
        .collect();
    indents
        .windows(2)
        .filter_map(|pair| {
            let (a, b) = if pair[0].len() < pair[1].len() { (pair[0], pair[1]) } else { (pair[1], pair[0]) };
            b.strip_prefix(a).filter(|step| !step.is_empty())
        })
        .min_by_key(|step| step.len())
        .map(str::to_owned)
}

// --- Writing the replacement ------------------------------------------------------------

/// Where a match sits in the document.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    /// The match starts at the start of a line.
    pub at_line_start: bool,
    /// The document's line ending at the match.
    pub line_ending: &'static str,
}

/// Where `range` sits in `text`: whether it starts a line, and the line ending of
/// its first line (of the line before, for a last line without one; `\n` for a
/// document of one line).
pub fn placement(text: &Rope, range: &Range<usize>) -> Placement {
    let at_line_start = range.start == 0 || matches!(text.byte(range.start - 1), b'\n' | b'\r');
    let ending_of = |line: usize| -> Option<&'static str> {
        let slice = text.line(line);
        let len = slice.len_bytes();
        match (len.checked_sub(2).map(|at| slice.byte(at)), len.checked_sub(1).map(|at| slice.byte(at))) {
            (Some(b'\r'), Some(b'\n')) => Some("\r\n"),
            (_, Some(b'\n')) => Some("\n"),
            (_, Some(b'\r')) => Some("\r"),
            _ => None,
        }
    };
    let line = text.byte_to_line(range.start.min(text.len_bytes()));
    let line_ending = ending_of(line).or_else(|| line.checked_sub(1).and_then(ending_of)).unwrap_or("\n");
    Placement { at_line_start, line_ending }
}

/// A replacement written in the document's terms, and how its indentation was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapted {
    pub text: String,
    /// `Some` when the quote was found by ignoring a shift of indentation and the
    /// new text had lines whose indentation had to be read one way or the other.
    pub reading: Option<Reading>,
}

/// The replacement for `found_match` (whose original text is `span`), written in the
/// document's terms: line-number prefixes stripped, lines kept from the quote taken
/// from the document as they are, new lines given the document's line ending,
/// indentation and typography, each only when the match needed that rung. When the
/// quote was found by ignoring a shift of indentation, [`decide_reading`] says
/// whether the new lines are kept as written or moved by the shift; when it cannot
/// tell, the replacement is refused.
pub fn adapt(
    found: &Found,
    found_match: &Match,
    span: &str,
    replacement: &str,
    placement: Placement,
    surroundings: Surroundings<'_>,
) -> Result<Adapted, UndecidedIndentation> {
    let used = &found_match.used;
    let replacement = strip_if_used(replacement, found.prefixes, used);
    if used.iter().all(|step| *step == Normalization::LineNumbers) {
        return Ok(Adapted { text: replacement, reading: None });
    }
    let replacement = without_the_next_lines_blanks(&found.quote, span, replacement, used)?;
    let Decision { reading, indents: in_place } = if used.contains(&Normalization::Indentation) {
        fn contents(text: &str) -> Vec<&str> {
            split_lines(text).into_iter().map(|(content, _)| content).collect()
        }
        decide_reading(
            &contents(&found.quote),
            &contents(span),
            &contents(&replacement),
            &found_match.shift,
            found_match.anchored,
            Surroundings { at_line_start: placement.at_line_start, ..surroundings },
        )?
    } else {
        Decision::default()
    };
    let in_place = |j: usize| in_place.get(j).and_then(Option::as_deref);
    let kept = found_match.shift.units_only();
    let shift = if reading == Some(Reading::Kept) { &kept } else { &found_match.shift };
    let rewriter = Rewriter {
        used,
        shift,
        typography: if used.contains(&Normalization::Typography) {
            Typography::between(&found.quote, span)
        } else {
            Typography::default()
        },
        placement,
    };
    let quote_lines: Vec<String> = split_lines(&found.quote).into_iter().map(|(c, t)| format!("{c}{t}")).collect();
    let span_lines: Vec<String> = split_lines(span).into_iter().map(|(c, t)| format!("{c}{t}")).collect();
    let new_lines: Vec<String> = split_lines(&replacement).into_iter().map(|(c, t)| format!("{c}{t}")).collect();
    // Lines the replacement keeps from the quote are the document's own lines, as
    // long as the two line up one to one (they do unless rung 5 dropped a last line
    // of nothing but indentation).
    let ops = if quote_lines.len() == span_lines.len() {
        let deadline = Instant::now() + DIFF_TIMEOUT;
        aligned(quote_lines.len(), new_lines.len(), surroundings.context, |old, new| {
            capture_diff_slices_deadline(Algorithm::Myers, &quote_lines[old], &new_lines[new], Some(deadline))
        })
    } else {
        vec![DiffOp::Insert { old_index: 0, new_index: 0, new_len: new_lines.len() }]
    };
    // The first line moves with the others only when it shifted like them: a quote
    // whose first line was not part of the shift leaves that line where it is.
    let first_line_shifts = placement.at_line_start && found_match.anchored;
    let mut out = String::with_capacity(replacement.len() + 16);
    for op in ops {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for (i, j) in (old_index..old_index + len).zip(new_index..) {
                    // A line typed as the quote has it is the document's own line only
                    // where the reading writes it at that line's indentation: the
                    // reading, not the text's identity, places every new line.
                    let starts_line = !out.is_empty() || first_line_shifts;
                    let indent = leading_blanks(&new_lines[j]);
                    let lands = !starts_line
                        || surroundings.context.contains(&(i, j))
                        || new_lines[j].trim().is_empty()
                        || rewriter.indent(indent, starts_line) == leading_blanks(&span_lines[i]);
                    let line = if lands { span_lines[i].clone() } else { rewriter.line(&new_lines[j], starts_line) };
                    out.push_str(&indented_at(line, in_place(j)));
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_index, new_len, .. } => {
                for (j, line) in new_lines.iter().enumerate().skip(new_index).take(new_len) {
                    let starts_line = !out.is_empty() || first_line_shifts;
                    out.push_str(&indented_at(rewriter.line(line, starts_line), in_place(j)));
                }
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                for (offset, line) in new_lines[new_index..new_index + new_len].iter().enumerate() {
                    let starts_line = !out.is_empty() || first_line_shifts;
                    // A line rewritten in place keeps the document's characters where it
                    // keeps the quote's (a curly quote, a non-breaking space).
                    let kept = (offset < old_len)
                        .then(|| {
                            rewriter.merge(
                                &quote_lines[old_index + offset],
                                &span_lines[old_index + offset],
                                line,
                                starts_line,
                            )
                        })
                        .flatten();
                    let line = kept.unwrap_or_else(|| rewriter.line(line, starts_line));
                    out.push_str(&indented_at(line, in_place(new_index + offset)));
                }
            }
        }
    }
    Ok(Adapted { text: out, reading })
}

/// A replacement with no quote to line up with (the middle of a replaceRange),
/// rewritten line by line for the normalizations `used` by its quotes; `samples`
/// pairs each quote (`fromStr`, then `toStr`) with the text it matched, to learn
/// the document's typography and, when indentation was ignored, to read the new
/// text's indentation by the rule of [`decide_reading`] (`anchored`: the first
/// quote's first line counts; `later_anchored`: the later quote's first line does,
/// since it starts a line and shifts like the others).
#[allow(clippy::too_many_arguments)]
pub fn adapt_whole(
    replacement: &str,
    prefixes: Option<PrefixStyle>,
    used: &BTreeSet<Normalization>,
    shift: &IndentShift,
    anchored: bool,
    later_anchored: bool,
    samples: &[(&str, &str)],
    placement: Placement,
    surroundings: Surroundings<'_>,
) -> Result<Adapted, UndecidedIndentation> {
    let replacement = strip_if_used(replacement, prefixes, used);
    if used.iter().all(|step| *step == Normalization::LineNumbers) {
        return Ok(Adapted { text: replacement, reading: None });
    }
    let Decision { reading, indents: in_place } = if used.contains(&Normalization::Indentation) {
        // The quotes' lines, in order; a later quote's first line may start mid-line,
        // so only its other lines count, unless it starts a line.
        let mut quote: Vec<&str> = Vec::new();
        let mut matched: Vec<&str> = Vec::new();
        for (index, (quoted, found)) in samples.iter().enumerate() {
            let skip = usize::from(index > 0 && !later_anchored);
            let (quoted, found) = (split_lines(quoted), split_lines(found));
            let len = quoted.len().min(found.len());
            quote.extend(quoted[..len].iter().skip(skip).map(|(content, _)| *content));
            matched.extend(found[..len].iter().skip(skip).map(|(content, _)| *content));
        }
        let new: Vec<&str> = split_lines(&replacement).into_iter().map(|(content, _)| content).collect();
        decide_reading(
            &quote,
            &matched,
            &new,
            shift,
            anchored,
            Surroundings { at_line_start: placement.at_line_start, ..surroundings },
        )?
    } else {
        Decision::default()
    };
    let kept = shift.units_only();
    let shift = if reading == Some(Reading::Kept) { &kept } else { shift };
    let typography = if used.contains(&Normalization::Typography) {
        let quotes: Vec<&str> = samples.iter().map(|(quote, _)| *quote).collect();
        let spans: Vec<&str> = samples.iter().map(|(_, span)| *span).collect();
        Typography::between(&quotes.join("\n"), &spans.join("\n"))
    } else {
        Typography::default()
    };
    let rewriter = Rewriter { used, shift, typography, placement };
    let text = split_lines(&replacement)
        .into_iter()
        .enumerate()
        .map(|(index, (content, terminator))| {
            let line =
                rewriter.line(&format!("{content}{terminator}"), index > 0 || (placement.at_line_start && anchored));
            indented_at(line, in_place.get(index).and_then(Option::as_deref))
        })
        .collect();
    Ok(Adapted { text, reading })
}

/// A new text without the blanks that end it where they are the start of the line
/// after the match, which the document keeps (see the two rules within).
fn without_the_next_lines_blanks(
    quote: &str,
    span: &str,
    mut replacement: String,
    used: &BTreeSet<Normalization>,
) -> Result<String, UndecidedIndentation> {
    // Trailing whitespace ignored, a quote that ends with a line break may have lost a
    // last line of nothing but blanks: the same blanks ending the new text are that
    // line's, which the document keeps after the match, not blanks to add before it.
    let blank_tail = replacement.len() - replacement.trim_end_matches([' ', '\t']).len();
    if used.contains(&Normalization::TrailingWhitespace)
        && quote.ends_with(['\n', '\r'])
        && replacement[..replacement.len() - blank_tail].ends_with(['\n', '\r'])
    {
        replacement.truncate(replacement.len() - blank_tail);
    }
    // Indentation ignored, a quote whose last line is nothing but blanks (the start of
    // the line after its last line break) matched no character of it: the document
    // keeps that line's own indentation after the match. The same blanks ending the new
    // text are that line's; other ones would re-indent a line the quote does not hold.
    let quote_tail = quote.len() - quote.trim_end_matches([' ', '\t']).len();
    if used.contains(&Normalization::Indentation)
        && quote_tail > 0
        && quote[..quote.len() - quote_tail].ends_with(['\n', '\r'])
        && span.ends_with(['\n', '\r'])
    {
        let blank_tail = replacement.len() - replacement.trim_end_matches([' ', '\t']).len();
        let same_tail = replacement[replacement.len() - blank_tail..] == quote[quote.len() - quote_tail..];
        if !same_tail || !replacement[..replacement.len() - blank_tail].ends_with(['\n', '\r']) {
            return Err(UndecidedIndentation);
        }
        replacement.truncate(replacement.len() - blank_tail);
    }
    Ok(replacement)
}

fn strip_if_used(replacement: &str, prefixes: Option<PrefixStyle>, used: &BTreeSet<Normalization>) -> String {
    match prefixes {
        Some(style) if used.contains(&Normalization::LineNumbers) => strip_replacement(replacement, style),
        _ => replacement.to_owned(),
    }
}

/// Rewrites new lines of a replacement for the normalizations a match needed.
struct Rewriter<'a> {
    used: &'a BTreeSet<Normalization>,
    shift: &'a IndentShift,
    typography: Typography,
    placement: Placement,
}

impl Rewriter<'_> {
    /// A new line of the replacement, in the document's terms.
    fn line(&self, line: &str, starts_line: bool) -> String {
        let (content, terminator) = split_terminator(line);
        let content = self.typography.apply(content);
        let indent = leading_blanks(&content);
        let body = &content[indent.len()..];
        let indent = if body.is_empty() { indent.to_owned() } else { self.indent(indent, starts_line) };
        format!("{indent}{body}{}", self.ending(terminator))
    }

    /// The indentation of a new line: shifted when the match needed it, unless the
    /// line starts mid-line (where the match does).
    fn indent(&self, indent: &str, starts_line: bool) -> String {
        if self.used.contains(&Normalization::Indentation) && starts_line {
            self.shift.apply(indent)
        } else {
            indent.to_owned()
        }
    }

    /// The line ending of a new line: the document's when the match needed it.
    fn ending<'t>(&self, terminator: &'t str) -> &'t str {
        if !terminator.is_empty() && self.used.contains(&Normalization::LineEndings) {
            self.placement.line_ending
        } else {
            terminator
        }
    }

    /// `new` (replacing the quote's line `quoted`, found as the document's `found`)
    /// with the document's own characters wherever it keeps the quote's: only when
    /// typography was normalized (otherwise they are the same characters) and the
    /// two lines align character for character.
    fn merge(&self, quoted: &str, found: &str, new: &str, starts_line: bool) -> Option<String> {
        if !self.used.contains(&Normalization::Typography) {
            return None;
        }
        let trim = |line: &str| -> Vec<char> {
            line.trim_end_matches(['\r', '\n']).trim_matches([' ', '\t']).chars().collect()
        };
        let (quoted, found) = (trim(quoted), trim(found));
        let same = |a: char, b: char| ascii_of(a).unwrap_or(a) == ascii_of(b).unwrap_or(b);
        if quoted.len() != found.len() || !quoted.iter().zip(&found).all(|(a, b)| same(*a, *b)) {
            return None;
        }
        let (content, terminator) = split_terminator(new);
        let indent = leading_blanks(content);
        let body: Vec<char> = content[indent.len()..].chars().collect();
        let styled: Vec<char> = self.typography.apply(&content[indent.len()..]).chars().collect();
        let deadline = Instant::now() + DIFF_TIMEOUT;
        let mut merged = String::with_capacity(new.len());
        for op in capture_diff_slices_deadline(Algorithm::Myers, &quoted, &body, Some(deadline)) {
            match op {
                DiffOp::Equal { old_index, len, .. } => merged.extend(&found[old_index..old_index + len]),
                DiffOp::Delete { .. } => {}
                DiffOp::Insert { new_index, new_len, .. } | DiffOp::Replace { new_index, new_len, .. } => {
                    merged.extend(&styled[new_index..new_index + new_len]);
                }
            }
        }
        let indent = if body.is_empty() { indent.to_owned() } else { self.indent(indent, starts_line) };
        Some(format!("{indent}{merged}{}", self.ending(terminator)))
    }
}

/// A line's content and its line break.
fn split_terminator(line: &str) -> (&str, &str) {
    let content = line.trim_end_matches(['\r', '\n']);
    (content, &line[content.len()..])
}

/// How typographic characters in new lines are written to match the document.
#[derive(Debug, Default)]
struct Typography {
    double: Style,
    single: Style,
    dash: Style,
    space: Style,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Leave the replacement as the agent wrote it.
    #[default]
    Keep,
    /// The document uses ASCII where the quote had typographic characters.
    Ascii,
    /// The document uses this typographic form where the quote had ASCII.
    Typographic(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Double,
    Single,
    Dash,
    Space,
}

fn class_of(c: char) -> Option<(Class, bool)> {
    let class = |ascii: char| match ascii {
        '"' => Class::Double,
        '\'' => Class::Single,
        '-' => Class::Dash,
        _ => Class::Space,
    };
    match ascii_of(c) {
        Some(ascii) => Some((class(ascii), true)),
        None if matches!(c, '"' | '\'' | '-' | ' ') => Some((class(c), false)),
        None => None,
    }
}

impl Typography {
    /// For each class of characters the quote wrote differently from the document,
    /// the document's style; a document that mixes both styles is left alone.
    fn between(quote: &str, span: &str) -> Self {
        let style = |class: Class| -> Style {
            let has = |text: &str, typographic: bool| text.chars().any(|c| class_of(c) == Some((class, typographic)));
            let first_typographic = span.chars().find(|c| class_of(*c) == Some((class, true)));
            if has(quote, true) && !has(span, true) {
                Style::Ascii
            } else if let Some(found) = first_typographic.filter(|_| !has(span, false) && has(quote, false)) {
                Style::Typographic(found)
            } else {
                Style::Keep
            }
        };
        Self {
            double: style(Class::Double),
            single: style(Class::Single),
            dash: style(Class::Dash),
            space: style(Class::Space),
        }
    }

    fn apply(&self, line: &str) -> String {
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        for (index, &c) in chars.iter().enumerate() {
            let previous = index.checked_sub(1).map(|index| chars[index]);
            let next = chars.get(index + 1).copied();
            let opens = previous.is_none_or(|p| p.is_whitespace() || "([{<".contains(p));
            let mapped = match class_of(c) {
                Some((class, typographic)) => {
                    let style = match class {
                        Class::Double => self.double,
                        Class::Single => self.single,
                        Class::Dash => self.dash,
                        Class::Space => self.space,
                    };
                    match (style, typographic) {
                        (Style::Ascii, true) => ascii_of(c).unwrap_or(c),
                        (Style::Typographic(_), false) if class == Class::Double => {
                            if opens {
                                '\u{201C}'
                            } else {
                                '\u{201D}'
                            }
                        }
                        (Style::Typographic(_), false) if class == Class::Single => {
                            if opens {
                                '\u{2018}'
                            } else {
                                '\u{2019}'
                            }
                        }
                        // Only a hyphen standing alone between spaces is a dash.
                        (Style::Typographic(dash), false)
                            if class == Class::Dash && previous == Some(' ') && next == Some(' ') =>
                        {
                            dash
                        }
                        _ => c,
                    }
                }
                None => c,
            };
            out.push(mapped);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn find_in(text: &str, quote: &str) -> Found {
        find(&Rope::from_str(text), quote, 0..text.len(), true)
    }

    fn ranges(found: &Found) -> Vec<Range<usize>> {
        found.matches.iter().map(|found| found.range.clone()).collect()
    }

    #[test]
    fn canonical_offsets_map_back_to_the_original() {
        let text = "a \u{201C}b\u{201D}  \r\n\t c\r\n";
        let canonical = Canonical::of(text, true, Rules::up_to(5));
        assert_eq!(canonical.text, "a \"b\"\nc\n");
        let at = canonical.text.find("\"b").unwrap_or_default();
        assert_eq!(&text[canonical.map_start(at)..canonical.map_end(at + 2)], "\u{201C}b");
        let c = canonical.text.find('c').unwrap_or_default();
        assert_eq!(&text[canonical.map_start(c)..canonical.map_end(c + 2)], "c\r\n");
        assert_eq!(canonical.real_line_start(c), Some(text.find('\t').unwrap_or_default()));
    }

    #[test]
    fn prefixes_are_recognised_only_on_every_line_and_counting_up() {
        assert_eq!(
            strip_line_numbers("    41\tfn a() {\n    42\t}\n"),
            Some((PrefixStyle::Tab, "fn a() {\n}\n".into()))
        );
        assert_eq!(strip_line_numbers("  7→x\n  8→y"), Some((PrefixStyle::Arrow, "x\ny".into())));
        assert_eq!(strip_line_numbers("L3: a\nL4:   b\n"), Some((PrefixStyle::L { spaced: true }, "a\n  b\n".into())));
        assert_eq!(strip_line_numbers("L3:a\nL4: b\n"), Some((PrefixStyle::L { spaced: false }, "a\n b\n".into())));
        assert_eq!(
            strip_line_numbers(">  5 |     let x = 1;\n   6 |     run(x);"),
            Some((PrefixStyle::Bar, "    let x = 1;\n    run(x);".into()))
        );
        assert_eq!(strip_line_numbers("  7→x\ny\n"), None, "one line without a prefix");
        assert_eq!(strip_line_numbers("  7→x\n  9→y\n"), None, "numbers that skip");
        assert_eq!(strip_line_numbers("plain\n"), None);
    }

    #[test]
    fn indentation_shifts_are_uniform_or_refused() {
        assert_eq!(IndentShift::of_pairs(&[("", "    "), ("  ", "      ")]), Some(IndentShift::Deeper("    ".into())));
        assert_eq!(
            IndentShift::of_pairs(&[("\t\t", "\t"), ("\t\t\t", "\t\t")]),
            Some(IndentShift::Shallower("\t".into()))
        );
        let converted = |from, width, then| Some(IndentShift::Converted { from, width, then: Box::new(then) });
        assert_eq!(
            IndentShift::of_pairs(&[("    ", "\t"), ("        ", "\t\t")]),
            converted(' ', 4, IndentShift::Same)
        );
        assert_eq!(IndentShift::of_pairs(&[("\t", "  "), ("", "")]), converted('\t', 2, IndentShift::Same));
        // Spaces for tabs and one level deeper: only a tab width of 4 explains it.
        assert_eq!(
            IndentShift::of_pairs(&[("    ", "\t\t"), ("", "\t")]),
            converted(' ', 4, IndentShift::Deeper("\t".into()))
        );
        assert_eq!(IndentShift::of_pairs(&[("", "  "), ("  ", "  ")]), None);
        assert_eq!(
            IndentShift::of_pairs(&[("    ", "\t"), ("      ", "\t\t")]),
            converted(' ', 2, IndentShift::Shallower("\t".into()))
        );
        assert_eq!(IndentShift::of_pairs(&[("    ", "\t"), ("     ", "\t\t")]), None);
        assert_eq!(converted(' ', 4, IndentShift::Same).map(|shift| shift.apply("          ")), Some("\t\t  ".into()));
        assert_eq!(IndentShift::Shallower("    ".into()).apply("  "), "");
    }

    #[test]
    fn the_lowest_rung_that_matches_wins() {
        // Exact matches keep the ladder away, even when a normalized quote would match more.
        let found = find_in("a  \nb\na\nb\n", "a\nb\n");
        assert_eq!(ranges(&found), vec![6..10]);
        assert!(found.matches[0].used.is_empty());
        let found = find_in("x = \u{201C}a\u{201D};  \r\n", "x = \"a\";\n");
        assert_eq!(ranges(&found), vec![0..16]);
        assert_eq!(
            found.normalizations(),
            [Normalization::Typography, Normalization::LineEndings, Normalization::TrailingWhitespace].into()
        );
    }

    #[test]
    fn an_indented_quote_starts_where_the_line_starts() {
        let text = "fn a() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        let found = find_in(text, "if x {\n\ty();\n}\n");
        // The quote's first line lost its indentation: the match takes the whole line.
        assert_eq!(ranges(&found), vec![9..27]);
        assert_eq!(found.matches[0].shift, IndentShift::Deeper("\t".into()));
        let found = find_in(text, "  if x {\n    y();\n  }\n");
        assert_eq!(&text[found.matches[0].range.clone()], "\tif x {\n\t\ty();\n\t}\n");
    }

    #[test]
    fn every_match_that_is_not_exact_names_a_normalization() {
        // The quote's last line is nothing but indentation: rung 5 drops it, and says so.
        let found = find_in("a\n\nb", "a\n\n ");
        assert_eq!(ranges(&found), vec![0..3]);
        assert_eq!(found.normalizations(), [Normalization::Indentation].into());
    }

    /// Issue 43: how a document opens blocks is read from the document, so a line
    /// ending in a comma opens nothing in a file where no deeper line follows one
    /// (a struct literal in Rust), and does where one does (C's continuations).
    #[test]
    fn openers_are_read_from_the_document_and_comments_open_nothing() {
        let rust =
            Rope::from_str("fn f() {\n    S {\n        a: 1,\n        b: 2,\n    }\n    // a comment:\n    g();\n}\n");
        assert_eq!(openers(&rust), vec!['{']);
        assert!(!may_open("        a: 1,", &openers(&rust)));
        assert!(may_open("    S {", &openers(&rust)));
        let c = Rope::from_str("int f() {\n\tg(a,\n\t    b);\n}\n");
        assert_eq!(openers(&c), vec![',', '{']);
        assert!(may_open("\th(x,", &openers(&c)));
        // Unknown (no deeper line at all): every ending that may open does.
        assert!(may_open("x = (", &[]));
        // A comment opens nothing; a line with a comment after its code opens where
        // either its code or the whole line does (a `//` may be inside a string).
        assert!(!may_open("    // see the list below:", &[]));
        assert!(may_open("    if x { // why", &['{']));
        assert!(may_open("    done(); // then:", &['{', ':']));
        assert!(!may_open("    done(); // then.", &['{']));
    }

    /// Issue 43: which endings a document in tabs follows only with a statement one
    /// tab deeper, and which only with a continuation aligned by the same spaces.
    #[test]
    fn followers_are_read_from_the_document() {
        let c = Rope::from_str(
            "int\nf(int a,\n    int b)\n{\n\tif (a)\n\t\tx();\n\telse\n\t\treturn;\n\tif (p &&\n\t    q)\n\t\ty();\n\tz(a,\n\t    b);\n}\n",
        );
        let followed = followers(&c);
        let levels: Vec<String> = followed.levels.into_iter().collect();
        assert_eq!(levels, vec![")", "else", "{"]);
        assert_eq!(
            followed.continued.into_iter().collect::<Vec<_>>(),
            vec![("&".to_owned(), "    ".to_owned()), (",".to_owned(), "    ".to_owned())]
        );
        // `)` is also followed by an aligned line here: no convention for it.
        let mixed = Rope::from_str("{\n\tif (a)\n\t\tx();\n\tg(h(a)\n\t    , b);\n}\n");
        assert_eq!(followers(&mixed).levels.into_iter().collect::<Vec<_>>(), vec!["{".to_owned()]);
        assert_eq!(ending_of("\t} else // why"), Some("else"));
        assert_eq!(ending_of("\tif (a &&"), Some("&"));
        assert_eq!(ending_of("   "), None);
    }

    /// Issue 43's replay: brackets in literals (fd's `"{{"` templates) and a line left
    /// unbalanced before it closes (a typo in requests' history) open no block.
    #[test]
    fn brackets_in_literals_or_unbalanced_mid_line_open_no_block() {
        assert_eq!(bracket_balance(r#"    CommandTemplate::new(vec!["{{}}", "{{", "{.}}"]).unwrap();"#), 0);
        assert_eq!(bracket_balance("    r1 = s.get(httpbin('user-agent')"), 0);
        assert_eq!(bracket_balance("    if (c == '(') {"), 1);
        assert_eq!(bracket_balance(r#"    s = "a \" (";"#), 0);
        assert_eq!(bracket_balance("    x = f('(',"), 1);
        assert_eq!(bracket_balance("fn f<'a>(x: &'a str) {"), 1);
        assert_eq!(bracket_balance("    let v = vec![1,"), 1);
        assert_eq!(bracket_balance("    }"), -1);
    }

    #[test]
    fn whitespace_only_quotes_never_climb() {
        assert!(find_in("a \n b", "  \n").matches.is_empty());
    }

    proptest! {
        /// Whatever the ladder matches maps back to a range of the original text that
        /// is equal to the quote under the rules of the match.
        #[test]
        fn matches_map_back_to_equivalent_text(
            lines in proptest::collection::vec("[ \t]{0,2}[ab\u{201C}\"-]{1,3}[ \t]{0,2}", 1..8),
            endings in proptest::collection::vec(prop_oneof!["\n", "\r\n"], 8),
            from in 0usize..8,
            len in 1usize..4,
        ) {
            let text: String = lines.iter().zip(&endings).map(|(line, ending)| format!("{line}{ending}")).collect();
            let quote: String = lines.iter().skip(from).take(len).map(|line| format!("{}\n", line.trim())).collect();
            let found = find_in(&text, &quote);
            for found_match in &found.matches {
                prop_assert!(text.is_char_boundary(found_match.range.start) && text.is_char_boundary(found_match.range.end));
                let span = &text[found_match.range.clone()];
                let loosest = Rules::up_to(5);
                prop_assert_eq!(Canonical::of(span, true, loosest).text, Canonical::of(&found.quote, true, loosest).text);
            }
        }
    }
}
