//! Character trigrams: which lines of a document look most like a few given lines
//! (a quote's), even when one of their characters is changed, added or missing.
//!
//! A line is cut into every run of three bytes of its text (trailing whitespace
//! dropped), padded with two marks before and one after (so that short lines have
//! trigrams too): its trigrams. One wrong character changes at most three of them, so a line copied
//! with a typo still shares most of its trigrams with the line it was copied from,
//! whichever word the typo is in and however common the other words are (the
//! token votes of `near_miss.rs` miss exactly these two cases: the typo is in the
//! rarest word, or every word is common).
//!
//! [`Anchors`] holds up to [`MAX_ANCHORS`] lines and is fed each line of the
//! document once; for each anchor it keeps the [`PER_ANCHOR`] lines most like it,
//! and how many lines were about as alike, so that a vote from a line like
//! hundreds of others (a `),` among many) weighs little.
//! The work per document line is bounded: one probe of a small bit filter per
//! trigram of its first [`MAX_LINE_BYTES`] bytes, a table lookup for the few that
//! pass, and one addition per trigram the line shares with the anchors (the
//! anchors' counts are 8-bit lanes of one `u128`).

/// Lines of the quote that look for their like in the document.
pub const MAX_ANCHORS: usize = 16;
/// Lines kept for each anchor, most alike first.
pub const PER_ANCHOR: usize = 8;
/// Bytes of a trimmed line cut into trigrams: with the padding, at most 251
/// trigrams, so that an anchor's count of shared trigrams fits its 8-bit lane.
pub const MAX_LINE_BYTES: usize = 250;
/// The padding around a line (a byte no UTF-8 text holds).
const PAD: u8 = 0xff;
/// Steps of likeness counted apart, to tell how crowded a likeness is.
const STEPS: usize = 16;
/// A line sharing less than this (see [`Anchors::add_line`]) is not kept.
const MIN_LIKENESS: f32 = 0.4;
/// Bits of the filter that most trigrams of a document line fail at once.
const FILTER_BITS: u32 = 16;

/// Up to [`MAX_ANCHORS`] lines, and the document lines most like each.
#[derive(Debug)]
pub struct Anchors {
    anchors: Vec<Anchor>,
    /// Open addressing by [`slot_of`]; a power of two in size, at most a quarter full.
    slots: Vec<Slot>,
    /// One bit per `filter_bit` of every anchor trigram: a clear bit means no anchor has it.
    filter: Vec<u64>,
    /// Document lines fed so far; the stamp that counts a trigram once per line.
    fed: u32,
}

#[derive(Debug)]
struct Anchor {
    /// Which of the given lines it is (0-based).
    index: usize,
    /// Its distinct trigrams.
    trigrams: u32,
    /// Bytes of its cut, trimmed text.
    len: usize,
    /// (likeness, document line), most alike first, then earliest; at most [`PER_ANCHOR`].
    best: Vec<(f32, usize)>,
    /// How many document lines reached each step of likeness (`step_of`).
    crowd: [u32; STEPS + 1],
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The trigram with bit 24 set; 0 marks an empty slot.
    key: u32,
    /// The value of `fed` when this trigram was last counted.
    stamp: u32,
    /// 1 in the 8-bit lane of each anchor that holds the trigram.
    lanes: u128,
}

impl Anchors {
    /// Anchors for `lines`: those with at least two bytes once trimmed, each text
    /// once, evenly spread over the lines when there are more than [`MAX_ANCHORS`].
    pub fn new(lines: &[&str]) -> Self {
        let mut eligible: Vec<(usize, &[u8])> = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let cut = cut(line);
            if line.trim().len() >= 2 && !eligible.iter().any(|(_, other)| *other == cut) {
                eligible.push((index, cut));
            }
        }
        let chosen: Vec<(usize, &[u8])> = if eligible.len() <= MAX_ANCHORS {
            eligible
        } else {
            (0..MAX_ANCHORS).map(|k| eligible[k * (eligible.len() - 1) / (MAX_ANCHORS - 1)]).collect()
        };
        let capacity = (chosen.iter().map(|(_, cut)| cut.len() + 1).sum::<usize>() * 4).next_power_of_two().max(64);
        let mut anchors = Self {
            anchors: Vec::with_capacity(chosen.len()),
            slots: vec![Slot::default(); capacity],
            filter: vec![0; 1 << (FILTER_BITS - 6)],
            fed: 0,
        };
        let mut padded = Vec::with_capacity(MAX_LINE_BYTES + 3);
        for (lane, (index, cut)) in chosen.into_iter().enumerate() {
            let mut distinct = 0;
            pad(cut, &mut padded);
            for window in padded.windows(3) {
                let key = key_of(window);
                let bit = filter_bit(key);
                anchors.filter[bit / 64] |= 1 << (bit % 64);
                let slot = anchors.slot_mut(key);
                slot.key = key;
                let lane_one = 1u128 << (lane * 8);
                if slot.lanes & (0xffu128 << (lane * 8)) == 0 {
                    slot.lanes |= lane_one;
                    distinct += 1;
                }
            }
            anchors.anchors.push(Anchor {
                index,
                trigrams: distinct,
                len: padded.len(),
                best: Vec::new(),
                crowd: [0; STEPS + 1],
            });
        }
        anchors
    }

    /// Feeds document line `number`. Its likeness to an anchor is the share of the
    /// anchor's trigrams it holds, times the ratio of the shorter length to the
    /// longer (so a line that holds the anchor and much more is less alike).
    pub fn add_line(&mut self, number: usize, line: &str) {
        let cut = cut(line);
        if cut.trim_ascii_start().is_empty() || self.anchors.is_empty() {
            return;
        }
        self.fed = self.fed.wrapping_add(1).max(1);
        let stamp = self.fed;
        let mut counts: u128 = 0;
        let mut padded = [PAD; MAX_LINE_BYTES + 3];
        padded[2..2 + cut.len()].copy_from_slice(cut);
        let padded = &padded[..cut.len() + 3];
        for window in padded.windows(3) {
            let key = key_of(window);
            let bit = filter_bit(key);
            if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
                continue;
            }
            let slot = self.slot_mut(key);
            if slot.key == key && slot.stamp != stamp {
                slot.stamp = stamp;
                counts += slot.lanes;
            }
        }
        if counts == 0 {
            return;
        }
        for (lane, anchor) in self.anchors.iter_mut().enumerate() {
            let shared = ((counts >> (lane * 8)) & 0xff) as u32;
            if shared == 0 {
                continue;
            }
            let lengths = anchor.len.min(padded.len()) as f32 / anchor.len.max(padded.len()) as f32;
            anchor.offer(shared as f32 / anchor.trigrams as f32 * lengths, number);
        }
    }

    /// For each anchor, its index among the given lines and the document lines kept
    /// for it with their likeness (0 to 1), most alike first.
    pub fn best(&self) -> impl Iterator<Item = (usize, &[(f32, usize)])> {
        self.anchors.iter().map(|anchor| (anchor.index, anchor.best.as_slice()))
    }

    /// For each anchor, its index among the given lines and the document lines kept
    /// for it with their weight as a vote: the likeness divided by how many lines
    /// were at least about as alike (a line like no other weighs its likeness).
    pub fn votes(&self) -> impl Iterator<Item = (usize, usize, f32)> + '_ {
        self.anchors.iter().flat_map(|anchor| {
            anchor.best.iter().map(move |&(likeness, number)| {
                let crowd: u32 = anchor.crowd[step_of(likeness)..].iter().sum();
                (anchor.index, number, likeness / crowd.max(1) as f32)
            })
        })
    }

    /// The slot that holds `key`, or the empty one where it would go.
    fn slot_mut(&mut self, key: u32) -> &mut Slot {
        let mask = self.slots.len() - 1;
        let mut at = slot_of(key, mask);
        while self.slots[at].key != 0 && self.slots[at].key != key {
            at = (at + 1) & mask;
        }
        &mut self.slots[at]
    }
}

impl Anchor {
    fn offer(&mut self, likeness: f32, number: usize) {
        if likeness < MIN_LIKENESS {
            return;
        }
        self.crowd[step_of(likeness)] += 1;
        if self.best.len() == PER_ANCHOR {
            match self.best.last() {
                Some(&(worst, _)) if likeness > worst => {
                    self.best.pop();
                }
                _ => return,
            }
        }
        // After every kept line at least as alike: earlier lines win ties.
        let at = self.best.partition_point(|&(kept, _)| kept >= likeness);
        self.best.insert(at, (likeness, number));
    }
}

/// A line's bytes without its line break and trailing whitespace, at most
/// [`MAX_LINE_BYTES`] of them. Its indentation stays: of lines that read the same,
/// those indented as the anchor are more alike.
fn cut(line: &str) -> &[u8] {
    let bytes = line.trim_end().as_bytes();
    &bytes[..bytes.len().min(MAX_LINE_BYTES)]
}

/// `cut` with its padding, into `out`.
fn pad(cut: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[PAD, PAD]);
    out.extend_from_slice(cut);
    out.push(PAD);
}

/// The step of likeness `likeness` (0 to 1) counts in.
fn step_of(likeness: f32) -> usize {
    ((likeness * STEPS as f32) as usize).min(STEPS)
}

fn key_of(window: &[u8]) -> u32 {
    (1 << 24) | (u32::from(window[0]) << 16) | (u32::from(window[1]) << 8) | u32::from(window[2])
}

fn mix(key: u32) -> u64 {
    u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn filter_bit(key: u32) -> usize {
    (mix(key) >> (64 - FILTER_BITS)) as usize
}

fn slot_of(key: u32, mask: usize) -> usize {
    (mix(key) >> 20) as usize & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best_lines(quote: &[&str], document: &[&str]) -> Vec<Vec<usize>> {
        let mut anchors = Anchors::new(quote);
        for (number, line) in document.iter().enumerate() {
            anchors.add_line(number, line);
        }
        anchors.best().map(|(_, best)| best.iter().map(|&(_, number)| number).collect()).collect()
    }

    #[test]
    fn a_typo_in_any_word_still_finds_the_line() {
        let document = [
            "func (c *Command) initCompleteCmd(args []string) {",
            "func (c *Command) initDefaultCompletionCmd() {",
            "func (c *Command) initDefaultHelpCmd() {",
        ];
        assert_eq!(best_lines(&["func (c *Command) initDexaultCompletionCmd() {"], &document)[0][0], 1);
        assert_eq!(best_lines(&["fucn (c *Command) initDefaultHelpCmd() {"], &document)[0][0], 2);
    }

    #[test]
    fn an_equal_line_is_wholly_alike_and_one_shifted_or_longer_less() {
        let mut anchors = Anchors::new(&["    return total;"]);
        anchors.add_line(0, "return total;\n");
        anchors.add_line(1, "return total; // and a much longer comment after it");
        anchors.add_line(2, "    return total;\n");
        anchors.add_line(3, "nothing in common");
        let best: Vec<(usize, Vec<(f32, usize)>)> =
            anchors.best().map(|(index, best)| (index, best.to_vec())).collect();
        assert_eq!(best.len(), 1);
        assert_eq!(best[0].0, 0);
        let kept: Vec<usize> = best[0].1.iter().map(|&(_, number)| number).collect();
        assert_eq!(kept, [2, 0], "the long line is not alike enough: {best:?}");
        assert_eq!(best[0].1[0].0, 1.0);
    }

    #[test]
    fn repeated_trigrams_count_once_and_one_character_lines_are_no_anchors() {
        let lines = best_lines(&["-------------", "}", ""], &["-------------", "----", "-------------"]);
        assert_eq!(lines, vec![vec![0, 2, 1]], "a line of four dashes is as alike as its length allows");
    }

    #[test]
    fn short_lines_have_trigrams_too() {
        assert_eq!(best_lines(&["Vaue(", "4,"], &["Value(", "3,", "4,", "Value("]), vec![vec![0, 3], vec![2]]);
    }

    #[test]
    fn a_line_like_many_others_weighs_little() {
        let mut anchors = Anchors::new(&["),", "let unique = 1;"]);
        for number in 0..100 {
            anchors.add_line(number, "),");
        }
        anchors.add_line(100, "let unique = 1;");
        let votes: Vec<(usize, usize, f32)> = anchors.votes().collect();
        assert_eq!(votes.len(), PER_ANCHOR + 1);
        assert_eq!(votes[0], (0, 0, 0.01));
        assert_eq!(votes[PER_ANCHOR], (1, 100, 1.0));
    }

    #[test]
    fn many_lines_give_evenly_spread_anchors() {
        let quote: Vec<String> = (0..100).map(|i| format!("line number {i}")).collect();
        let quote: Vec<&str> = quote.iter().map(String::as_str).collect();
        let anchors = Anchors::new(&quote);
        let indexes: Vec<usize> = anchors.best().map(|(index, _)| index).collect();
        assert_eq!(indexes.len(), MAX_ANCHORS);
        assert_eq!((indexes[0], indexes[MAX_ANCHORS - 1]), (0, 99));
    }

    #[test]
    fn only_the_most_alike_lines_are_kept() {
        let document: Vec<String> = (0..50).map(|i| format!("let value = {i};")).collect();
        let mut anchors = Anchors::new(&["let value = 42;"]);
        for (number, line) in document.iter().enumerate() {
            anchors.add_line(number, line);
        }
        let (_, best) = anchors.best().next().unwrap_or_else(|| panic!("no anchor"));
        assert_eq!(best.len(), PER_ANCHOR);
        assert_eq!(best[0], (1.0, 42));
    }
}
