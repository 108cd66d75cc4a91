//! End to end: `verbatim setup` shows, writes, re-runs idempotently and checks an
//! agent's configuration (the real binary, in a fresh project and home).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

fn setup(project: &Path, home: &Path, args: &[&str]) -> Output {
    setup_with(project, home, &[], args)
}

fn setup_with(project: &Path, home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_verbatim"))
        .arg("setup")
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .envs(env.iter().copied())
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
    let local = text(&std::fs::read(project.path().join(".claude/settings.local.json")).unwrap());
    assert!(local.contains("\"Edit\"") && local.contains("\"mcp__verbatim\""), "{local}");
    assert!(local.contains("\"enabledMcpjsonServers\""), "{local}");
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
    assert!(config.contains("default_tools_approval_mode = \"approve\""), "{config}");
    // CODEX_HOME is where Codex reads its config: setup writes there, not to ~/.codex.
    let codex_home = tempfile::tempdir().unwrap();
    let moved =
        setup_with(project.path(), home.path(), &[("CODEX_HOME", codex_home.path())], &["codex", "--user", "--write"]);
    assert!(moved.status.success(), "{moved:?}");
    assert!(text(&std::fs::read(codex_home.path().join("config.toml")).unwrap()).contains("env_vars = ["));
    let unknown = setup(project.path(), home.path(), &["cursor"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("claude-code, codex or gemini-cli"), "{unknown:?}");
}

#[test]
fn check_without_an_agent_reports_every_agent_fresh_half_and_configured() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let claude_config = tempfile::tempdir().unwrap();
    let env = [("CLAUDE_CONFIG_DIR", claude_config.path())];
    let fresh = setup_with(project.path(), home.path(), &env, &["--check"]);
    assert_eq!(fresh.status.code(), Some(2), "{fresh:?}");
    let out = text(&fresh.stdout);
    for fix in [
        "verbatim setup claude-code --write",
        "verbatim setup codex --user --write",
        "verbatim setup gemini-cli --trust --write",
    ] {
        assert!(out.contains(&format!("fix:    {fix}")), "{fix} missing in:\n{out}");
    }
    assert!(text(&fresh.stderr).contains("not every agent is set up"), "{fresh:?}");

    // Half: Claude Code in the user scope (under CLAUDE_CONFIG_DIR), Codex not at all.
    let claude = setup_with(project.path(), home.path(), &env, &["claude-code", "--user", "--write"]);
    assert!(claude.status.success(), "{claude:?}");
    assert!(claude_config.path().join(".claude.json").exists() && claude_config.path().join("settings.json").exists());
    let half = setup_with(project.path(), home.path(), &env, &["--check"]);
    assert_eq!(half.status.code(), Some(2), "{half:?}");
    let out = text(&half.stdout);
    assert!(out.contains("claude-code: set up (user)"), "{out}");
    assert!(out.contains("codex: not set up (user)"), "{out}");

    for args in [&["codex", "--user", "--write"][..], &["gemini-cli", "--trust", "--write"][..]] {
        let done = setup_with(project.path(), home.path(), &env, args);
        assert!(done.status.success(), "{done:?}");
    }
    let configured = setup_with(project.path(), home.path(), &env, &["--check"]);
    assert!(configured.status.success(), "{configured:?}");
    assert!(!text(&configured.stdout).contains("fix:"), "{configured:?}");

    let unnamed = setup(project.path(), home.path(), &["--write"]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(text(&unnamed.stderr).contains("name the agent to set up"), "{unnamed:?}");
}
