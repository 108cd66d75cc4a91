//! Which running verbatim server serves a file: among the live servers named by the
//! discovery files, the one with a workspace folder holding the file (symlinks
//! resolved); when several do, the deepest folder wins, then the newest server.
//! (A server that merely has the file open is found by asking it:
//! [`crate::frontend::Frontend::resolve`].)

use std::path::{Path, PathBuf};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::workspace::Workspace;

use crate::service::protocol::DiscoveryFile;

/// The folders of a server, as paths.
pub fn folders(server: &DiscoveryFile) -> Vec<PathBuf> {
    server.workspace_folders.iter().filter_map(|uri| DocKey::parse(uri).ok()?.path().map(Path::to_path_buf)).collect()
}

/// The server whose workspace folder holds `path`, if any.
pub fn server_for<'a>(servers: &'a [DiscoveryFile], path: &Path) -> Option<&'a DiscoveryFile> {
    servers
        .iter()
        .flat_map(|server| {
            folders(server)
                .into_iter()
                .filter(|folder| Workspace::new(vec![folder.clone()]).contains(path))
                .map(move |folder| (server, folder.components().count()))
        })
        .max_by(|(a, a_depth), (b, b_depth)| a_depth.cmp(b_depth).then_with(|| a.started_at.cmp(&b.started_at)))
        .map(|(server, _)| server)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(pid: u32, folders: &[&Path], started_at: &str) -> DiscoveryFile {
        DiscoveryFile {
            pid,
            socket: format!("/run/{pid}.sock"),
            read_only_socket: None,
            workspace_folders: folders.iter().map(|folder| DocKey::File(folder.to_path_buf()).to_uri()).collect(),
            client_info: None,
            protocol_version: 1,
            server_version: "0".into(),
            started_at: started_at.into(),
        }
    }

    #[test]
    fn the_deepest_folder_wins() {
        let root = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("project");
        let inner = project.join("inner");
        std::fs::create_dir_all(&inner).expect("mkdir");
        let servers = vec![
            server(1, &[&project], "2026-01-01T00:00:00Z"),
            server(2, &[&inner], "2026-01-01T00:00:00Z"),
            server(3, &[root.path()], "2026-01-02T00:00:00Z"),
        ];
        let pid = |path: &Path| server_for(&servers, path).map(|server| server.pid);
        assert_eq!(pid(&inner.join("a.rs")), Some(2));
        assert_eq!(pid(&project.join("b.rs")), Some(1));
        assert_eq!(pid(&root.path().join("c.rs")), Some(3));
        assert_eq!(pid(Path::new("/elsewhere/d.rs")), None);
        // Two servers on one folder: the newest.
        let twins =
            vec![server(7, &[&project], "2026-01-02T00:00:00Z"), server(8, &[&project], "2026-01-01T00:00:00Z")];
        assert_eq!(server_for(&twins, &project.join("e.rs")).map(|server| server.pid), Some(7));
    }
}
