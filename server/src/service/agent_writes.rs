//! Writes an agent announced: after the person reviewed its proposal in the buffer
//! ([`crate::ide::proposal`]), the agent writes the decided text to disk itself. Until
//! that write arrives (or the announcement expires) it is expected: when the disk shows
//! it, it is the person's own decision coming back, never a change to offer.
//!
//! This is only the record; [`crate::ide::agent_write`] announces, watches for and
//! withdraws writes, and [`crate::service::external`] asks it about every change on disk.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use verbatim_engine::doc_key::DocKey;

/// How long an announced write is waited for.
pub const EXPECTED_WRITE_TTL: Duration = Duration::from_secs(120);

/// The announced writes, by document: the text and until when it is expected.
#[derive(Debug, Default)]
pub struct AgentWrites {
    /// Expired entries are dropped at the next announcement.
    expected: Mutex<HashMap<DocKey, (String, Instant)>>,
}

impl AgentWrites {
    fn lock(&self) -> MutexGuard<'_, HashMap<DocKey, (String, Instant)>> {
        self.expected.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that `text` is about to be written to `key`.
    pub fn announce(&self, key: &DocKey, text: String) {
        let mut expected = self.lock();
        let now = Instant::now();
        expected.retain(|_, (_, until)| *until > now);
        expected.insert(key.clone(), (text, now + EXPECTED_WRITE_TTL));
    }

    /// Whether a write to `key` is still announced.
    pub fn awaits(&self, key: &DocKey) -> bool {
        self.lock().get(key).is_some_and(|(_, until)| *until > Instant::now())
    }

    /// Whether `disk` is the write announced for `key`; the announcement is used up.
    pub fn take_if_expected(&self, key: &DocKey, disk: &str) -> bool {
        let mut expected = self.lock();
        match expected.get(key) {
            Some((text, until)) if text == disk && *until > Instant::now() => {
                expected.remove(key);
                true
            }
            _ => false,
        }
    }

    /// The write to `key` is no longer expected.
    pub fn forget(&self, key: &DocKey) {
        self.lock().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announced_write_is_taken_once_and_only_with_its_text() {
        let writes = AgentWrites::default();
        let key = DocKey::parse("/w/a.txt").expect("a path");
        assert!(!writes.awaits(&key));
        writes.announce(&key, "new\n".into());
        assert!(writes.awaits(&key));
        assert!(!writes.take_if_expected(&key, "other\n"));
        assert!(writes.take_if_expected(&key, "new\n"));
        assert!(!writes.take_if_expected(&key, "new\n"), "used up");
        writes.announce(&key, "new\n".into());
        writes.forget(&key);
        assert!(!writes.awaits(&key));
    }
}
