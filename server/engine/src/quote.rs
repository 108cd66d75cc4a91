//! Finding quotes in a rope: every exact occurrence of a string inside a byte window.
//!
//! The search runs `memchr::memmem` over the rope's chunks in place (no copy of the
//! document), and checks each seam between two chunks for a match that straddles it.
//! Matches may overlap: `"aa"` occurs twice in `"aaa"`, and both count when deciding
//! whether a quote is unique. Windows of several megabytes are split between threads
//! (the rope is shared, not copied): walking a rope's ~1 KB chunks costs more than
//! scanning contiguous memory, and the split wins that back.

use std::ops::Range;

use memchr::memmem::Finder;
use ropey::Rope;

/// Byte offsets where `needle` starts, for every occurrence (overlapping ones
/// included) that lies entirely inside `window`. `window` must lie on char
/// boundaries of `rope`; `needle` must not be empty.
pub fn find_all(rope: &Rope, needle: &str, window: Range<usize>) -> Vec<usize> {
    let parts = parallel_parts(window.len());
    if parts < 2 || needle.is_empty() {
        return find_all_sequential(rope, needle, window);
    }
    // Each part searches for matches that *start* in its span; its window reaches
    // m - 1 bytes further so that a match across the split is still whole.
    let m = needle.len();
    let mut splits: Vec<usize> =
        (1..parts).map(|part| char_boundary_at_or_after(rope, window.start + window.len() / parts * part)).collect();
    splits.insert(0, window.start);
    splits.push(window.end);
    std::thread::scope(|scope| {
        let handles: Vec<_> = splits
            .windows(2)
            .map(|span| {
                let (from, to) = (span[0], span[1]);
                let reach = char_boundary_at_or_after(rope, (to + m - 1).min(window.end));
                scope.spawn(move || {
                    let mut starts = find_all_sequential(rope, needle, from..reach);
                    starts.retain(|&start| start < to);
                    starts
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// Windows at least this large are searched on several threads.
const PARALLEL_THRESHOLD: usize = 4 * 1024 * 1024;

fn parallel_parts(window_len: usize) -> usize {
    if window_len < PARALLEL_THRESHOLD {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

fn char_boundary_at_or_after(rope: &Rope, byte: usize) -> usize {
    let byte = byte.min(rope.len_bytes());
    let char_index = rope.byte_to_char(byte);
    let start = rope.char_to_byte(char_index);
    if start == byte { byte } else { rope.char_to_byte(char_index + 1) }
}

fn find_all_sequential(rope: &Rope, needle: &str, window: Range<usize>) -> Vec<usize> {
    let mut starts = Vec::new();
    for_each_match(rope, needle, window, |start| {
        starts.push(start);
        true
    });
    starts
}

/// Counts occurrences, stopping as soon as `limit` are found.
pub fn count_up_to(rope: &Rope, needle: &str, window: Range<usize>, limit: usize) -> usize {
    let mut count = 0;
    for_each_match(rope, needle, window, |_| {
        count += 1;
        count < limit
    });
    count
}

/// Keeps only matches that do not overlap an earlier kept match (leftmost first).
pub fn non_overlapping(starts: &[usize], needle_len: usize) -> Vec<usize> {
    let mut kept = Vec::new();
    let mut free_from = 0;
    for &start in starts {
        if start >= free_from {
            kept.push(start);
            free_from = start + needle_len;
        }
    }
    kept
}

/// Calls `on_match` with the start of each match in ascending order until it returns false.
fn for_each_match(rope: &Rope, needle: &str, window: Range<usize>, mut on_match: impl FnMut(usize) -> bool) {
    let needle = needle.as_bytes();
    let m = needle.len();
    if m == 0 || window.end <= window.start || window.end - window.start < m {
        return;
    }
    let finder = Finder::new(needle);
    let slice = rope.byte_slice(window.clone());
    // The last (m - 1) bytes before the current chunk, for matches across a seam.
    let mut seam: Vec<u8> = Vec::with_capacity(2 * m);
    let mut chunk_start = window.start;
    for chunk in slice.chunks() {
        let bytes = chunk.as_bytes();
        if !seam.is_empty() {
            let carried = seam.len();
            seam.extend_from_slice(&bytes[..bytes.len().min(m - 1)]);
            let mut from = 0;
            while let Some(i) = finder.find(&seam[from..]) {
                let at = from + i;
                if at >= carried {
                    break;
                }
                if !on_match(chunk_start - carried + at) {
                    return;
                }
                from = at + 1;
            }
            seam.truncate(carried);
        }
        let mut from = 0;
        while let Some(i) = finder.find(&bytes[from..]) {
            let at = from + i;
            if !on_match(chunk_start + at) {
                return;
            }
            from = at + 1;
        }
        if m > 1 {
            // Keep only the last m - 1 bytes seen: copying whole chunks would copy the document.
            if bytes.len() >= m - 1 {
                seam.clear();
                seam.extend_from_slice(&bytes[bytes.len() - (m - 1)..]);
            } else {
                seam.extend_from_slice(bytes);
                let excess = seam.len().saturating_sub(m - 1);
                seam.drain(..excess);
            }
        }
        chunk_start += bytes.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &str, needle: &str, window: Range<usize>) -> Vec<usize> {
        let bytes = hay.as_bytes();
        (window.start..window.end)
            .filter(|&i| i + needle.len() <= window.end && bytes[i..].starts_with(needle.as_bytes()))
            .collect()
    }

    #[test]
    fn overlapping_matches_all_count() {
        let rope = Rope::from_str("aaaa");
        assert_eq!(find_all(&rope, "aa", 0..4), vec![0, 1, 2]);
        assert_eq!(non_overlapping(&[0, 1, 2], 2), vec![0, 2]);
    }

    #[test]
    fn matches_across_chunk_seams_are_found() {
        // Long enough for many chunks; the quote straddles seams at many offsets.
        let text = "0123456789abcdef".repeat(4000);
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 10);
        for needle in ["f0123", "9abcdef0123456789a", "ef0"] {
            assert_eq!(find_all(&rope, needle, 0..text.len()), naive(&text, needle, 0..text.len()));
        }
    }

    #[test]
    fn a_parallel_search_finds_matches_across_its_splits() {
        // Big enough to be split; the quote sits on every possible split point.
        let unit = "abcdefghij😀\n";
        let text = unit.repeat(PARALLEL_THRESHOLD / unit.len() + 1000);
        let rope = Rope::from_str(&text);
        for needle in ["j😀\nab", "😀", "\n"] {
            assert_eq!(find_all(&rope, needle, 0..text.len()), naive(&text, needle, 0..text.len()), "{needle:?}");
        }
        let window = 5..text.len() - 7;
        assert_eq!(find_all(&rope, "cde", window.clone()), naive(&text, "cde", window));
    }

    #[test]
    fn the_window_bounds_matches() {
        let rope = Rope::from_str("x = 1; x = 1; x = 1;");
        assert_eq!(find_all(&rope, "x = 1;", 1..20), vec![7, 14]);
        assert_eq!(find_all(&rope, "x = 1;", 7..19), vec![7]);
        assert_eq!(count_up_to(&rope, "x", 0..20, 2), 2);
    }

    proptest! {
        #[test]
        fn agrees_with_a_naive_search(
            pieces in proptest::collection::vec("[ab\n😀]{0,40}", 1..80),
            needle in "[ab\n😀]{1,6}",
        ) {
            let text: String = pieces.concat();
            let rope = {
                // Build by repeated inserts so chunk boundaries fall in varied places.
                let mut rope = Rope::new();
                for piece in &pieces {
                    let end = rope.len_chars();
                    rope.insert(end, piece);
                }
                rope
            };
            prop_assert_eq!(find_all(&rope, &needle, 0..text.len()), naive(&text, &needle, 0..text.len()));
        }
    }
}
