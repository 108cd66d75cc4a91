//! The journals as the server last read them, so that a timeline, an entry or a revert
//! reads only what was appended since: each journal file is known by its identity,
//! length and time; a file that only grew is read from where the last read stopped (a
//! line still being written waits for the next read), one that was replaced, shrank or
//! vanished is read again whole. The entries of every file, named and in order
//! ([`timeline::read_all`]'s result), are shared with the callers until the next change.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::service::journal::Entry;
use crate::service::timeline::{self, Journaled};

/// What was read of one journal file.
#[derive(Debug, Default)]
struct FileState {
    /// Device and inode: a file replaced under the same name is read again.
    identity: (u64, u64),
    len: u64,
    modified: Option<SystemTime>,
    /// Bytes read up to the end of the last whole line.
    consumed: u64,
    /// Entries read so far (the next entry's place).
    lines: usize,
    /// Documents of each write seen so far (to name entries without ids).
    places: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct Cached {
    files: Vec<PathBuf>,
    states: Vec<Option<FileState>>,
    all: Arc<Vec<Journaled>>,
}

/// The journals last read, behind a lock (one reader at a time; reads are short).
#[derive(Debug, Default)]
pub struct JournalCache {
    cached: Mutex<Option<Cached>>,
}

impl JournalCache {
    /// Every entry of `files`, named and in time order, as [`timeline::read_all`] gives
    /// them.
    pub fn read(&self, files: &[PathBuf]) -> io::Result<Arc<Vec<Journaled>>> {
        let mut guard = self.cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cached = match guard.as_mut() {
            Some(cached) if cached.files == files => cached,
            _ => guard.insert(Cached {
                files: files.to_vec(),
                states: files.iter().map(|_| None).collect(),
                all: Arc::default(),
            }),
        };
        let mut appended: Vec<Journaled> = Vec::new();
        let mut whole_again = false;
        for (index, file) in files.iter().enumerate() {
            let state = &mut cached.states[index];
            let meta = match fs::metadata(file) {
                Ok(meta) => Some(meta),
                Err(error) if error.kind() == io::ErrorKind::NotFound => None,
                Err(error) => return Err(error),
            };
            match (meta, state.as_mut()) {
                (None, None) => {}
                (None, Some(_)) => {
                    *state = None;
                    whole_again = true;
                }
                (Some(meta), Some(known))
                    if known.identity == (meta.dev(), meta.ino())
                        && known.len == meta.len()
                        && known.modified == meta.modified().ok() => {}
                (Some(meta), Some(known)) if known.identity == (meta.dev(), meta.ino()) && meta.len() > known.len => {
                    appended.extend(read_from(file, index, known, &meta)?);
                }
                (Some(_), Some(_)) => {
                    *state = None;
                    whole_again = true;
                }
                (Some(meta), None) => {
                    let mut known = FileState { identity: (meta.dev(), meta.ino()), ..FileState::default() };
                    appended.extend(read_from(file, index, &mut known, &meta)?);
                    *state = Some(known);
                }
            }
        }
        if whole_again {
            // Read every file again from its start.
            cached.states = files.iter().map(|_| None).collect();
            cached.all = Arc::default();
            drop(guard);
            return self.read(files);
        }
        if !appended.is_empty() {
            let all = Arc::make_mut(&mut cached.all);
            all.extend(appended);
            timeline::put_in_order(all);
        }
        Ok(Arc::clone(&cached.all))
    }
}

/// Reads `file` from where `known` stopped to its last whole line, and notes how far.
fn read_from(file: &Path, index: usize, known: &mut FileState, meta: &fs::Metadata) -> io::Result<Vec<Journaled>> {
    let mut handle = match fs::File::open(file) {
        Ok(handle) => handle,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    handle.seek(SeekFrom::Start(known.consumed))?;
    let mut bytes = Vec::new();
    handle.read_to_end(&mut bytes)?;
    let whole = bytes.iter().rposition(|&byte| byte == b'\n').map_or(0, |end| end + 1);
    let text = String::from_utf8_lossy(&bytes[..whole]);
    let entries: Vec<Entry> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let count = entries.len();
    let named = timeline::name_entries(entries, file, index, known.lines, &mut known.places);
    known.lines += count;
    known.consumed += whole as u64;
    // A line still being written (after the last newline) is read again next time: the
    // file is then longer than what was consumed.
    known.len = known.consumed;
    known.modified = meta.modified().ok();
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(write: &str, time: &str) -> String {
        format!(
            "{{\"time\":\"{time}\",\"writeId\":\"{write}\",\"source\":\"editor\",\"agent\":\"a\",\"summary\":\"s\",\
             \"uri\":\"file:///p/a\",\"workspace\":null,\"baseRev\":null,\"rev\":\"r\",\"outcome\":\"applied\",\"diff\":\"\"}}\n"
        )
    }

    fn ids(all: &[Journaled]) -> Vec<String> {
        all.iter().map(|journaled| journaled.id.clone()).collect()
    }

    #[test]
    fn reads_what_was_appended_waits_for_a_torn_line_and_rereads_a_replaced_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.jsonl");
        fs::write(&path, line("w1", "2026-01-01T00:00:01Z")).expect("write");
        let cache = JournalCache::default();
        let files = vec![path.clone()];
        assert_eq!(ids(&cache.read(&files).expect("read")), ["w1.0"]);
        let first = cache.read(&files).expect("read");
        assert!(Arc::ptr_eq(&first, &cache.read(&files).expect("read")), "unchanged: the same entries, not read again");
        drop(first);

        let mut file = fs::OpenOptions::new().append(true).open(&path).expect("open");
        let next = line("w1", "2026-01-01T00:00:02Z");
        file.write_all(&next.as_bytes()[..20]).expect("torn");
        assert_eq!(ids(&cache.read(&files).expect("read")), ["w1.0"], "a torn line waits");
        file.write_all(&next.as_bytes()[20..]).expect("rest");
        file.write_all(line("w2", "2026-01-01T00:00:00Z").as_bytes()).expect("w2");
        let all = cache.read(&files).expect("read");
        assert_eq!(ids(&all), ["w2.0", "w1.0", "w1.1"], "appended entries are named on and put in time order");
        assert_eq!(ids(&all), ids(&timeline::read_all(&files).expect("read_all")), "as a whole read gives them");
        drop(all);

        let replaced = dir.path().join("new.jsonl");
        fs::write(&replaced, line("w9", "2026-01-01T00:00:09Z")).expect("write");
        fs::rename(&replaced, &path).expect("rename");
        assert_eq!(ids(&cache.read(&files).expect("read")), ["w9.0"]);
        fs::remove_file(&path).expect("remove");
        assert!(cache.read(&files).expect("read").is_empty());
    }
}
