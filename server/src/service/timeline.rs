//! The timeline: journal entries read back as every agent's changes, grouped session →
//! turn → edit (one write) → file, newest first, with what can be reverted and what
//! the person marked reviewed.
//!
//! Entries written before ids, sessions and kept texts existed still read: their id is
//! derived as it is written today (`<writeId>.<n>`, `n` the document's place in the
//! write), their session is `legacy:<agent>`, and they cannot be reverted. A turn is
//! the agent's where it named one; otherwise the writes of one session form one turn
//! until a gap of more than [`TURN_GAP_SECONDS`] (its id is `auto:<first writeId>`).
//! Reviewed marks are kept beside each journal in `<journal>.marks.jsonl`: a mark holds
//! while the newest entry of its file is the one it was made at.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::service::clock::now_rfc3339;
use crate::service::journal::{Entry, NotKeptReason, Outcome, read_entries};
use crate::service::protocol::{
    TimelineChoice, TimelineEdit, TimelineFile, TimelineResult, TimelineSession, TimelineTurn, TurnFile,
};

/// Writes of one session further apart than this start a new turn, where the agent
/// names none.
pub const TURN_GAP_SECONDS: i64 = 120;
/// Sessions a timeline shows when the caller sets no limit.
pub const DEFAULT_SESSIONS: usize = 200;

/// One journal entry with the names the timeline gives it.
#[derive(Debug, Clone)]
pub struct Journaled {
    pub entry: Entry,
    pub id: String,
    pub session: String,
    pub turn: String,
    /// The journal file it was read from.
    pub journal: PathBuf,
    /// Its journal's place among those read and its line's place in it: entries of
    /// one second keep this order.
    pub place: (usize, usize),
}

impl Journaled {
    /// Whether the entry can be reverted, or why not.
    pub fn revertible(&self) -> Result<(), &'static str> {
        let entry = &self.entry;
        match entry.not_kept {
            Some(NotKeptReason::TooLarge) => return Err("tooLarge"),
            Some(NotKeptReason::NothingWritten) => return Err("nothingWritten"),
            None => {}
        }
        let wrote = matches!(
            entry.outcome,
            Outcome::Applied | Outcome::ModifiedByEditor | Outcome::Partial | Outcome::Reloaded
        );
        if !wrote {
            return Err("nothingWritten");
        }
        if entry.before.is_none() && entry.after.is_none() {
            return Err("legacy");
        }
        Ok(())
    }
}

/// Reads the journals, in time order (entries of one second keep their order in
/// their journal), each named.
pub fn read_all(files: &[PathBuf]) -> io::Result<Vec<Journaled>> {
    let mut all = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let entries = match read_entries(file) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        let mut places = HashMap::new();
        all.extend(name_entries(entries, file, index, 0, &mut places));
    }
    put_in_order(&mut all);
    Ok(all)
}

/// Names the entries read from `file` (the `index`th journal), the first being its
/// `first_line`th; `places` counts each write's documents seen so far in that file.
pub(crate) fn name_entries(
    entries: Vec<Entry>,
    file: &Path,
    index: usize,
    first_line: usize,
    places: &mut HashMap<String, usize>,
) -> Vec<Journaled> {
    entries
        .into_iter()
        .enumerate()
        .map(|(line, entry)| {
            let place = places.entry(entry.write_id.clone()).or_default();
            let id = entry.id.clone().unwrap_or_else(|| format!("{}.{place}", entry.write_id));
            *place += 1;
            let session = entry.session.clone().unwrap_or_else(|| format!("legacy:{}", entry.agent));
            Journaled {
                entry,
                id,
                session,
                turn: String::new(),
                journal: file.to_owned(),
                place: (index, first_line + line),
            }
        })
        .collect()
}

/// Sorts entries by time (then by their journal and line) and names their turns.
pub(crate) fn put_in_order(all: &mut [Journaled]) {
    all.sort_by(|a, b| a.entry.time.cmp(&b.entry.time).then(a.place.cmp(&b.place)));
    name_turns(all);
}

/// Gives every entry its turn: the agent's, else by the gap rule.
fn name_turns(all: &mut [Journaled]) {
    // Per session: (the time of its last write, that write's id, its turn).
    let mut last: HashMap<String, (i64, String, String)> = HashMap::new();
    for journaled in all.iter_mut() {
        let time = seconds_of(&journaled.entry.time);
        let turn = match &journaled.entry.turn {
            Some(turn) => turn.clone(),
            None => match last.get(&journaled.session) {
                Some((_, write, turn)) if *write == journaled.entry.write_id => turn.clone(),
                Some((previous, _, turn)) if time - previous <= TURN_GAP_SECONDS && turn.starts_with("auto:") => {
                    turn.clone()
                }
                _ => format!("auto:{}", journaled.entry.write_id),
            },
        };
        last.insert(journaled.session.clone(), (time, journaled.entry.write_id.clone(), turn.clone()));
        journaled.turn = turn;
    }
}

/// Seconds since the epoch of an RFC 3339 time as the journal writes it
/// (`2026-12-03T10:01:02Z`); 0 when it cannot be read.
pub fn seconds_of(time: &str) -> i64 {
    let number = |range: std::ops::Range<usize>| time.get(range).and_then(|part| part.parse::<i64>().ok());
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) =
        (number(0..4), number(5..7), number(8..10), number(11..13), number(14..16), number(17..19))
    else {
        return 0;
    };
    // Days from civil (Howard Hinnant), the inverse of the clock's formatting.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    days * 86_400 + hour * 3_600 + minute * 60 + second
}

/// What the timeline shows: filters and how many sessions.
#[derive(Debug, Clone, Default)]
pub struct Filter<'a> {
    pub agent: Option<&'a str>,
    /// Only edits touching this document (as the journal writes URIs).
    pub uri: Option<&'a str>,
    pub limit: Option<usize>,
    /// At most this many edits (writes), the newest first.
    pub max_edits: Option<usize>,
}

/// Groups the entries (as [`read_all`] gives them) into the timeline.
pub fn timeline(all: &[Journaled], marks: &Marks, filter: &Filter<'_>) -> TimelineResult {
    let reverted_by = reverted_by(all);
    let newest_of_uri = newest_of_uri(all);
    // Writes, in time order, each with its entries.
    let mut writes: Vec<(usize, Vec<&Journaled>)> = Vec::new();
    let mut write_at: HashMap<&str, usize> = HashMap::new();
    for journaled in all {
        match write_at.get(journaled.entry.write_id.as_str()) {
            Some(&at) => writes[at].1.push(journaled),
            None => {
                write_at.insert(&journaled.entry.write_id, writes.len());
                writes.push((writes.len(), vec![journaled]));
            }
        }
    }
    let wanted = |entries: &[&Journaled]| {
        let first = entries[0];
        filter.agent.is_none_or(|agent| first.entry.agent == agent)
            && filter.uri.is_none_or(|uri| {
                entries
                    .iter()
                    .any(|journaled| journaled.entry.uri == uri || journaled.entry.new_uri.as_deref() == Some(uri))
            })
    };
    // Sessions and turns in the order of their newest write. Once `max_edits` edits
    // are in, older edits are only counted in the turns already there; newer turns and
    // sessions are not started.
    let mut sessions: Vec<TimelineSession> = Vec::new();
    let mut session_at: HashMap<String, usize> = HashMap::new();
    let (mut shown, mut total, mut cut) = (0usize, 0usize, false);
    let (mut agents, mut files) = (Tally::default(), Tally::default());
    for (write, entries) in writes.iter().rev() {
        let first = entries[0];
        agents.count(&first.entry.agent, *write, &first.entry.time);
        for journaled in entries {
            for uri in [Some(&journaled.entry.uri), journaled.entry.new_uri.as_ref()].into_iter().flatten() {
                files.count(uri, *write, &first.entry.time);
            }
        }
        if !wanted(entries) {
            continue;
        }
        total += 1;
        let room = filter.max_edits.is_none_or(|max| shown < max);
        let at = match session_at.get(first.session.as_str()) {
            Some(&at) => at,
            None if !room => {
                cut = true;
                continue;
            }
            None => {
                session_at.insert(first.session.clone(), sessions.len());
                sessions.push(TimelineSession {
                    session: first.session.clone(),
                    agent: first.entry.agent.clone(),
                    source: source_name(first),
                    started: first.entry.time.clone(),
                    ended: first.entry.time.clone(),
                    turns: Vec::new(),
                });
                sessions.len() - 1
            }
        };
        let session = &mut sessions[at];
        let turn = match session.turns.iter().position(|turn| turn.turn == first.turn) {
            Some(index) => &mut session.turns[index],
            None if !room => {
                cut = true;
                continue;
            }
            None => {
                session.turns.push(TimelineTurn {
                    turn: first.turn.clone(),
                    started: first.entry.time.clone(),
                    ended: first.entry.time.clone(),
                    edit_count: 0,
                    files: Vec::new(),
                    edits: Vec::new(),
                });
                session.turns.last_mut().expect("just pushed")
            }
        };
        session.started.clone_from(&first.entry.time);
        turn.started.clone_from(&first.entry.time);
        turn.edit_count += 1;
        if room {
            turn.edits.push(edit_of(entries, &reverted_by));
            shown += 1;
        } else {
            cut = true;
        }
        for journaled in entries {
            for uri in [Some(&journaled.entry.uri), journaled.entry.new_uri.as_ref()].into_iter().flatten() {
                if !turn.files.iter().any(|file| &file.uri == uri) {
                    let reviewed = marks.holds(&journaled.turn, uri, newest_of_uri.get(uri.as_str()).copied());
                    turn.files.push(TurnFile { uri: uri.clone(), reviewed });
                }
            }
        }
    }
    for session in &mut sessions {
        for turn in &mut session.turns {
            turn.files.sort_by(|a, b| a.uri.cmp(&b.uri));
        }
    }
    let limit = filter.limit.unwrap_or(DEFAULT_SESSIONS);
    let truncated = cut || sessions.len() > limit;
    sessions.truncate(limit);
    TimelineResult {
        sessions,
        entries: all.len(),
        edits: total,
        truncated,
        agents: agents.into_choices(),
        files: files.into_choices(),
    }
}

/// Counts writes by agent or by file, the newest write first, so that a value's first
/// write seen is its latest.
#[derive(Default)]
struct Tally<'a> {
    at: HashMap<&'a str, usize>,
    /// Each value, its count, the time of its latest write and the last write counted.
    counted: Vec<(&'a str, usize, &'a str, usize)>,
    /// The value counted last and its place: consecutive writes are mostly one agent's,
    /// on one file, and comparing costs far less than hashing.
    last: Option<(&'a str, usize)>,
}

impl<'a> Tally<'a> {
    /// Counts `write` for `value`, once however many of its documents name it.
    fn count(&mut self, value: &'a str, write: usize, time: &'a str) {
        let at = match self.last {
            Some((last, at)) if last == value => Some(at),
            _ => self.at.get(value).copied(),
        };
        let at = match at {
            Some(at) => {
                let (_, edits, _, last) = &mut self.counted[at];
                if *last != write {
                    *edits += 1;
                    *last = write;
                }
                at
            }
            None => {
                self.at.insert(value, self.counted.len());
                self.counted.push((value, 1, time, write));
                self.counted.len() - 1
            }
        };
        self.last = Some((value, at));
    }

    fn into_choices(self) -> Vec<TimelineChoice> {
        self.counted
            .into_iter()
            .map(|(value, edits, latest, _)| TimelineChoice {
                value: value.to_owned(),
                edits,
                latest: latest.to_owned(),
            })
            .collect()
    }
}

fn source_name(journaled: &Journaled) -> String {
    serde_json::to_value(journaled.entry.source)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn edit_of(entries: &[&Journaled], reverted_by: &HashMap<String, String>) -> TimelineEdit {
    let first = entries[0];
    let files: Vec<TimelineFile> = entries
        .iter()
        .map(|journaled| {
            let (added, removed) = counts(&journaled.entry.diff);
            let revertible = journaled.revertible();
            TimelineFile {
                id: journaled.id.clone(),
                uri: journaled.entry.uri.clone(),
                outcome: journaled.entry.outcome.as_str().to_owned(),
                added,
                removed,
                revertible: revertible.is_ok(),
                why_not: revertible.err().map(str::to_owned),
                operation: journaled.entry.operation.clone(),
                new_uri: journaled.entry.new_uri.clone(),
            }
        })
        .collect();
    let outcome = match files.first() {
        Some(first) if files.iter().all(|file| file.outcome == first.outcome) => first.outcome.clone(),
        _ => "partial".to_owned(),
    };
    // Reverted: every revertible file was taken back by one applied revert.
    let takers: HashSet<&String> = entries
        .iter()
        .filter(|journaled| journaled.revertible().is_ok())
        .filter_map(|journaled| reverted_by.get(&journaled.id))
        .collect();
    let all_taken = entries
        .iter()
        .filter(|journaled| journaled.revertible().is_ok())
        .all(|journaled| reverted_by.contains_key(&journaled.id));
    let reverted = (all_taken && takers.len() == 1).then(|| takers.into_iter().next().cloned()).flatten();
    TimelineEdit {
        write_id: first.entry.write_id.clone(),
        time: first.entry.time.clone(),
        agent: first.entry.agent.clone(),
        summary: first.entry.summary.clone(),
        outcome,
        reverts: first.entry.reverts.clone(),
        reverted_by: reverted,
        files,
    }
}

/// Lines added and removed by a unified diff.
fn counts(diff: &str) -> (usize, usize) {
    let mut counts = (0, 0);
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with('+') {
            counts.0 += 1;
        } else if line.starts_with('-') {
            counts.1 += 1;
        }
    }
    counts
}

/// Which revert took back each entry: the newest applied revert naming it (by its id
/// or its write's), unless a later applied revert took that revert back in turn.
fn reverted_by(all: &[Journaled]) -> HashMap<String, String> {
    let mut taken: HashMap<String, String> = HashMap::new();
    let expand = |id: &String| -> Vec<String> {
        if all.iter().any(|journaled| &journaled.id == id) {
            return vec![id.clone()];
        }
        all.iter().filter(|journaled| &journaled.entry.write_id == id).map(|journaled| journaled.id.clone()).collect()
    };
    for journaled in all {
        let Some(reverts) = &journaled.entry.reverts else { continue };
        if !matches!(journaled.entry.outcome, Outcome::Applied | Outcome::ModifiedByEditor | Outcome::Partial) {
            continue;
        }
        for id in reverts {
            for id in expand(id) {
                // A revert of a revert brings the first change back.
                if let Some(reverted) = all.iter().find(|other| other.id == id)
                    && let Some(back) = &reverted.entry.reverts
                {
                    for restored in back.iter().flat_map(&expand) {
                        taken.remove(&restored);
                    }
                }
                taken.insert(id, journaled.entry.write_id.clone());
            }
        }
    }
    taken
}

/// The id of each document's newest entry (by the URI it has after the entry).
fn newest_of_uri(all: &[Journaled]) -> HashMap<&str, &str> {
    let mut newest = HashMap::new();
    for journaled in all {
        newest.insert(journaled.entry.uri.as_str(), journaled.id.as_str());
        if let Some(new_uri) = &journaled.entry.new_uri {
            newest.insert(new_uri.as_str(), journaled.id.as_str());
        }
    }
    newest
}

/// One reviewed mark, as kept beside the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    pub turn: String,
    pub uri: String,
    /// The file's newest entry when the mark was made.
    pub at: String,
    pub reviewed: bool,
    pub time: String,
}

/// The marks of some journals: the last one per turn and file.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    last: HashMap<(String, String), Mark>,
}

impl Marks {
    /// The marks kept beside these journals.
    pub fn read(journals: &[PathBuf]) -> Self {
        let mut marks = Self::default();
        for journal in journals {
            let Ok(text) = fs::read_to_string(marks_file(journal)) else { continue };
            for mark in text.lines().filter_map(|line| serde_json::from_str::<Mark>(line).ok()) {
                marks.last.insert((mark.turn.clone(), mark.uri.clone()), mark);
            }
        }
        marks
    }

    /// Whether the file is marked reviewed for the turn, and nothing changed it since.
    pub fn holds(&self, turn: &str, uri: &str, newest: Option<&str>) -> bool {
        self.last
            .get(&(turn.to_owned(), uri.to_owned()))
            .is_some_and(|mark| mark.reviewed && Some(mark.at.as_str()) == newest)
    }
}

/// Where the marks of a journal are kept.
pub fn marks_file(journal: &Path) -> PathBuf {
    let mut name = journal.file_stem().map(|stem| stem.to_os_string()).unwrap_or_default();
    name.push(".marks.jsonl");
    journal.with_file_name(name)
}

/// Marks (or unmarks) a file of a turn reviewed, at the file's newest entry. `None`
/// when the turn never touched the file.
pub fn mark(all: &[Journaled], turn: &str, uri: &str, reviewed: bool) -> io::Result<Option<Mark>> {
    let Some(journal) = all
        .iter()
        .find(|journaled| {
            journaled.turn == turn && (journaled.entry.uri == uri || journaled.entry.new_uri.as_deref() == Some(uri))
        })
        .map(|journaled| journaled.journal.clone())
    else {
        return Ok(None);
    };
    let newest = newest_of_uri(all);
    let Some(at) = newest.get(uri) else { return Ok(None) };
    let mark = Mark { turn: turn.to_owned(), uri: uri.to_owned(), at: (*at).to_owned(), reviewed, time: now_rfc3339() };
    let mut line = serde_json::to_vec(&mark).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut file = fs::OpenOptions::new().create(true).append(true).mode(0o600).open(marks_file(&journal))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    file.write_all(&line)?;
    Ok(Some(mark))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::journal::Source;

    fn entry(time: &str, write: &str, session: Option<&str>, turn: Option<&str>, uri: &str) -> Entry {
        Entry {
            time: time.into(),
            write_id: write.into(),
            source: Source::Editor,
            agent: "codex".into(),
            summary: format!("edit {uri}"),
            uri: uri.into(),
            workspace: None,
            base_rev: None,
            rev: Some("e1.2".into()),
            outcome: Outcome::Applied,
            reason: None,
            hunks_left_out: None,
            error_kind: None,
            message: None,
            diff: "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n".into(),
            editor_diff: None,
            commit: None,
            diagnostics: None,
            id: None,
            session: session.map(str::to_owned),
            turn: turn.map(str::to_owned),
            before: Some("b".repeat(64)),
            after: Some("a".repeat(64)),
            not_kept: None,
            operation: None,
            new_uri: None,
            reverts: None,
        }
    }

    fn journal_of(entries: &[Entry]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("p-0.jsonl");
        let text: String = entries.iter().map(|entry| serde_json::to_string(entry).expect("json") + "\n").collect();
        fs::write(&file, text).expect("write");
        (dir, file)
    }

    #[test]
    fn every_agent_and_file_is_a_choice_whatever_the_filters_and_bounds() {
        let by = |agent: &str, mut entry: Entry| {
            entry.agent = agent.into();
            entry
        };
        let mut moved = entry("2026-12-03T10:03:00Z", "w4", Some("s3"), None, "file:///p/a");
        moved.new_uri = Some("file:///p/c".into());
        let (_dir, file) = journal_of(&[
            by("claude-code", entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a")),
            by("claude-code", entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a")),
            by("claude-code", entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/b")),
            entry("2026-12-03T10:01:00Z", "w2", Some("s2"), None, "file:///p/b"),
            by("gemini", entry("2026-12-03T10:02:00Z", "w3", Some("s4"), None, "file:///p/b")),
            moved,
        ]);
        let all = read_all(&[file]).expect("read");
        let filter = Filter { agent: Some("gemini"), uri: Some("file:///p/b"), limit: Some(1), max_edits: Some(1) };
        let result = timeline(&all, &Marks::default(), &filter);
        assert_eq!(result.edits, 1);
        let choices = |choices: &[TimelineChoice]| -> Vec<(String, usize, String)> {
            choices
                .iter()
                .map(|choice| (choice.value.clone(), choice.edits, choice.latest[11..16].to_owned()))
                .collect()
        };
        let owned = |value: &str, edits, latest: &str| (value.to_owned(), edits, latest.to_owned());
        assert_eq!(
            choices(&result.agents),
            [owned("codex", 2, "10:03"), owned("gemini", 1, "10:02"), owned("claude-code", 1, "10:00")]
        );
        assert_eq!(
            choices(&result.files),
            [owned("file:///p/a", 2, "10:03"), owned("file:///p/c", 1, "10:03"), owned("file:///p/b", 3, "10:02")]
        );
    }

    #[test]
    fn turns_follow_the_agent_else_the_gap_rule() {
        let (_dir, file) = journal_of(&[
            entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a"),
            entry("2026-12-03T10:01:00Z", "w2", Some("s1"), None, "file:///p/b"),
            entry("2026-12-03T10:05:00Z", "w3", Some("s1"), None, "file:///p/a"),
            entry("2026-12-03T10:05:01Z", "w4", Some("s2"), Some("t9"), "file:///p/a"),
            entry("2026-12-03T10:05:02Z", "w5", Some("s2"), Some("t9"), "file:///p/b"),
        ]);
        let all = read_all(&[file]).expect("read");
        let turns: Vec<&str> = all.iter().map(|journaled| journaled.turn.as_str()).collect();
        assert_eq!(turns, ["auto:w1", "auto:w1", "auto:w3", "t9", "t9"]);
        let result = timeline(&all, &Marks::default(), &Filter::default());
        assert_eq!(result.sessions.len(), 2);
        assert_eq!(result.sessions[0].session, "s2");
        assert_eq!(
            result.sessions[1].turns.iter().map(|turn| turn.turn.as_str()).collect::<Vec<_>>(),
            ["auto:w3", "auto:w1"]
        );
        let older = &result.sessions[1].turns[1];
        assert_eq!(older.edits.iter().map(|edit| edit.write_id.as_str()).collect::<Vec<_>>(), ["w2", "w1"]);
        assert_eq!((older.edits[0].files[0].added, older.edits[0].files[0].removed), (2, 1));
        assert_eq!(older.edits[0].files[0].id, "w2.0");
    }

    #[test]
    fn legacy_entries_read_with_derived_ids_and_cannot_be_reverted() {
        let mut old = entry("2026-12-01T10:00:00Z", "w1", None, None, "file:///p/a");
        (old.before, old.after) = (None, None);
        let mut second = old.clone();
        second.uri = "file:///p/b".into();
        let (_dir, file) = journal_of(&[old, second]);
        let all = read_all(&[file]).expect("read");
        assert_eq!(all.iter().map(|journaled| journaled.id.as_str()).collect::<Vec<_>>(), ["w1.0", "w1.1"]);
        assert_eq!(all[0].session, "legacy:codex");
        let result = timeline(&all, &Marks::default(), &Filter::default());
        let file = &result.sessions[0].turns[0].edits[0].files[0];
        assert_eq!((file.revertible, file.why_not.as_deref()), (false, Some("legacy")));
    }

    #[test]
    fn a_revert_marks_what_it_took_back_and_a_revert_of_it_brings_it_back() {
        let mut revert = entry("2026-12-03T10:02:00Z", "w2", Some("s1"), None, "file:///p/a");
        revert.reverts = Some(vec!["w1".into()]);
        let (_dir, file) =
            journal_of(&[entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a"), revert.clone()]);
        let all = read_all(std::slice::from_ref(&file)).expect("read");
        let result = timeline(&all, &Marks::default(), &Filter::default());
        let edits = &result.sessions[0].turns[0].edits;
        assert_eq!(edits[1].reverted_by.as_deref(), Some("w2"));
        let mut redo = entry("2026-12-03T10:03:00Z", "w3", Some("s1"), None, "file:///p/a");
        redo.reverts = Some(vec!["w2.0".into()]);
        let (_dir2, file2) =
            journal_of(&[entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a"), revert, redo]);
        let all = read_all(&[file2]).expect("read");
        let result = timeline(&all, &Marks::default(), &Filter::default());
        let edits = &result.sessions[0].turns[0].edits;
        assert_eq!(edits[2].write_id, "w1");
        assert_eq!(edits[2].reverted_by, None);
        assert_eq!(edits[1].reverted_by.as_deref(), Some("w3"));
    }

    #[test]
    fn a_reviewed_mark_holds_until_the_file_changes_again() {
        let (_dir, file) = journal_of(&[entry("2026-12-03T10:00:00Z", "w1", Some("s1"), Some("t1"), "file:///p/a")]);
        let all = read_all(std::slice::from_ref(&file)).expect("read");
        assert!(mark(&all, "t1", "file:///p/a", true).expect("mark").is_some());
        assert!(mark(&all, "t1", "file:///p/zzz", true).expect("mark").is_none());
        let marks = Marks::read(std::slice::from_ref(&file));
        let result = timeline(&all, &marks, &Filter::default());
        assert!(result.sessions[0].turns[0].files[0].reviewed);
        let line =
            serde_json::to_string(&entry("2026-12-03T10:09:00Z", "w2", Some("s2"), None, "file:///p/a")).expect("json");
        fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("open")
            .write_all(format!("{line}\n").as_bytes())
            .expect("append");
        let all = read_all(std::slice::from_ref(&file)).expect("read");
        let result = timeline(&all, &Marks::read(&[file]), &Filter::default());
        let turn =
            result.sessions.iter().flat_map(|session| &session.turns).find(|turn| turn.turn == "t1").expect("t1");
        assert!(!turn.files[0].reviewed);
    }

    #[test]
    fn filters_keep_the_agent_and_the_file_asked_for() {
        let mut other = entry("2026-12-03T10:00:05Z", "w2", Some("s2"), None, "file:///p/b");
        other.agent = "claude-code".into();
        let (_dir, file) = journal_of(&[entry("2026-12-03T10:00:00Z", "w1", Some("s1"), None, "file:///p/a"), other]);
        let all = read_all(&[file]).expect("read");
        let by_agent = timeline(&all, &Marks::default(), &Filter { agent: Some("claude-code"), ..Filter::default() });
        assert_eq!(by_agent.sessions.len(), 1);
        assert_eq!(by_agent.sessions[0].agent, "claude-code");
        let by_file = timeline(&all, &Marks::default(), &Filter { uri: Some("file:///p/a"), ..Filter::default() });
        assert_eq!(by_file.sessions[0].session, "s1");
        let limited = timeline(&all, &Marks::default(), &Filter { limit: Some(1), ..Filter::default() });
        assert!(limited.truncated);
    }

    #[test]
    fn max_edits_keeps_the_newest_edits_and_counts_the_rest() {
        // s1: turn t1 (w1, w2), then s2: turn t2 (w3), then s1: turn t3 (w4, w5).
        let (_dir, file) = journal_of(&[
            entry("2026-12-03T10:00:00Z", "w1", Some("s1"), Some("t1"), "file:///p/a"),
            entry("2026-12-03T10:00:01Z", "w2", Some("s1"), Some("t1"), "file:///p/b"),
            entry("2026-12-03T10:00:02Z", "w3", Some("s2"), Some("t2"), "file:///p/a"),
            entry("2026-12-03T10:00:03Z", "w4", Some("s1"), Some("t3"), "file:///p/a"),
            entry("2026-12-03T10:00:04Z", "w5", Some("s1"), Some("t3"), "file:///p/c"),
        ]);
        let all = read_all(&[file]).expect("read");
        let whole = timeline(&all, &Marks::default(), &Filter::default());
        assert_eq!((whole.edits, whole.truncated), (5, false));
        let shape = |result: &TimelineResult| -> Vec<(String, usize, Vec<String>, usize)> {
            result
                .sessions
                .iter()
                .flat_map(|session| {
                    session.turns.iter().map(|turn| {
                        let edits = turn.edits.iter().map(|edit| edit.write_id.clone()).collect();
                        (turn.turn.clone(), turn.edit_count, edits, turn.files.len())
                    })
                })
                .collect()
        };
        let cut = timeline(&all, &Marks::default(), &Filter { max_edits: Some(3), ..Filter::default() });
        assert_eq!((cut.edits, cut.truncated), (5, true));
        assert_eq!(
            shape(&cut),
            [
                ("t3".to_owned(), 2, vec!["w5".to_owned(), "w4".to_owned()], 2),
                ("t2".to_owned(), 1, vec!["w3".to_owned()], 1)
            ],
            "t1 is older than the third edit: left out"
        );
        let one = timeline(&all, &Marks::default(), &Filter { max_edits: Some(1), ..Filter::default() });
        assert_eq!(
            shape(&one),
            [("t3".to_owned(), 2, vec!["w5".to_owned()], 2)],
            "the cut turn counts and lists all its files"
        );
        let enough = timeline(&all, &Marks::default(), &Filter { max_edits: Some(5), ..Filter::default() });
        assert_eq!((shape(&enough), enough.truncated), (shape(&whole), false));
        let filtered = timeline(
            &all,
            &Marks::default(),
            &Filter { uri: Some("file:///p/a"), max_edits: Some(2), ..Filter::default() },
        );
        assert_eq!(filtered.edits, 3, "the filter first, then the bound");
        assert_eq!(
            shape(&filtered),
            [("t3".to_owned(), 1, vec!["w4".to_owned()], 1), ("t2".to_owned(), 1, vec!["w3".to_owned()], 1)]
        );
    }

    #[test]
    fn times_read_back_as_the_clock_wrote_them() {
        assert_eq!(seconds_of(&crate::service::clock::format_unix_seconds(1_764_756_062)), 1_764_756_062);
        assert_eq!(seconds_of("nonsense"), 0);
    }
}
