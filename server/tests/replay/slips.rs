//! The slips an agent makes when it copies text, each applied to a hunk's lines.
//! A line marked ` ` or `-` is on the quote's side (what is read in the file), a
//! line marked `+` on the new side; a quote edit or a SEARCH/REPLACE block is given
//! as its two sides apart (`-` then `+`), so context lines appear on both.

use crate::common::Random;

/// One slip. `TabsForSpaces` writes tabs where the file has spaces, `SpacesForTabs`
/// the reverse; only the one that differs from the file applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slip {
    Clean,
    TrailingWhitespace,
    ContextShifted,
    WholeHunkShifted,
    TabsForSpaces,
    SpacesForTabs,
    CurlyQuotes,
    LineNumbers,
    DroppedAnchor,
    Typo,
}

impl Slip {
    pub const ALL: [Slip; 10] = [
        Slip::Clean,
        Slip::TrailingWhitespace,
        Slip::ContextShifted,
        Slip::WholeHunkShifted,
        Slip::TabsForSpaces,
        Slip::SpacesForTabs,
        Slip::CurlyQuotes,
        Slip::LineNumbers,
        Slip::DroppedAnchor,
        Slip::Typo,
    ];

    /// The name used in tables and dumps (`contextShifted`: only the quote's side shifted).
    pub fn name(self) -> &'static str {
        match self {
            Slip::Clean => "clean",
            Slip::TrailingWhitespace => "trailingWhitespace",
            Slip::ContextShifted => "contextShifted",
            Slip::WholeHunkShifted => "wholeHunkShifted",
            Slip::TabsForSpaces => "tabsForSpaces",
            Slip::SpacesForTabs => "spacesForTabs",
            Slip::CurlyQuotes => "curlyQuotes",
            Slip::LineNumbers => "lineNumbers",
            Slip::DroppedAnchor => "droppedAnchor",
            Slip::Typo => "typo",
        }
    }

    pub fn from_name(name: &str) -> Option<Slip> {
        Slip::ALL.into_iter().find(|slip| slip.name() == name)
    }
}

fn on_quote_side(marker: char) -> bool {
    marker != '+'
}

/// `lines` with `slip` applied, for a file indented with `unit` (see
/// [`crate::replay::hunks::unit_of`]) whose first old line is line `first_line`
/// (1-based). `None` when the slip does not apply to these lines (no quote mark to
/// curl, tabs in a file of tabs, ...). A dropped anchor is no change of lines
/// (the dialect drops it) and leaves them as they are.
pub fn slipped(
    lines: &[(char, String)],
    slip: Slip,
    unit: &str,
    first_line: usize,
    random: &mut Random,
) -> Option<Vec<(char, String)>> {
    let map_quote = |change: &dyn Fn(&str) -> String| -> Vec<(char, String)> {
        lines
            .iter()
            .map(|(marker, line)| (*marker, if on_quote_side(*marker) { change(line) } else { line.clone() }))
            .collect()
    };
    let map_all = |change: &dyn Fn(&str) -> String| -> Vec<(char, String)> {
        lines.iter().map(|(marker, line)| (*marker, change(line))).collect()
    };
    let deeper = |line: &str| if line.trim().is_empty() { line.to_owned() } else { format!("{unit}{line}") };
    let out = match slip {
        Slip::Clean | Slip::DroppedAnchor => lines.to_vec(),
        Slip::TrailingWhitespace => {
            let has_trailing = lines.iter().any(|(marker, line)| on_quote_side(*marker) && line.ends_with([' ', '\t']));
            if has_trailing {
                map_quote(&|line| line.trim_end().to_owned())
            } else {
                map_quote(&|line| if line.is_empty() { String::new() } else { format!("{line} ") })
            }
        }
        Slip::ContextShifted => map_quote(&deeper),
        Slip::WholeHunkShifted => map_all(&deeper),
        // Only indentation written in spaces becomes tabs: a line led by a tab (Go's
        // code beside its templates in spaces) is already in tabs.
        Slip::TabsForSpaces if unit != "\t" => map_all(&|line| {
            reindent(line, |indent| {
                if indent.contains('\t') {
                    return indent.to_owned();
                }
                let width = indent.len();
                format!("{}{}", "\t".repeat(width / unit.len()), " ".repeat(width % unit.len()))
            })
        }),
        Slip::SpacesForTabs if unit == "\t" => map_all(&|line| reindent(line, |indent| indent.replace('\t', "    "))),
        Slip::TabsForSpaces | Slip::SpacesForTabs => return None,
        Slip::CurlyQuotes => map_quote(&curl),
        Slip::LineNumbers => {
            let mut number = first_line;
            lines
                .iter()
                .map(|(marker, line)| {
                    if on_quote_side(*marker) {
                        number += 1;
                        (*marker, format!("{:>6}\t{line}", number - 1))
                    } else {
                        (*marker, line.clone())
                    }
                })
                .collect()
        }
        Slip::Typo => typo(lines, random)?,
    };
    (slip == Slip::Clean || slip == Slip::DroppedAnchor || out != lines).then_some(out)
}

/// `line` with its leading whitespace rewritten by `change` (only lines led by the
/// kind of whitespace being replaced change).
fn reindent(line: &str, change: impl Fn(&str) -> String) -> String {
    let body = line.trim_start_matches([' ', '\t']);
    let indent = &line[..line.len() - body.len()];
    if body.is_empty() { line.to_owned() } else { format!("{}{body}", change(indent)) }
}

/// Straight quotes curled as a word processor would: `"` opening and closing in
/// turn, `'` as an apostrophe.
fn curl(line: &str) -> String {
    let mut open = true;
    line.chars()
        .map(|c| match c {
            '"' => {
                open = !open;
                if open { '\u{201D}' } else { '\u{201C}' }
            }
            '\'' => '\u{2019}',
            other => other,
        })
        .collect()
}

/// One letter of one quote-side line changed to another, the line chosen among
/// those that carry a letter (removed lines first: that is where a typo would
/// change what is replaced).
fn typo(lines: &[(char, String)], random: &mut Random) -> Option<Vec<(char, String)>> {
    let lettered = |marker: char| -> Vec<usize> {
        (0..lines.len())
            .filter(|&index| lines[index].0 == marker && lines[index].1.chars().any(|c| c.is_ascii_alphabetic()))
            .collect()
    };
    let mut candidates = lettered('-');
    if candidates.is_empty() {
        candidates = lettered(' ');
    }
    if candidates.is_empty() {
        return None;
    }
    let index = candidates[random.below(candidates.len())];
    let line = &lines[index].1;
    let letters: Vec<(usize, char)> = line.char_indices().filter(|(_, c)| c.is_ascii_alphabetic()).collect();
    let (at, letter) = letters[random.below(letters.len())];
    let base = if letter.is_ascii_uppercase() { b'A' } else { b'a' };
    let other = (base + (letter as u8 - base + 1 + random.below(24) as u8) % 26) as char;
    let mut out = lines.to_vec();
    out[index].1 = format!("{}{other}{}", &line[..at], &line[at + 1..]);
    Some(out)
}
