//! The private runtime directory, the agent socket's path, and discovery files.
//!
//! The directory is `$VERBATIM_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/verbatim`, else
//! `<temp>/verbatim-<uid>`. It is created with mode 0700 and refused if another user
//! owns it. Each server writes `<pid>.json` (mode 0600) beside its `<pid>.sock`;
//! discovery files of processes that no longer exist are removed.
//!
//! Agents start their tools with environments of their own (Codex passes only `HOME`,
//! `LANG`, `PATH`, `PWD` and `TMPDIR`), so a front-end cannot count on seeing the
//! `XDG_RUNTIME_DIR` the editor's server saw: it looks in every runtime directory a
//! server of this user can have used ([`discovery_dirs`]), or it would write the disk
//! behind an editor that has the file open.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::service::protocol::DiscoveryFile;

/// Where one server's socket and discovery file live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub socket: PathBuf,
    /// Agents connected here may only read.
    pub read_only_socket: PathBuf,
    pub discovery_file: PathBuf,
}

impl Endpoint {
    /// The default endpoint of this process inside `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        let pid = std::process::id();
        Self::for_socket(dir.join(format!("{pid}.sock")))
    }

    /// The endpoint whose main socket is `socket`; the other files sit beside it.
    pub fn for_socket(socket: PathBuf) -> Self {
        Self {
            read_only_socket: socket.with_extension("ro.sock"),
            discovery_file: socket.with_extension("json"),
            socket,
        }
    }

    /// Removes the socket and the discovery file; missing files are fine.
    pub fn remove(&self) {
        let _ = fs::remove_file(&self.socket);
        let _ = fs::remove_file(&self.read_only_socket);
        let _ = fs::remove_file(&self.discovery_file);
    }
}

/// The runtime directory for this user.
pub fn runtime_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("VERBATIM_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir).join("verbatim");
    }
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("verbatim-{uid}"))
}

/// Every directory a server of this user may have put its discovery file in: only
/// `$VERBATIM_RUNTIME_DIR` when it is set (an explicit choice), else this process's
/// [`runtime_dir`], `$XDG_RUNTIME_DIR/verbatim`, `/run/user/<uid>/verbatim`,
/// `<temp>/verbatim-<uid>` and `/tmp/verbatim-<uid>`, each once.
pub fn discovery_dirs() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os("VERBATIM_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return vec![PathBuf::from(dir)];
    }
    let uid = rustix::process::getuid().as_raw();
    let mut dirs = vec![runtime_dir()];
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        dirs.push(PathBuf::from(dir).join("verbatim"));
    }
    dirs.push(PathBuf::from(format!("/run/user/{uid}/verbatim")));
    dirs.push(std::env::temp_dir().join(format!("verbatim-{uid}")));
    dirs.push(PathBuf::from(format!("/tmp/verbatim-{uid}")));
    let mut unique: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !unique.contains(&dir) {
            unique.push(dir);
        }
    }
    unique
}

/// Whether `dir` can hold discovery files to trust: ours, and writable by no one else
/// (another user could plant a discovery file naming a socket of theirs).
fn trusted_dir(dir: &Path) -> bool {
    fs::metadata(dir).is_ok_and(|metadata| {
        metadata.is_dir() && metadata.uid() == rustix::process::getuid().as_raw() && metadata.mode() & 0o022 == 0
    })
}

/// The live servers of every directory in `dirs` that can be trusted, each server once.
pub fn live_servers_in(dirs: &[PathBuf]) -> Vec<DiscoveryFile> {
    let mut servers: Vec<DiscoveryFile> = Vec::new();
    for dir in dirs.iter().filter(|dir| trusted_dir(dir)) {
        for server in live_servers(dir) {
            if !servers.iter().any(|known| known.pid == server.pid && known.socket == server.socket) {
                servers.push(server);
            }
        }
    }
    servers.sort_by_key(|server| server.pid);
    servers
}

/// Creates `dir` with mode 0700, or checks that an existing one is ours and private.
pub fn prepare_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let metadata = fs::metadata(dir)?;
    let uid = rustix::process::getuid().as_raw();
    if metadata.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to uid {}, not to you (uid {uid}): refusing to put the agent socket there; \
                 set VERBATIM_RUNTIME_DIR to a directory of your own",
                dir.display(),
                metadata.uid()
            ),
        ));
    }
    if metadata.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes a discovery file atomically with mode 0600.
pub fn write_discovery(path: &Path, discovery: &DiscoveryFile) -> io::Result<()> {
    let temporary = path.with_extension("json.tmp");
    let mut file = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temporary)?;
    file.write_all(&serde_json::to_vec_pretty(discovery).map_err(io::Error::other)?)?;
    file.sync_all()?;
    fs::rename(&temporary, path)
}

/// Whether a process with this pid exists.
pub fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // EPERM: it exists but belongs to someone else.
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

/// Reads every discovery file in `dir` whose process is alive, removing the files
/// (and sockets) of dead processes.
pub fn live_servers(dir: &Path) -> Vec<DiscoveryFile> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut servers = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some("json") {
            continue;
        }
        let Ok(bytes) = fs::read(&path) else { continue };
        let Ok(discovery) = serde_json::from_slice::<DiscoveryFile>(&bytes) else { continue };
        if process_alive(discovery.pid) {
            servers.push(discovery);
        } else {
            let _ = fs::remove_file(&discovery.socket);
            if let Some(read_only) = &discovery.read_only_socket {
                let _ = fs::remove_file(read_only);
            }
            let _ = fs::remove_file(&path);
        }
    }
    servers.sort_by_key(|server| server.pid);
    servers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discovery(pid: u32, socket: &Path) -> DiscoveryFile {
        DiscoveryFile {
            pid,
            socket: socket.display().to_string(),
            read_only_socket: None,
            workspace_folders: vec![],
            client_info: None,
            protocol_version: 1,
            server_version: "0".into(),
            started_at: "1970-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn the_directory_is_private() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("rt");
        prepare_dir(&dir).expect("prepare");
        assert_eq!(fs::metadata(&dir).expect("meta").mode() & 0o777, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        prepare_dir(&dir).expect("prepare again");
        assert_eq!(fs::metadata(&dir).expect("meta").mode() & 0o777, 0o700);
    }

    #[test]
    fn servers_are_found_in_every_trusted_directory_once() {
        let root = tempfile::tempdir().expect("tempdir");
        let (first, second, open) = (root.path().join("a"), root.path().join("b"), root.path().join("open"));
        for dir in [&first, &second, &open] {
            prepare_dir(dir).expect("prepare");
        }
        let me = std::process::id();
        let socket = first.join("me.sock");
        write_discovery(&first.join(format!("{me}.json")), &discovery(me, &socket)).expect("write");
        // The same server seen through a second directory (a symlink, a copy) counts once.
        write_discovery(&second.join(format!("{me}.json")), &discovery(me, &socket)).expect("write");
        // A directory others may write to is not read: anyone could plant a file there.
        let planted = root.path().join("planted.sock");
        write_discovery(&open.join("1.json"), &discovery(1, &planted)).expect("write");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
        let missing = root.path().join("missing");
        let servers = live_servers_in(&[missing, first, second, open]);
        assert_eq!(servers.iter().map(|server| server.pid).collect::<Vec<_>>(), vec![me]);
    }

    #[test]
    fn files_of_dead_processes_are_cleaned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let me = std::process::id();
        let dead = u32::MAX / 2;
        let live_file = dir.path().join(format!("{me}.json"));
        write_discovery(&live_file, &discovery(me, &dir.path().join("me.sock"))).expect("write");
        assert_eq!(fs::metadata(&live_file).expect("meta").mode() & 0o777, 0o600);
        let dead_socket = dir.path().join("dead.sock");
        fs::write(&dead_socket, "").expect("write");
        let dead_file = dir.path().join("dead.json");
        write_discovery(&dead_file, &discovery(dead, &dead_socket)).expect("write");
        let servers = live_servers(dir.path());
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].pid, me);
        assert!(!dead_file.exists() && !dead_socket.exists());
    }
}
