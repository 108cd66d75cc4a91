//! One git commit per headless write (`--git-commit`), so that `git log` is the
//! audit trail: the written files only (whatever else is staged stays staged and
//! out of the commit), with the write's summary as the message.
//!
//! The repository is the one holding the file, found from its path. Variables that
//! would point git elsewhere (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, ...; set,
//! for one, while git runs a hook or `rebase --exec`) are removed for the commands
//! run here, so a write is never committed to, nor staged in, another repository.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a commit was not made.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("`git {command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
}

/// The root of the git work tree holding `path`: the nearest ancestor with a `.git`.
pub fn toplevel(path: &Path) -> Option<PathBuf> {
    path.ancestors().skip(1).find(|dir| dir.join(".git").exists()).map(Path::to_path_buf)
}

/// Environment variables that make git use another repository, index or work tree.
pub const REDIRECTING_VARIABLES: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

fn git(root: &Path, args: &[&str], paths: &[PathBuf]) -> Result<String, GitError> {
    let mut command = Command::new("git");
    for variable in REDIRECTING_VARIABLES {
        command.env_remove(variable);
    }
    command.arg("-C").arg(root).args(args);
    if !paths.is_empty() {
        command.arg("--").args(paths);
    }
    let output = command.output()?;
    if !output.status.success() {
        return Err(GitError::Failed {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Commits `paths` (inside `root`) as they are now; returns the new commit's hash.
pub fn commit(root: &Path, paths: &[PathBuf], message: &str) -> Result<String, GitError> {
    git(root, &["add"], paths)?;
    git(root, &["commit", "--quiet", "-m", message], paths)?;
    git(root, &["rev-parse", "HEAD"], &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_tree_root_is_found_from_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("repo/.git")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("repo/src")).expect("mkdir");
        assert_eq!(toplevel(&dir.path().join("repo/src/a.rs")), Some(dir.path().join("repo")));
        assert_eq!(toplevel(&dir.path().join("elsewhere.txt")), None);
    }
}
