//! Claude Code's lock files: how Claude Code finds the IDE it may connect to.
//!
//! `$CLAUDE_CONFIG_DIR/ide/<port>.lock` (`~/.claude/ide/` without the variable), JSON
//! `{pid, workspaceFolders, ideName, transport: "ws", authToken}`, written atomically
//! with mode 0600 in a directory created 0700. Ours are told apart from other IDEs' by
//! their `ideName`, which ends in [`IDE_NAME_SUFFIX`]: only those are ever removed, and
//! only when their process is gone.

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::service::discovery::process_alive;

/// The end of every `ideName` Verbatim writes ("Neovim (Verbatim)").
pub const IDE_NAME_SUFFIX: &str = " (Verbatim)";

/// A lock file's content.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LockContent {
    pub pid: u32,
    pub workspace_folders: Vec<String>,
    pub ide_name: String,
    pub transport: String,
    pub auth_token: String,
}

/// Where Claude Code looks for lock files, or `None` when no home can be named.
pub fn lock_dir() -> Option<PathBuf> {
    if let Some(config) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(config).join("ide"));
    }
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
    Some(PathBuf::from(home).join(".claude").join("ide"))
}

/// The lock file of a running endpoint; removed by [`LockFile::remove`] (and on drop).
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
}

impl LockFile {
    /// Writes `<dir>/<port>.lock`, creating `dir` (0700) if needed.
    pub fn write(dir: &Path, port: u16, content: &LockContent) -> io::Result<Self> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let lock = Self { path: dir.join(format!("{port}.lock")) };
        lock.rewrite(content)?;
        Ok(lock)
    }

    /// Replaces the content (the workspace folders changed).
    pub fn rewrite(&self, content: &LockContent) -> io::Result<()> {
        let temporary = self.path.with_extension("lock.tmp");
        let mut file = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temporary)?;
        file.write_all(&serde_json::to_vec(content).map_err(io::Error::other)?)?;
        file.sync_all()?;
        fs::rename(&temporary, &self.path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn remove(&self) {
        match fs::remove_file(&self.path) {
            Ok(()) => tracing::info!(lock = %self.path.display(), "removed the Claude Code lock file"),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(lock = %self.path.display(), "cannot remove the Claude Code lock file: {error}")
            }
        }
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes Verbatim's lock files in `dir` whose process is no longer alive; other
/// IDEs' lock files are never touched. Returns how many were removed.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some("lock") {
            continue;
        }
        let Ok(bytes) = fs::read(&path) else { continue };
        let Ok(content) = serde_json::from_slice::<LockContent>(&bytes) else { continue };
        if content.ide_name.ends_with(IDE_NAME_SUFFIX) && !process_alive(content.pid) && fs::remove_file(&path).is_ok()
        {
            tracing::info!(lock = %path.display(), pid = content.pid, "removed the lock file of a Verbatim that is gone");
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn content(pid: u32, ide_name: &str) -> LockContent {
        LockContent {
            pid,
            workspace_folders: vec!["/p".into()],
            ide_name: ide_name.into(),
            transport: "ws".into(),
            auth_token: "secret".into(),
        }
    }

    #[test]
    fn written_0600_in_a_0700_directory_and_removed_on_drop() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".claude/ide");
        let lock = LockFile::write(&dir, 4242, &content(std::process::id(), "Neovim (Verbatim)")).unwrap();
        assert_eq!(lock.path(), dir.join("4242.lock"));
        assert_eq!(fs::metadata(lock.path()).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        let read: LockContent = serde_json::from_slice(&fs::read(lock.path()).unwrap()).unwrap();
        assert_eq!(read.ide_name, "Neovim (Verbatim)");
        let path = lock.path().to_path_buf();
        drop(lock);
        assert!(!path.exists());
    }

    #[test]
    fn only_our_dead_lock_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // No process has pid u32::MAX - 1.
        let dead = u32::MAX - 1;
        let write = |name: &str, content: &LockContent| {
            fs::write(dir.path().join(name), serde_json::to_vec(content).unwrap()).unwrap()
        };
        write("1.lock", &content(dead, "Neovim (Verbatim)"));
        write("2.lock", &content(dead, "Visual Studio Code"));
        write("3.lock", &content(std::process::id(), "Neovim (Verbatim)"));
        fs::write(dir.path().join("4.lock"), b"not json").unwrap();
        assert_eq!(remove_stale(dir.path()), 1);
        assert!(!dir.path().join("1.lock").exists());
        assert!(dir.path().join("2.lock").exists(), "another IDE's lock file is not ours to remove");
        assert!(dir.path().join("3.lock").exists(), "a live Verbatim's lock file stays");
        assert!(dir.path().join("4.lock").exists());
    }
}
