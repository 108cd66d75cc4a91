//! The discovery files through which Gemini CLI and Qwen Code find the IDE companion
//! endpoint ([`crate::transport::companion_http`]).
//!
//! - Gemini CLI: `$TMPDIR/gemini/ide/gemini-ide-server-<PID>-<PORT>.json`, JSON
//!   `{port, workspacePath, authToken, ideInfo: {name, displayName}}`. `<PID>` is the
//!   IDE process the CLI finds above itself: walking up from a shell it takes the
//!   shell's grandparent, which is the process above the editor (Neovim's parent;
//!   VS Code's main process, the parent of the extension host). The editor's
//!   terminals also get `GEMINI_CLI_IDE_PID`, which the CLI prefers to its walk.
//!   Elsewhere the CLI takes a file whose `workspacePath` holds its cwd.
//! - Qwen Code (0.24): `$QWEN_HOME/ide/<PORT>.lock` (`~/.qwen/ide/` without the
//!   variable), the same JSON plus `ppid` (Qwen Code removes a file whose `ppid` is
//!   dead).
//!
//! `workspacePath` is every workspace folder joined by the path-list separator (`:`).
//! Files are written atomically, 0600, in directories created 0700. Ours are told
//! apart by an `ideInfo.displayName` ending in [`IDE_NAME_SUFFIX`]; only those are
//! ever removed: at exit, or at start when their endpoint no longer answers.

use std::fs;
use std::io::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::transport::ide_lock::IDE_NAME_SUFFIX;

/// `ideInfo`: who the CLI is connected to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct IdeInfo {
    /// Short and lowercase ("neovim", "vscode").
    pub name: String,
    /// Shown by the CLI ("Neovim (Verbatim)").
    pub display_name: String,
}

/// A discovery file's content (Qwen Code's lock file adds `ppid`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CompanionContent {
    pub port: u16,
    /// The workspace folders joined by `:`.
    pub workspace_path: String,
    pub auth_token: String,
    pub ide_info: IdeInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppid: Option<u32>,
}

/// `ideInfo` for an editor named by its `clientInfo.name`.
pub fn ide_info(editor: &str) -> IdeInfo {
    let lower = editor.to_lowercase();
    let name = if lower.contains("code") {
        "vscode".to_owned()
    } else {
        lower.replace(|c: char| !c.is_ascii_alphanumeric(), "")
    };
    IdeInfo { name, display_name: format!("{editor}{IDE_NAME_SUFFIX}") }
}

/// Joins folders as the spec's `workspacePath` wants them.
pub fn workspace_path(folders: &[PathBuf]) -> String {
    folders.iter().map(|folder| folder.display().to_string()).collect::<Vec<_>>().join(":")
}

/// Gemini CLI's directory: `os.tmpdir()/gemini/ide`.
pub fn gemini_dir() -> PathBuf {
    std::env::temp_dir().join("gemini").join("ide")
}

/// Qwen Code's directory, or `None` when no home can be named.
pub fn qwen_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("QWEN_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(home).join("ide"));
    }
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
    Some(PathBuf::from(home).join(".qwen").join("ide"))
}

/// The PID Gemini CLI finds above itself in a terminal of the editor whose process is
/// `editor_pid`: the editor's parent (see the module comment); the editor itself when
/// its parent cannot be read.
pub fn ide_pid(editor_pid: u32) -> u32 {
    parent_of(editor_pid).filter(|parent| *parent > 1).unwrap_or(editor_pid)
}

fn parent_of(pid: u32) -> Option<u32> {
    if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')')? + 1..];
        return after.split_whitespace().nth(1)?.parse().ok();
    }
    let output = std::process::Command::new("ps").args(["-o", "ppid=", "-p", &pid.to_string()]).output().ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

/// The discovery files of a running endpoint; removed by [`CompanionFiles::remove`]
/// (and on drop).
#[derive(Debug)]
pub struct CompanionFiles {
    paths: Vec<PathBuf>,
    ide_pid: u32,
}

impl CompanionFiles {
    /// Writes Gemini CLI's file in `gemini` and Qwen Code's in `qwen` (when known).
    pub fn write(gemini: &Path, qwen: Option<&Path>, ide_pid: u32, content: &CompanionContent) -> io::Result<Self> {
        let mut paths = vec![gemini.join(format!("gemini-ide-server-{ide_pid}-{}.json", content.port))];
        if let Some(qwen) = qwen {
            paths.push(qwen.join(format!("{}.lock", content.port)));
        }
        let files = Self { paths, ide_pid };
        files.rewrite(content)?;
        Ok(files)
    }

    /// Replaces the content (the workspace folders changed).
    pub fn rewrite(&self, content: &CompanionContent) -> io::Result<()> {
        for (index, path) in self.paths.iter().enumerate() {
            let content = if index == 0 {
                CompanionContent { ppid: None, ..content.clone() }
            } else {
                CompanionContent { ppid: Some(self.ide_pid), ..content.clone() }
            };
            write_private(path, &serde_json::to_vec(&content).map_err(io::Error::other)?)?;
        }
        Ok(())
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    pub fn remove(&self) {
        for path in &self.paths {
            match fs::remove_file(path) {
                Ok(()) => tracing::info!(file = %path.display(), "removed the IDE companion discovery file"),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => {
                    tracing::warn!(file = %path.display(), "cannot remove the IDE companion discovery file: {error}")
                }
            }
        }
    }
}

impl Drop for CompanionFiles {
    fn drop(&mut self) {
        self.remove();
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut file = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&temporary, path)
}

/// Removes Verbatim's discovery files in `dir` whose endpoint no longer answers on
/// 127.0.0.1; other IDEs' files are never touched. Returns how many were removed.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = (name.starts_with("gemini-ide-server-") && name.ends_with(".json")) || name.ends_with(".lock");
        if !ours {
            continue;
        }
        let Ok(bytes) = fs::read(&path) else { continue };
        let Ok(content) = serde_json::from_slice::<CompanionContent>(&bytes) else { continue };
        if content.ide_info.display_name.ends_with(IDE_NAME_SUFFIX)
            && !answers(content.port)
            && fs::remove_file(&path).is_ok()
        {
            tracing::info!(file = %path.display(), "removed the discovery file of a Verbatim that is gone");
            removed += 1;
        }
    }
    removed
}

fn answers(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn content(port: u16, display_name: &str) -> CompanionContent {
        CompanionContent {
            port,
            workspace_path: "/p:/q".into(),
            auth_token: "secret".into(),
            ide_info: IdeInfo { name: "neovim".into(), display_name: display_name.into() },
            ppid: None,
        }
    }

    #[test]
    fn both_files_written_0600_in_0700_directories_and_removed_on_drop() {
        let root = tempfile::tempdir().unwrap();
        let (gemini, qwen) = (root.path().join("gemini/ide"), root.path().join(".qwen/ide"));
        let files = CompanionFiles::write(&gemini, Some(&qwen), 4321, &content(5555, "Neovim (Verbatim)")).unwrap();
        assert_eq!(files.paths(), [gemini.join("gemini-ide-server-4321-5555.json"), qwen.join("5555.lock")]);
        for path in files.paths() {
            assert_eq!(fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let gemini_json: serde_json::Value = serde_json::from_slice(&fs::read(&files.paths()[0]).unwrap()).unwrap();
        assert_eq!(
            gemini_json,
            serde_json::json!({"port": 5555, "workspacePath": "/p:/q", "authToken": "secret",
                               "ideInfo": {"name": "neovim", "displayName": "Neovim (Verbatim)"}})
        );
        let qwen_json: serde_json::Value = serde_json::from_slice(&fs::read(&files.paths()[1]).unwrap()).unwrap();
        assert_eq!(qwen_json["ppid"], 4321);
        let paths = files.paths().to_vec();
        drop(files);
        assert!(paths.iter().all(|path| !path.exists()));
    }

    #[test]
    fn only_our_files_whose_endpoint_is_gone_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let live = listener.local_addr().unwrap().port();
        let dead = {
            let closed = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            closed.local_addr().unwrap().port()
        };
        let write = |name: &str, content: &CompanionContent| {
            fs::write(dir.path().join(name), serde_json::to_vec(content).unwrap()).unwrap()
        };
        write("gemini-ide-server-1-1.json", &content(dead, "Neovim (Verbatim)"));
        write("gemini-ide-server-1-2.json", &content(dead, "VS Code"));
        write("gemini-ide-server-1-3.json", &content(live, "Neovim (Verbatim)"));
        write("7.lock", &content(dead, "Neovim (Verbatim)"));
        fs::write(dir.path().join("gemini-ide-server-1-4.json"), b"not json").unwrap();
        assert_eq!(remove_stale(dir.path()), 2);
        assert!(!dir.path().join("gemini-ide-server-1-1.json").exists());
        assert!(!dir.path().join("7.lock").exists());
        assert!(dir.path().join("gemini-ide-server-1-2.json").exists(), "another IDE's file is not ours");
        assert!(dir.path().join("gemini-ide-server-1-3.json").exists(), "a live Verbatim's file stays");
        assert!(dir.path().join("gemini-ide-server-1-4.json").exists());
    }

    #[test]
    fn names_and_pids() {
        assert_eq!(ide_info("Neovim").name, "neovim");
        assert_eq!(ide_info("Visual Studio Code").name, "vscode");
        assert_eq!(ide_info("Neovim").display_name, "Neovim (Verbatim)");
        assert_eq!(workspace_path(&[PathBuf::from("/a"), PathBuf::from("/b c")]), "/a:/b c");
        assert_eq!(
            parent_of(std::process::id()),
            Some(rustix::process::getppid().map_or(0, |pid| pid.as_raw_nonzero().get() as u32))
        );
    }
}
