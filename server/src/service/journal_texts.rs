//! The texts the journal keeps to undo a write: each document's whole text before and
//! after, in `journal/texts/<2 hex>/<62 hex>`, named by its SHA-256, so a text shared
//! by two entries (one write's after, the next one's before) is kept once.
//!
//! Hashing is done on the writer's path (SHA-256 with the CPU's SHA extensions costs
//! about 0.2 ms for 400 KB); writing the files is not: [`KeptTexts::keep`] hands them to
//! one background thread, which writes each new text (temporary file, then rename)
//! and touches an existing one, so that [`KeptTexts::prune`] deletes only texts no entry
//! has used for [`KeepLimits::keep_days`]. [`KeptTexts::flush`] waits for the thread, for
//! a reader in the same process. Files are `0600`, the directories `0700`.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use ropey::Rope;
use sha2::{Digest, Sha256};

/// Environment variable: a text longer than this many bytes is not kept.
pub const MAX_TEXT_BYTES_ENV: &str = "VERBATIM_JOURNAL_MAX_TEXT_BYTES";
/// Environment variable: texts unused for this many days are deleted when a server starts.
pub const KEEP_DAYS_ENV: &str = "VERBATIM_JOURNAL_KEEP_DAYS";

/// How much is kept, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepLimits {
    pub max_text_bytes: usize,
    pub keep_days: u64,
}

impl Default for KeepLimits {
    fn default() -> Self {
        Self { max_text_bytes: 8 * 1024 * 1024, keep_days: 30 }
    }
}

impl KeepLimits {
    /// The defaults, overridden by [`MAX_TEXT_BYTES_ENV`] and [`KEEP_DAYS_ENV`]; a value
    /// that is not a number is ignored with a warning.
    pub fn from_env() -> Self {
        let mut limits = Self::default();
        let read = |name: &str| {
            let value = std::env::var(name).ok()?;
            match value.trim().parse::<u64>() {
                Ok(number) => Some(number),
                Err(_) => {
                    tracing::warn!("{name}={value:?} is not a whole number; using the default");
                    None
                }
            }
        };
        if let Some(bytes) = read(MAX_TEXT_BYTES_ENV) {
            limits.max_text_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        if let Some(days) = read(KEEP_DAYS_ENV) {
            limits.keep_days = days;
        }
        limits
    }
}

/// Why a text was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotKept {
    TooLarge,
}

/// The kept texts under one journal directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptTexts {
    dir: PathBuf,
    limits: KeepLimits,
}

/// Texts waiting for the background writer, and the count not yet written.
struct Writer {
    send: Mutex<mpsc::Sender<(PathBuf, Rope)>>,
    queued: Arc<(Mutex<usize>, Condvar)>,
}

fn writer() -> &'static Writer {
    static WRITER: OnceLock<Writer> = OnceLock::new();
    WRITER.get_or_init(|| {
        let (send, receive) = mpsc::channel::<(PathBuf, Rope)>();
        let queued = Arc::new((Mutex::new(0usize), Condvar::new()));
        let done = Arc::clone(&queued);
        let spawned = std::thread::Builder::new().name("journal-texts".into()).spawn(move || {
            for (path, text) in receive {
                if let Err(error) = write_text(&path, &text) {
                    tracing::warn!("cannot keep the journal text {}: {error}", path.display());
                }
                let (count, changed) = &*done;
                let mut count = count.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                *count = count.saturating_sub(1);
                changed.notify_all();
            }
        });
        if let Err(error) = spawned {
            tracing::warn!("cannot start the journal's text writer: {error}");
        }
        Writer { send: Mutex::new(send), queued }
    })
}

impl KeptTexts {
    /// The texts of the journals in `journal_dir`.
    pub fn new(journal_dir: &Path, limits: KeepLimits) -> Self {
        Self { dir: journal_dir.join("texts"), limits }
    }

    pub fn limits(&self) -> KeepLimits {
        self.limits
    }

    /// The name (SHA-256, hex) a text is kept under.
    pub fn name_of(text: &Rope) -> String {
        let mut hasher = Sha256::new();
        for chunk in text.chunks() {
            hasher.update(chunk.as_bytes());
        }
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }

    fn path_of(&self, name: &str) -> Option<PathBuf> {
        let valid = name.len() == 64 && name.bytes().all(|byte| byte.is_ascii_hexdigit());
        valid.then(|| self.dir.join(&name[..2]).join(&name[2..]))
    }

    /// Keeps `text` (written in the background) and returns its name.
    pub fn keep(&self, text: &Rope) -> Result<String, NotKept> {
        if text.len_bytes() > self.limits.max_text_bytes {
            return Err(NotKept::TooLarge);
        }
        let name = Self::name_of(text);
        if let Some(path) = self.path_of(&name) {
            let writer = writer();
            let (count, _) = &*writer.queued;
            *count.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
            let sent = writer.send.lock().unwrap_or_else(std::sync::PoisonError::into_inner).send((path, text.clone()));
            if sent.is_err() {
                *count.lock().unwrap_or_else(std::sync::PoisonError::into_inner) -= 1;
            }
        }
        Ok(name)
    }

    /// Waits until every text handed to [`Self::keep`] in this process is on disk (at
    /// most `limit`).
    pub fn flush(limit: Duration) {
        let (count, changed) = &*writer().queued;
        let count = count.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = changed.wait_timeout_while(count, limit, |count| *count > 0);
    }

    /// The text kept under `name`, if it still is.
    pub fn load(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.path_of(name)?).ok()
    }

    /// Deletes the texts no entry has used for the configured number of days.
    /// Returns how many were deleted.
    pub fn prune(&self) -> usize {
        let Some(cutoff) = SystemTime::now().checked_sub(Duration::from_secs(self.limits.keep_days * 86_400)) else {
            return 0;
        };
        let mut deleted = 0;
        let Ok(folders) = fs::read_dir(&self.dir) else { return 0 };
        for folder in folders.flatten() {
            let Ok(files) = fs::read_dir(folder.path()) else { continue };
            for file in files.flatten() {
                let old = file.metadata().and_then(|meta| meta.modified()).is_ok_and(|modified| modified < cutoff);
                if old && fs::remove_file(file.path()).is_ok() {
                    deleted += 1;
                }
            }
        }
        deleted
    }
}

/// Writes a text under its name, or marks an existing one as used now.
fn write_text(path: &Path, text: &Rope) -> io::Result<()> {
    if path.exists() {
        let now = fs::FileTimes::new().set_modified(SystemTime::now());
        return fs::File::options().write(true).open(path)?.set_times(now);
    }
    let folder = path.parent().ok_or_else(|| io::Error::other("a kept text has no folder"))?;
    fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)?;
    let temporary = folder.join(format!(
        ".{}.{}",
        std::process::id(),
        path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned())
    ));
    {
        let mut file = fs::OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(&temporary)?;
        for chunk in text.chunks() {
            file.write_all(chunk.as_bytes())?;
        }
    }
    fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_kept_once_under_its_hash_and_loads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let texts = KeptTexts::new(dir.path(), KeepLimits::default());
        let text = Rope::from_str("one\r\ntwo 😀\n");
        let name = texts.keep(&text).expect("kept");
        assert_eq!(texts.keep(&text).expect("kept"), name);
        KeptTexts::flush(Duration::from_secs(5));
        assert_eq!(texts.load(&name).as_deref(), Some("one\r\ntwo 😀\n"));
        let path = texts.path_of(&name).expect("path");
        let mode = fs::metadata(&path).expect("meta").permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o600);
        assert!(texts.load("../../etc/passwd").is_none());
    }

    #[test]
    fn a_text_over_the_limit_is_not_kept_and_old_texts_are_pruned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let texts = KeptTexts::new(dir.path(), KeepLimits { max_text_bytes: 4, keep_days: 1 });
        assert_eq!(texts.keep(&Rope::from_str("too long")), Err(NotKept::TooLarge));
        let name = texts.keep(&Rope::from_str("ok")).expect("kept");
        KeptTexts::flush(Duration::from_secs(5));
        assert_eq!(texts.prune(), 0);
        let path = texts.path_of(&name).expect("path");
        let old = SystemTime::now() - Duration::from_secs(3 * 86_400);
        fs::File::options()
            .write(true)
            .open(&path)
            .expect("open")
            .set_times(fs::FileTimes::new().set_modified(old))
            .expect("times");
        assert_eq!(texts.prune(), 1);
        assert!(texts.load(&name).is_none());
    }
}
