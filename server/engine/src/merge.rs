//! Three-way merge of a change made on disk into a live buffer.
//!
//! `base` is what the file held when the buffer last agreed with it, `theirs` is
//! what the file holds now, `ours` is the live buffer with the person's unsaved
//! changes. The merge is line-based with diff3 semantics (similar's `TextMerge`,
//! which clusters changes that overlap or touch, as git's xdiff does): a region
//! that only the disk changed becomes a replacement of the live text; a region
//! that both changed differently is a conflict and is never applied over the
//! person's text; a region both changed the same way needs nothing.

use std::ops::Range;

use similar::{MergeResolution, TextMerge};

use crate::plan::Replacement;

/// A region both sides changed, differently: the person's lines are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// 0-based line indexes of the live text (the person's version).
    pub ours_lines: Range<usize>,
    /// 0-based line indexes of the file on disk.
    pub theirs_lines: Range<usize>,
    /// The same region of the live text in bytes: whole lines.
    pub ours_range: Range<usize>,
    /// What the file on disk holds there (its lines `theirs_lines`).
    pub theirs_text: String,
}

/// What merging a disk change into the live text gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Replacements of the live text; sorted and disjoint, whole lines each.
    pub replacements: Vec<Replacement>,
    /// Regions left as the person has them; sorted.
    pub conflicts: Vec<Conflict>,
}

/// Merges the change `base` → `theirs` into `ours`.
pub fn merge(base: &str, ours: &str, theirs: &str) -> Merged {
    let merge = TextMerge::from_lines(base, ours, theirs);
    let ours_starts = line_starts(&merge, ours.len());
    let mut merged = Merged::default();
    for region in merge.regions() {
        match region.resolution() {
            MergeResolution::Theirs => {
                let lines = region.ours_range();
                let new_text: String = region.theirs_range().filter_map(|index| merge.theirs_line(index)).collect();
                merged
                    .replacements
                    .push(Replacement { range: ours_starts[lines.start]..ours_starts[lines.end], new_text });
            }
            MergeResolution::Conflict => {
                let lines = region.ours_range();
                let theirs_text: String = region.theirs_range().filter_map(|index| merge.theirs_line(index)).collect();
                merged.conflicts.push(Conflict {
                    ours_range: ours_starts[lines.start]..ours_starts[lines.end],
                    ours_lines: lines,
                    theirs_lines: region.theirs_range(),
                    theirs_text,
                })
            }
            _ => {}
        }
    }
    merged
}

/// The byte offset where each line of `ours` starts, plus its length at the end.
fn line_starts(merge: &TextMerge<'_, '_, '_, str>, len: usize) -> Vec<usize> {
    let mut starts = Vec::with_capacity(merge.ours_len() + 1);
    let mut offset = 0;
    for index in 0..merge.ours_len() {
        starts.push(offset);
        offset += merge.ours_line(index).map_or(0, str::len);
    }
    starts.push(len);
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn apply(text: &str, replacements: &[Replacement]) -> String {
        let mut out = text.to_owned();
        for replacement in replacements.iter().rev() {
            out.replace_range(replacement.range.clone(), &replacement.new_text);
        }
        out
    }

    /// `check(base, ours, theirs, expected)`: the merged live text.
    fn check(base: &str, ours: &str, theirs: &str, expected: &str, conflicts: usize) {
        let merged = merge(base, ours, theirs);
        assert_eq!(apply(ours, &merged.replacements), expected, "{merged:?}");
        assert_eq!(merged.conflicts.len(), conflicts, "{merged:?}");
    }

    #[test]
    fn a_disk_change_far_from_the_person_s_is_merged() {
        check("a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0);
    }

    #[test]
    fn a_clean_buffer_takes_the_disk_text() {
        check("a\nb\n", "a\nb\n", "x\ny\nz", "x\ny\nz", 0);
    }

    #[test]
    fn the_same_change_on_both_sides_is_not_applied_twice() {
        check("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0);
    }

    #[test]
    fn an_overlapping_change_keeps_the_person_s_lines_and_is_reported() {
        let merged = merge("a\nb\nc\nd\ne\nf\n", "a\nmine\nc\nd\ne\nf\n", "a\ntheirs\nc\nd\ne\nF\n");
        assert_eq!(apply("a\nmine\nc\nd\ne\nf\n", &merged.replacements), "a\nmine\nc\nd\ne\nF\n");
        assert_eq!(
            merged.conflicts,
            vec![Conflict {
                ours_lines: 1..2,
                theirs_lines: 1..2,
                ours_range: 2..7,
                theirs_text: "theirs\n".to_owned()
            }]
        );
    }

    #[test]
    fn crlf_lines_stay_byte_exact() {
        check("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "a\r\nb\r\nc\r\nd\r\n", "a\r\nB\r\nc\r\nd\r\n", 0);
    }

    #[test]
    fn a_final_line_without_a_line_ending_is_merged() {
        check("a\nb\nc", "A\nb\nc", "a\nb\nc\nd", "A\nb\nc\nd", 0);
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof![Just("a\n"), Just("b\n"), Just("c\r\n"), Just("d"), Just("\n")], 0..12)
            .prop_map(|lines| lines.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn a_clean_buffer_always_becomes_the_disk_text(base in text(), theirs in text()) {
            let merged = merge(&base, &base, &theirs);
            prop_assert!(merged.conflicts.is_empty());
            prop_assert_eq!(apply(&base, &merged.replacements), theirs);
        }

        #[test]
        fn an_unchanged_disk_changes_nothing(base in text(), ours in text()) {
            prop_assert_eq!(merge(&base, &ours, &base), Merged::default());
        }

        #[test]
        fn without_conflicts_the_result_is_the_three_way_merge(base in text(), ours in text(), theirs in text()) {
            let merged = merge(&base, &ours, &theirs);
            let reference = TextMerge::from_lines(base.as_str(), ours.as_str(), theirs.as_str());
            if merged.conflicts.is_empty() {
                prop_assert_eq!(apply(&ours, &merged.replacements), reference.to_string());
            }
            // Replacements are sorted, disjoint and never inside a conflict.
            for pair in merged.replacements.windows(2) {
                prop_assert!(pair[0].range.end <= pair[1].range.start);
            }
        }
    }
}
