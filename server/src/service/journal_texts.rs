//! The texts the journal keeps to undo a write: each document's whole text before and
//! after. An entry names its texts after itself (`<entry id>.before`, `.after`), so
//! journaling an edit costs no more than it did before texts were kept: the name is
//! known at once, and the text (a cheap clone of the rope) goes to one background
//! thread, which looks for work every 100 ms (every second when idle; at once when a
//! reader waits) so that handing it a text wakes nothing. That thread hashes it
//! (SHA-256), writes it once under its hash in `journal/texts/<2 hex>/<62 hex>`
//! (temporary file, then rename) and links the entry's name to it in
//! `journal/texts/entries/` (a hard link; a copy where links are not possible). A text
//! shared by two entries (one write's after, the next one's before) is therefore kept
//! once on disk. Reusing a text touches it, so that [`KeptTexts::prune`] deletes only
//! texts no entry has used for [`KeepLimits::keep_days`] (the links share the text's
//! time). [`KeptTexts::flush`] waits for the thread, for a reader in the same process
//! and before a process ends. Files are `0600`, the directories `0700`.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
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

/// Which of an entry's two texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

impl Side {
    fn suffix(self) -> &'static str {
        match self {
            Self::Before => "before",
            Self::After => "after",
        }
    }
}

/// One text for the background writer: where its content goes, the entry's link to
/// it, and the text.
struct Job {
    texts: PathBuf,
    link: PathBuf,
    text: Rope,
}

/// A text named by [`KeptTexts::keep`], not yet handed to the background writer.
pub struct PendingText(Job);

impl std::fmt::Debug for PendingText {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_tuple("PendingText").field(&self.0.link).finish()
    }
}

/// How often the background writer looks for texts when nobody waits for it, while
/// edits come; after [`WRITER_IDLE_PERIODS`] looks that found nothing, it looks every
/// [`WRITER_IDLE_PERIOD`] instead.
const WRITER_PERIOD: Duration = Duration::from_millis(100);
const WRITER_IDLE_PERIODS: u32 = 50;
const WRITER_IDLE_PERIOD: Duration = Duration::from_secs(1);

/// Texts waiting for the background writer, and how many are not yet written.
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    unwritten: usize,
    /// Someone waits in [`KeptTexts::flush`]: write now.
    hurry: bool,
}

/// The queue, shared with the one background thread. Handing it a text takes a lock
/// and no system call: waking a sleeping thread on every edit costs the edit more (tens
/// of microseconds on a virtual machine) than the rest of journaling it, so the writer
/// wakes by itself every [`WRITER_PERIOD`] (every [`WRITER_IDLE_PERIOD`] when no edit
/// came for a while), or at once for [`KeptTexts::flush`].
struct Writer {
    queue: Mutex<Queue>,
    /// Signalled when the queue needs the writer ([`KeptTexts::flush`]).
    work: Condvar,
    /// Signalled when texts have been written.
    written: Condvar,
}

fn lock(queue: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn writer() -> &'static Arc<Writer> {
    static WRITER: OnceLock<Arc<Writer>> = OnceLock::new();
    WRITER.get_or_init(|| {
        let writer = Arc::new(Writer { queue: Mutex::default(), work: Condvar::new(), written: Condvar::new() });
        let shared = Arc::clone(&writer);
        let spawned = std::thread::Builder::new().name("journal-texts".into()).spawn(move || {
            let mut idle = 0u32;
            loop {
                let period = if idle < WRITER_IDLE_PERIODS { WRITER_PERIOD } else { WRITER_IDLE_PERIOD };
                let jobs = {
                    let queue = lock(&shared.queue);
                    let (mut queue, _) = shared
                        .work
                        .wait_timeout_while(queue, period, |queue| !queue.hurry)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    queue.hurry = false;
                    std::mem::take(&mut queue.jobs)
                };
                idle = if jobs.is_empty() { idle.saturating_add(1) } else { 0 };
                for job in jobs {
                    if let Err(error) = write_job(&job) {
                        tracing::warn!("cannot keep the journal text {}: {error}", job.link.display());
                    }
                    let mut queue = lock(&shared.queue);
                    queue.unwritten = queue.unwritten.saturating_sub(1);
                    shared.written.notify_all();
                }
            }
        });
        if let Err(error) = spawned {
            tracing::warn!("cannot start the journal's text writer: {error}");
        }
        writer
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

    /// The SHA-256 (hex) a text's content is kept under.
    pub fn hash_of(text: &Rope) -> String {
        let mut hasher = Sha256::new();
        for chunk in text.chunks() {
            hasher.update(chunk.as_bytes());
        }
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }

    fn content_path(&self, hash: &str) -> Option<PathBuf> {
        let valid = hash.len() == 64 && hash.bytes().all(|byte| byte.is_ascii_hexdigit());
        valid.then(|| self.dir.join(&hash[..2]).join(&hash[2..]))
    }

    /// Where the text a name stands for is: an entry's name (`<id>.before|after`) or,
    /// for texts kept under their hash alone, the hash.
    fn path_of(&self, name: &str) -> Option<PathBuf> {
        if let Some(path) = self.content_path(name) {
            return Some(path);
        }
        let valid = !name.is_empty()
            && !name.starts_with('.')
            && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_.".contains(&byte))
            && (name.ends_with(".before") || name.ends_with(".after"));
        valid.then(|| self.dir.join("entries").join(name))
    }

    /// Names `text` as the `side` of entry `entry_id` and returns the name with the
    /// text to hand to [`Self::write_later`]. Costs a clone of the rope: no hashing,
    /// no writing.
    pub fn keep(&self, entry_id: &str, side: Side, text: &Rope) -> Result<(String, Option<PendingText>), NotKept> {
        if text.len_bytes() > self.limits.max_text_bytes {
            return Err(NotKept::TooLarge);
        }
        let name = format!("{entry_id}.{}", side.suffix());
        let pending =
            self.path_of(&name).map(|link| PendingText(Job { texts: self.dir.clone(), link, text: text.clone() }));
        Ok((name, pending))
    }

    /// Hands texts named by [`Self::keep`] to the background writer, which writes them
    /// within a second. Called after the journal line that names them is appended.
    pub fn write_later(pending: Vec<PendingText>) {
        if pending.is_empty() {
            return;
        }
        let writer = writer();
        let mut queue = lock(&writer.queue);
        queue.unwritten += pending.len();
        queue.jobs.extend(pending.into_iter().map(|PendingText(job)| job));
    }

    /// Waits until every text handed to [`Self::write_later`] in this process is on
    /// disk (at most `limit`).
    pub fn flush(limit: Duration) {
        let writer = writer();
        let mut queue = lock(&writer.queue);
        if queue.unwritten == 0 {
            return;
        }
        queue.hurry = true;
        writer.work.notify_all();
        let _ = writer.written.wait_timeout_while(queue, limit, |queue| queue.unwritten > 0);
    }

    /// The text kept under `name`, if it still is.
    pub fn load(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.path_of(name)?).ok()
    }

    /// Deletes the texts (and entries' links to them) no entry has used for the
    /// configured number of days. Returns how many files were deleted.
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

    /// Prunes in the background (a server's start does not wait for it).
    pub fn prune_in_background(&self) {
        let texts = self.clone();
        let spawned = std::thread::Builder::new().name("journal-prune".into()).spawn(move || {
            let deleted = texts.prune();
            if deleted > 0 {
                tracing::info!("journal: deleted {deleted} kept texts unused for {} days", texts.limits.keep_days);
            }
        });
        if let Err(error) = spawned {
            tracing::warn!("cannot start pruning the journal's texts: {error}");
        }
    }
}

/// Writes a job's text under its hash (or marks an existing one as used now), then
/// links the entry's name to it.
fn write_job(job: &Job) -> io::Result<()> {
    let hash = KeptTexts::hash_of(&job.text);
    let content = job.texts.join(&hash[..2]).join(&hash[2..]);
    write_text(&content, &job.text)?;
    let folder = job.link.parent().ok_or_else(|| io::Error::other("a kept text's link has no folder"))?;
    fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)?;
    match fs::hard_link(&content, &job.link) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(_) => write_text(&job.link, &job.text),
    }
}

/// Writes a text at `path`, or marks an existing one as used now.
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
    fn a_text_is_kept_once_under_its_hash_linked_from_each_entry_and_loads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let texts = KeptTexts::new(dir.path(), KeepLimits::default());
        let text = Rope::from_str("one\r\ntwo 😀\n");
        let (after, first) = texts.keep("w1.0", Side::After, &text).expect("kept");
        let (before, second) = texts.keep("w2.0", Side::Before, &text).expect("kept");
        KeptTexts::write_later(first.into_iter().chain(second).collect());
        assert_eq!((after.as_str(), before.as_str()), ("w1.0.after", "w2.0.before"));
        KeptTexts::flush(Duration::from_secs(5));
        assert_eq!(texts.load(&after).as_deref(), Some("one\r\ntwo 😀\n"));
        assert_eq!(texts.load(&before).as_deref(), Some("one\r\ntwo 😀\n"));
        let content = texts.content_path(&KeptTexts::hash_of(&text)).expect("path");
        let meta = fs::metadata(&content).expect("meta");
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&meta), 3, "kept once, linked from both entries");
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777, 0o600);
        assert!(texts.load("../../etc/passwd").is_none());
        assert!(texts.load("../entries/w1.0.after").is_none());
    }

    #[test]
    fn a_text_over_the_limit_is_not_kept_and_old_texts_are_pruned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let texts = KeptTexts::new(dir.path(), KeepLimits { max_text_bytes: 4, keep_days: 1 });
        assert!(matches!(texts.keep("w1.0", Side::Before, &Rope::from_str("too long")), Err(NotKept::TooLarge)));
        let (name, pending) = texts.keep("w1.0", Side::After, &Rope::from_str("ok")).expect("kept");
        KeptTexts::write_later(pending.into_iter().collect());
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
        assert_eq!(texts.prune(), 2, "the text and the entry's link to it");
        assert!(texts.load(&name).is_none());
    }
}
