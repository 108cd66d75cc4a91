//! Replacing a file on disk atomically: the new bytes go to a temporary file in the
//! same directory (same permissions, and owner when we may set it), which is
//! fsynced, then renamed over the target once the target is checked to still hold
//! the revision the edit was planned against. A reader sees the old file or the new
//! one, never a mix; a crash leaves at worst a stray temporary file.
//!
//! Writing happens in two steps so that a batch can stage every file first and
//! rename only when all are staged and all revisions still match.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use verbatim_engine::rev::Rev;

/// Why a staged file was not put in place.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The target no longer holds the planned-against revision (`None`: it is gone,
    /// or, for a file being created, `Some`: it exists now).
    #[error("the file changed on disk")]
    Changed { now: Option<Rev> },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// New content written to a temporary file beside its target, not yet in place.
#[derive(Debug)]
pub struct StagedFile {
    target: PathBuf,
    temporary: PathBuf,
    /// The revision the target must still have; `None`: it must not exist.
    expected: Option<Rev>,
    new_rev: Rev,
    committed: bool,
}

/// Writes `bytes` to a temporary file beside `target`, with the target's permissions.
pub fn stage(target: &Path, bytes: &[u8], expected: Option<Rev>) -> io::Result<StagedFile> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir =
        target.parent().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no directory"))?;
    let name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary =
        dir.join(format!(".{name}.verbatim-{}-{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let existing = fs::metadata(target).ok();
    // From here on, `Drop` removes the temporary file unless it is committed.
    let staged =
        StagedFile { target: target.to_owned(), temporary, expected, new_rev: Rev::of_bytes(bytes), committed: false };
    // A new file gets the usual 0666 minus the umask; a replaced one first gets 0600,
    // then exactly the target's mode.
    let create_mode = if existing.is_some() { 0o600 } else { 0o666 };
    let mut file = fs::OpenOptions::new().write(true).create_new(true).mode(create_mode).open(&staged.temporary)?;
    file.write_all(bytes)?;
    if let Some(metadata) = &existing {
        // Owner first: changing it clears set-id bits, which the mode then restores.
        keep_owner(&file, metadata);
        file.set_permissions(fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
    }
    file.sync_all()?;
    Ok(staged)
}

/// Gives the temporary file the target's owner and group when they differ from ours
/// (only possible for root; otherwise the attempt is a harmless no-op failure).
fn keep_owner(file: &File, metadata: &fs::Metadata) {
    let (uid, gid) = (metadata.uid(), metadata.gid());
    if uid == rustix::process::geteuid().as_raw() && gid == rustix::process::getegid().as_raw() {
        return;
    }
    let owner = rustix::fs::Uid::from_raw(uid);
    let group = rustix::fs::Gid::from_raw(gid);
    if let Err(error) = rustix::fs::fchown(file, Some(owner), Some(group)) {
        tracing::debug!("cannot keep the owner {uid}:{gid}: {error}");
    }
}

impl StagedFile {
    /// The revision of the new content.
    pub fn new_rev(&self) -> Rev {
        self.new_rev
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Checks that the target still holds the expected revision.
    pub fn check(&self) -> Result<(), CommitError> {
        let now = match fs::read(&self.target) {
            Ok(bytes) => Some(Rev::of_bytes(&bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(CommitError::Io(error)),
        };
        if now == self.expected { Ok(()) } else { Err(CommitError::Changed { now }) }
    }

    /// Re-checks the target, then puts the new content in place.
    pub fn commit(mut self) -> Result<Rev, CommitError> {
        self.check()?;
        match self.expected {
            Some(_) => fs::rename(&self.temporary, &self.target)?,
            // Creating: never replace a file that appeared since the check.
            None => rustix::fs::renameat_with(
                rustix::fs::CWD,
                &self.temporary,
                rustix::fs::CWD,
                &self.target,
                rustix::fs::RenameFlags::NOREPLACE,
            )
            .map_err(|error| match error {
                rustix::io::Errno::EXIST => {
                    CommitError::Changed { now: fs::read(&self.target).ok().map(|bytes| Rev::of_bytes(&bytes)) }
                }
                other => CommitError::Io(other.into()),
            })?,
        }
        self.committed = true;
        if let Some(dir) = self.target.parent() {
            // Make the rename itself durable.
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(self.new_rev)
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_file_replaces_the_target_keeping_its_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("a.sh");
        fs::write(&target, "old").expect("write");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o751)).expect("chmod");
        let staged = stage(&target, b"new", Some(Rev::of_bytes(b"old"))).expect("stage");
        assert_eq!(fs::read(&target).expect("read"), b"old");
        assert_eq!(staged.commit().expect("commit"), Rev::of_bytes(b"new"));
        assert_eq!(fs::read(&target).expect("read"), b"new");
        assert_eq!(fs::metadata(&target).expect("meta").mode() & 0o7777, 0o751);
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1, "a temporary file was left behind");
    }

    #[test]
    fn a_target_that_moved_on_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("a.txt");
        fs::write(&target, "old").expect("write");
        let staged = stage(&target, b"new", Some(Rev::of_bytes(b"old"))).expect("stage");
        fs::write(&target, "someone else").expect("write");
        assert!(matches!(staged.commit(), Err(CommitError::Changed { now: Some(_) })));
        assert_eq!(fs::read(&target).expect("read"), b"someone else");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
        let created = dir.path().join("new.txt");
        let staged = stage(&created, b"x", None).expect("stage");
        fs::write(&created, "raced").expect("write");
        assert!(matches!(staged.commit(), Err(CommitError::Changed { .. })));
        assert_eq!(fs::read(&created).expect("read"), b"raced");
    }
}
