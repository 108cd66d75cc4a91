//! Which editors Claude Code can connect to as its IDE from a project, for
//! `verbatim setup claude-code --check`.

use std::path::Path;

/// Which editors Claude Code can connect to as its IDE from `project` (informational:
/// the MCP setup works without one).
pub(crate) fn ide_lines(project: &Path, lock_dir: Option<&Path>) -> Vec<String> {
    use crate::transport::ide_lock::{IDE_NAME_SUFFIX, LockContent};
    let Some(lock_dir) = lock_dir else {
        return vec!["info    IDE: no HOME nor CLAUDE_CONFIG_DIR, so no editor can be found".into()];
    };
    let mut ours = Vec::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(lock_dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let Some(port) = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|_| path.extension().is_some_and(|ext| ext == "lock"))
        else {
            continue;
        };
        let Ok(lock) = serde_json::from_slice::<LockContent>(&std::fs::read(&path).unwrap_or_default()) else {
            continue;
        };
        if !crate::service::discovery::process_alive(lock.pid)
            || !lock.workspace_folders.iter().any(|folder| project.starts_with(folder))
        {
            continue;
        }
        let line = format!("{} (port {port})", lock.ide_name);
        if lock.ide_name.ends_with(IDE_NAME_SUFFIX) { ours.push(line) } else { others.push(line) }
    }
    let mut lines = Vec::new();
    if ours.is_empty() {
        lines.push(format!(
            "info    IDE: no editor running Verbatim has {} open: open it in Neovim or VS Code with Verbatim, and \
             Claude Code's own edits are reviewed there",
            project.display()
        ));
    } else {
        lines.push(format!(
            "ok      IDE: {} serves this project: `claude` in the editor's terminal connects by itself; elsewhere \
             `claude --ide`",
            ours.join(", ")
        ));
    }
    if !others.is_empty() {
        lines.push(format!(
            "info    IDE: {} too (another IDE integration, such as Anthropic's own extension): in a terminal an editor \
             opened, Claude Code connects to that editor's port (CLAUDE_CODE_SSE_PORT); `claude --ide` or /ide lets you \
             choose. Turn one off to leave no doubt (Verbatim: verbatim.claudeCode.enabled, or claude_code = false)",
            others.join(", ")
        ));
    }
    lines
}
