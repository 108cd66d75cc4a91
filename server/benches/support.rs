//! Synthetic documents for the benchmarks: code-like lines, each one unique.
#![allow(dead_code)]

/// About `bytes` bytes of code-like text, one statement per line; line `i`
/// contains `v{i}`, so any 80-byte slice that spans a line start is unique.
pub fn code_like_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 128);
    let mut i = 0usize;
    while text.len() < bytes {
        text.push_str(&line(i));
        i += 1;
    }
    text
}

/// Line `i` of [`code_like_text`].
pub fn line(i: usize) -> String {
    const WORDS: [&str; 8] = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"];
    format!("    let v{i} = compute({}, \"{}\"); // {}\n", i % 97, WORDS[i % 8], WORDS[(i / 8) % 8])
}

/// An 80-byte quote that starts at the beginning of the line 95% of the way
/// through the text, and its byte offset.
pub fn unique_quote_near_end(text: &str) -> (usize, &str) {
    let target = text.len() / 100 * 95;
    let start = text[target..].find('\n').map_or(0, |offset| target + offset + 1);
    (start, &text[start..start + 80])
}

/// A tiny deterministic generator (xorshift), so runs are comparable.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}
