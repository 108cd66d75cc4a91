//! Lock files that make headless writers of one file take turns, across processes.
//!
//! Each file (by its resolved path) has a lock file in `<runtime dir>/locks/`, named
//! by a hash of the path, so nothing is ever added to the user's project. A writer
//! holds an exclusive `flock` on it from its snapshot to its rename; a second writer
//! blocks until then and snapshots the new text, so no update is lost. Several files
//! are locked in sorted order, so two batches never wait for each other. The lock
//! files stay (removing one could let two writers lock different inodes); they are
//! empty and live in the runtime directory, which the system clears.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::service::discovery::{prepare_dir, runtime_dir};

/// An exclusive lock, released when dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Where lock files live by default.
pub fn default_lock_dir() -> PathBuf {
    runtime_dir().join("locks")
}

impl FileLock {
    /// Blocks until this process holds the lock of `path` (a resolved path).
    pub fn acquire(dir: &Path, path: &Path) -> io::Result<Self> {
        prepare_dir(dir)?;
        let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
        let name: String = digest[..16].iter().map(|byte| format!("{byte:02x}")).collect();
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join(format!("{name}.lock")))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(Self { _file: file })
    }

    /// Locks every path, in sorted order, each once.
    pub fn acquire_all(dir: &Path, paths: &[PathBuf]) -> io::Result<Vec<Self>> {
        let mut sorted: Vec<&PathBuf> = paths.iter().collect();
        sorted.sort();
        sorted.dedup();
        sorted.into_iter().map(|path| Self::acquire(dir, path)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let locks = dir.path().join("locks");
        let first = FileLock::acquire(&locks, Path::new("/p/a.txt")).expect("lock");
        let released = Arc::new(AtomicBool::new(false));
        let waiter = std::thread::spawn({
            let locks = locks.clone();
            let released = released.clone();
            move || {
                let _second = FileLock::acquire(&locks, Path::new("/p/a.txt")).expect("lock");
                released.load(Ordering::SeqCst)
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        released.store(true, Ordering::SeqCst);
        drop(first);
        assert!(waiter.join().expect("join"), "the second lock was taken while the first was held");
        // Another file is not blocked.
        let _other =
            FileLock::acquire_all(&locks, &[PathBuf::from("/p/b.txt"), PathBuf::from("/p/b.txt")]).expect("lock");
    }
}
