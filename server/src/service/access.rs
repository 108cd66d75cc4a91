//! What an agent may do: its access level (read-only or read-write), and which
//! paths are off limits (a deny list for secrets and repository internals, and the
//! rule that writes stay inside the workspace folders).
//!
//! Paths are judged after resolving symlinks, so a link inside the workspace that
//! points at `~/.ssh` or outside the workspace does not get around the rules.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::workspace::{Workspace, resolve_existing_prefix};

use crate::service::error::{ErrorKind, ProtocolError};

/// What a connection may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Access {
    #[default]
    ReadWrite,
    /// Reads and dry runs only.
    ReadOnly,
}

/// The deny list used when the editor configures none.
pub const DEFAULT_DENY_LIST: [&str; 14] = [
    ".git/",
    ".hg/",
    ".svn/",
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
];

/// Which paths agents may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPolicy {
    deny: Vec<String>,
    /// Allow writes to open documents outside every workspace folder.
    allow_writes_outside_workspace: bool,
}

impl Default for PathPolicy {
    fn default() -> Self {
        Self::new(None, false)
    }
}

impl PathPolicy {
    pub fn new(deny: Option<Vec<String>>, allow_writes_outside_workspace: bool) -> Self {
        let deny = deny.unwrap_or_else(|| DEFAULT_DENY_LIST.iter().map(|pattern| (*pattern).to_owned()).collect());
        Self { deny, allow_writes_outside_workspace }
    }

    /// The deny pattern `path` matches, if any (judged on the resolved path).
    pub fn denied_by(&self, path: &Path) -> Option<&str> {
        let resolved = resolve_existing_prefix(path);
        [path.to_path_buf(), resolved]
            .iter()
            .find_map(|candidate| self.deny.iter().find(|pattern| matches_pattern(pattern, candidate)))
            .map(String::as_str)
    }

    /// Refuses reading a file from disk that the deny list covers.
    pub fn check_read(&self, key: &DocKey) -> Result<(), ProtocolError> {
        let Some(path) = key.path() else { return Ok(()) };
        match self.denied_by(path) {
            Some(pattern) => Err(denied(path, pattern, "read")),
            None => Ok(()),
        }
    }

    /// Refuses writing `key` when the deny list covers it or it lies outside the workspace.
    pub fn check_write(&self, key: &DocKey, workspace: &Workspace) -> Result<(), ProtocolError> {
        let Some(path) = key.path() else { return Ok(()) };
        if let Some(pattern) = self.denied_by(path) {
            return Err(denied(path, pattern, "write"));
        }
        if !self.allow_writes_outside_workspace && !workspace.contains(path) {
            return Err(ProtocolError::new(
                ErrorKind::OutsideWorkspace,
                format!(
                    "{} lies outside the workspace folders ({}), and verbatim only writes inside them. The person \
                     can allow it with the editor option allowWritesOutsideWorkspace.",
                    path.display(),
                    workspace.folder_uris().join(", ")
                ),
            )
            .with("uri", key.to_uri())
            .with("workspaceFolders", workspace.folder_uris()));
        }
        Ok(())
    }
}

fn denied(path: &Path, pattern: &str, verb: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorKind::PermissionDenied,
        format!(
            "{} matches the deny pattern `{pattern}`, so agents may not {verb} it. Leave this file to the person; \
             they can change the editor option writeDenyList.",
            path.display()
        ),
    )
    .with("uri", DocKey::File(path.to_path_buf()).to_uri())
    .with("pattern", pattern)
}

/// A pattern ending in `/` names a directory anywhere in the path; any other pattern
/// is matched against the file name, `*` standing for any run of characters.
fn matches_pattern(pattern: &str, path: &Path) -> bool {
    if let Some(directory) = pattern.strip_suffix('/') {
        let parent = path.parent().map(PathBuf::from).unwrap_or_default();
        return parent.components().any(|component| match component {
            Component::Normal(name) => name.to_str().is_some_and(|name| wildcard(directory, name)),
            _ => false,
        });
    }
    path.file_name().and_then(|name| name.to_str()).is_some_and(|name| wildcard(pattern, name))
}

/// `*` matches any run of characters; everything else matches itself.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_patterns() {
        let policy = PathPolicy::default();
        for denied in
            ["/p/.git/config", "/p/.env", "/p/sub/.env.local", "/p/cert.pem", "/home/a/.ssh/config", "/p/id_rsa.pub"]
        {
            assert!(policy.denied_by(Path::new(denied)).is_some(), "{denied}");
        }
        for allowed in
            ["/p/src/main.rs", "/p/.envrc.example.md", "/p/environment.rs", "/p/.github/workflows/ci.yml", "/p/keys.rs"]
        {
            assert_eq!(policy.denied_by(Path::new(allowed)), None, "{allowed}");
        }
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*.pem", "a.pem"));
        assert!(wildcard("a*b*c", "aXXbYYc"));
        assert!(!wildcard("a*b*c", "aXXc"));
        assert!(!wildcard("*.pem", "pem"));
        assert!(wildcard("*", ""));
    }

    #[test]
    fn symlinks_into_denied_places_are_denied() {
        let root = tempfile::tempdir().expect("tempdir");
        let secrets = root.path().join(".ssh");
        std::fs::create_dir(&secrets).expect("mkdir");
        std::fs::write(secrets.join("config"), "x").expect("write");
        let project = root.path().join("project");
        std::fs::create_dir(&project).expect("mkdir");
        std::os::unix::fs::symlink(&secrets, project.join("innocent")).expect("symlink");
        let policy = PathPolicy::default();
        assert_eq!(policy.denied_by(&project.join("innocent/config")), Some(".ssh/"));
    }

    #[test]
    fn writes_stay_in_the_workspace_unless_allowed() {
        let workspace = Workspace::new(vec![PathBuf::from("/p")]);
        let outside = DocKey::File(PathBuf::from("/q/notes.txt"));
        let error = PathPolicy::default().check_write(&outside, &workspace).expect_err("outside");
        assert_eq!(error.kind, ErrorKind::OutsideWorkspace);
        assert!(PathPolicy::new(None, true).check_write(&outside, &workspace).is_ok());
        assert!(PathPolicy::default().check_write(&DocKey::Other("untitled:1".into()), &workspace).is_ok());
    }
}
