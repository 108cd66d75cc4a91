//! What a replayed case did, counted per language, dialect and slip, and printed as
//! one table per language and dialect (the same columns the peers' scripts print).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cases::Dialect;
use super::slips::Slip;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Success, and the file is the intended text.
    Recovered,
    /// An error, and the file's bytes as they were.
    Refused,
    /// Success, and the file is anything else.
    Wrong,
    /// An error, but something was written.
    Partial,
    /// Success where the slipped quote is exactly another place of the file.
    ExactElsewhere,
}

/// The outcome of a request that succeeded (`applied`) or not, given what the file
/// held before (`old`), what it should hold (`intended`) and what it holds.
pub fn classify(applied: bool, old: &str, intended: &str, written: &str, exact_elsewhere: bool) -> Outcome {
    match applied {
        true if written == intended => Outcome::Recovered,
        true if exact_elsewhere => Outcome::ExactElsewhere,
        true => Outcome::Wrong,
        false if written == old => Outcome::Refused,
        false => Outcome::Partial,
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub recovered: usize,
    pub refused: usize,
    pub wrong: usize,
    pub partial: usize,
    pub exact_elsewhere: usize,
}

impl Tally {
    pub fn add(&mut self, outcome: Outcome) {
        *match outcome {
            Outcome::Recovered => &mut self.recovered,
            Outcome::Refused => &mut self.refused,
            Outcome::Wrong => &mut self.wrong,
            Outcome::Partial => &mut self.partial,
            Outcome::ExactElsewhere => &mut self.exact_elsewhere,
        } += 1;
    }

    pub fn cases(&self) -> usize {
        self.recovered + self.refused + self.wrong + self.partial + self.exact_elsewhere
    }

    pub fn merge(&mut self, other: &Tally) {
        self.recovered += other.recovered;
        self.refused += other.refused;
        self.wrong += other.wrong;
        self.partial += other.partial;
        self.exact_elsewhere += other.exact_elsewhere;
    }
}

/// Tallies by language, dialect and slip.
pub type Tallies = BTreeMap<(String, Dialect, Slip), Tally>;

/// One Markdown table per language and dialect: a row per slip, then the total.
pub fn tables(tallies: &Tallies) -> String {
    let mut out = String::new();
    let mut groups: BTreeMap<(&str, Dialect), Vec<(Slip, Tally)>> = BTreeMap::new();
    for ((language, dialect, slip), tally) in tallies {
        groups.entry((language, *dialect)).or_default().push((*slip, *tally));
    }
    for ((language, dialect), rows) in groups {
        let _ = writeln!(out, "\n{language} · {}\n", dialect.name());
        let _ = writeln!(out, "| slip | cases | recovered | refused | wrong | partial | exact elsewhere |");
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        let mut total = Tally::default();
        for (slip, tally) in &rows {
            total.merge(tally);
            let _ = writeln!(out, "{}", row(slip.name(), tally));
        }
        let _ = writeln!(out, "{}", row("**total**", &total));
    }
    out
}

fn row(label: &str, tally: &Tally) -> String {
    let share = if tally.cases() == 0 { 0.0 } else { 100.0 * tally.recovered as f64 / tally.cases() as f64 };
    format!(
        "| {label} | {} | {} ({share:.1}%) | {} | {} | {} | {} |",
        tally.cases(),
        tally.recovered,
        tally.refused,
        tally.wrong,
        tally.partial,
        tally.exact_elsewhere
    )
}
