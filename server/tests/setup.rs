//! End to end: `verbatim setup` shows, writes, re-runs idempotently and checks an
//! agent's configuration (the real binary, in a fresh project and home).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

fn setup(project: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_verbatim"))
        .arg("setup")
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn claude_code_is_shown_then_written_then_left_alone_then_checked() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let check = setup(project.path(), home.path(), &["claude-code", "--check"]);
    assert_eq!(check.status.code(), Some(2), "{check:?}");
    assert!(text(&check.stdout).contains("missing"), "{check:?}");

    let shown = setup(project.path(), home.path(), &["claude-code"]);
    assert!(shown.status.success(), "{shown:?}");
    assert!(text(&shown.stdout).contains("+++ ") && text(&shown.stdout).contains("\"verbatim\""), "{shown:?}");
    assert!(text(&shown.stderr).contains("--write"), "{shown:?}");
    assert!(text(&shown.stderr).contains("MCP_TOOL_TIMEOUT=600000"), "{shown:?}");
    assert!(!project.path().join(".mcp.json").exists(), "shown, not written");

    let written = setup(project.path(), home.path(), &["claude-code", "--write"]);
    assert!(written.status.success(), "{written:?}");
    assert!(project.path().join(".mcp.json").exists());
    assert!(
        !project.path().join(".claude/settings.json").exists(),
        "Claude Code's own Edit stays allowed: connected as its IDE, the editor reviews it"
    );
    assert!(text(&written.stderr).contains("claude --ide"), "{written:?}");

    let again = setup(project.path(), home.path(), &["claude-code", "--write"]);
    assert!(again.status.success(), "{again:?}");
    assert!(text(&again.stdout).is_empty(), "{again:?}");
    assert!(text(&again.stderr).contains("already set up"), "{again:?}");
    let check = setup(project.path(), home.path(), &["claude-code", "--check"]);
    assert!(check.status.success(), "{check:?}");
    assert!(text(&check.stdout).contains("IDE: no editor running Verbatim"), "{check:?}");

    let denied = setup(project.path(), home.path(), &["claude-code", "--write", "--deny-builtin-edit"]);
    assert!(denied.status.success(), "{denied:?}");
    assert!(text(&std::fs::read(project.path().join(".claude/settings.json")).unwrap()).contains("\"Edit\""));
}

#[test]
fn codex_goes_to_the_user_s_config_and_an_unknown_agent_is_a_usage_error() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let project_scope = setup(project.path(), home.path(), &["codex", "--write"]);
    assert_eq!(project_scope.status.code(), Some(2));
    assert!(text(&project_scope.stderr).contains("--user"), "{project_scope:?}");
    let user = setup(project.path(), home.path(), &["codex", "--user", "--write"]);
    assert!(user.status.success(), "{user:?}");
    let config = text(&std::fs::read(home.path().join(".codex/config.toml")).unwrap());
    assert!(config.contains("[mcp_servers.verbatim]") && config.contains("tool_timeout_sec = 600"), "{config}");
    let unknown = setup(project.path(), home.path(), &["cursor"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("claude-code, codex or gemini-cli"), "{unknown:?}");
}
