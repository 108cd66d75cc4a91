//! Workspace folders: which files on disk agents may read and edit without the
//! editor having them open, and how paths are shown to agents.

use std::path::{Path, PathBuf};

use crate::doc_key::DocKey;

/// The editor's workspace folders, as absolute paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    folders: Vec<PathBuf>,
}

impl Workspace {
    pub fn new(folders: Vec<PathBuf>) -> Self {
        Self { folders }
    }

    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    pub fn add(&mut self, folder: PathBuf) {
        if !self.folders.contains(&folder) {
            self.folders.push(folder);
        }
    }

    pub fn remove(&mut self, folder: &Path) {
        self.folders.retain(|existing| existing != folder);
    }

    /// Whether `path` lies inside a workspace folder, after resolving symlinks in
    /// both (so a link inside the workspace that points outside does not count).
    pub fn contains(&self, path: &Path) -> bool {
        let resolved = resolve_existing_prefix(path);
        self.folders.iter().any(|folder| {
            let folder = folder.canonicalize().unwrap_or_else(|_| folder.clone());
            resolved.starts_with(&folder)
        })
    }

    /// The deepest folder containing `path`, lexically.
    pub fn folder_of(&self, path: &Path) -> Option<&Path> {
        self.folders
            .iter()
            .filter(|folder| path.starts_with(folder))
            .max_by_key(|folder| folder.components().count())
            .map(PathBuf::as_path)
    }

    /// A short name for a document: its path relative to its workspace folder,
    /// else its absolute path or URI.
    pub fn label(&self, key: &DocKey) -> String {
        match key {
            DocKey::File(path) => match self.folder_of(path).and_then(|folder| path.strip_prefix(folder).ok()) {
                Some(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
                _ => path.display().to_string(),
            },
            DocKey::Other(uri) => uri.clone(),
        }
    }

    pub fn folder_uris(&self) -> Vec<String> {
        self.folders.iter().map(|folder| DocKey::File(folder.clone()).to_uri()).collect()
    }
}

/// Canonicalises the longest existing ancestor of `path` and appends the rest, so
/// that files that do not exist yet are judged by where their directory really is.
pub fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            let mut out = resolved;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name().map(ToOwned::to_owned), existing.parent().map(Path::to_path_buf)) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_resolves_symlinks() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("project");
        std::fs::create_dir(&project).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), project.join("escape")).expect("symlink");
        let workspace = Workspace::new(vec![project.clone()]);
        assert!(workspace.contains(&project.join("src/new.rs")));
        assert!(!workspace.contains(&project.join("escape/secret.txt")));
        assert!(!workspace.contains(&root.path().join("other.txt")));
    }

    #[test]
    fn labels_are_relative_to_the_deepest_folder() {
        let workspace = Workspace::new(vec![PathBuf::from("/p"), PathBuf::from("/p/sub")]);
        assert_eq!(workspace.label(&DocKey::File("/p/sub/a.rs".into())), "a.rs");
        assert_eq!(workspace.label(&DocKey::File("/p/b.rs".into())), "b.rs");
        assert_eq!(workspace.label(&DocKey::File("/q/c.rs".into())), "/q/c.rs");
    }
}
