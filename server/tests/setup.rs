//! End to end: `verbatim setup` shows, writes, re-runs idempotently and checks an
//! agent's configuration (the real binary, in a fresh project and home), and Codex
//! itself (when installed by `tests/agents/install.sh --all`) trusts the hook it sets up.
#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The `verbatim` that `--check` finds on PATH when it runs the hook: a script that
/// answers as `verbatim hook AGENT` does to an input that is no edit (nothing on
/// stdout, exit 0), or `script`. (`verbatim hook` is written in another branch; once
/// it is here, the default should be the real binary.)
fn verbatim_on_path(script: &str) -> (tempfile::TempDir, OsString) {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let path = bin.path().join("verbatim");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let search = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    (bin, search)
}

fn setup(project: &Path, home: &Path, args: &[&str]) -> Output {
    setup_with(project, home, &[], args)
}

fn setup_with(project: &Path, home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    setup_with_hook(project, home, env, "cat >/dev/null", args)
}

fn setup_with_hook(project: &Path, home: &Path, env: &[(&str, &Path)], hook_script: &str, args: &[&str]) -> Output {
    let (_bin, search) = verbatim_on_path(hook_script);
    Command::new(env!("CARGO_BIN_EXE_verbatim"))
        .arg("setup")
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .env_remove("QWEN_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env("PATH", search)
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
    assert!(
        text(&unknown.stderr).contains("claude-code, codex, gemini-cli, qwen-code, copilot, opencode or droid"),
        "{unknown:?}"
    );
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

    for args in [
        &["codex", "--user", "--write"][..],
        &["gemini-cli", "--trust", "--write"][..],
        &["qwen-code", "--write"][..],
        &["copilot", "--write"][..],
        &["opencode", "--write"][..],
        &["droid", "--write"][..],
    ] {
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

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn codex_s_hook_goes_after_the_person_s_with_its_trust_and_no_hook_leaves_it_out() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    let env = [("CODEX_HOME", codex_home.path())];
    let theirs = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]});
    std::fs::write(codex_home.path().join("hooks.json"), json!({"hooks": {"PreToolUse": [theirs]}}).to_string())
        .unwrap();
    std::fs::write(codex_home.path().join("config.toml"), "model = \"o4\"\n").unwrap();

    let without = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--no-hook", "--write"]);
    assert!(without.status.success(), "{without:?}");
    assert!(!text(&std::fs::read(codex_home.path().join("config.toml")).unwrap()).contains("hooks.state"));
    let check = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--no-hook", "--check"]);
    assert!(check.status.success(), "{check:?}");
    let check = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--check"]);
    assert_eq!(check.status.code(), Some(2), "{check:?}");
    assert!(text(&check.stdout).contains("missing") && text(&check.stdout).contains("pre-write hook"), "{check:?}");
    assert!(text(&check.stdout).contains("fix:    verbatim setup codex --user --write"), "{check:?}");

    let shown = setup_with(project.path(), home.path(), &env, &["codex", "--user"]);
    assert!(text(&shown.stdout).contains("+            \"command\": \"verbatim hook codex\""), "{shown:?}");
    assert!(text(&shown.stdout).contains("+trusted_hash = \"sha256:"), "{shown:?}");
    let written = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--write"]);
    assert!(written.status.success(), "{written:?}");
    assert!(text(&written.stderr).contains("Codex runs a hook only once it is trusted"), "{written:?}");
    let hooks = json_file(&codex_home.path().join("hooks.json"));
    assert_eq!(hooks["hooks"]["PreToolUse"][0], theirs, "the person's group first, as it was");
    assert_eq!(
        hooks["hooks"]["PreToolUse"][1],
        json!({"matcher": "apply_patch", "hooks": [{"type": "command", "command": "verbatim hook codex", "timeout": 600}]})
    );
    let config = text(&std::fs::read(codex_home.path().join("config.toml")).unwrap());
    let key = format!("{}/hooks.json:pre_tool_use:1:0", codex_home.path().canonicalize().unwrap().display());
    assert!(config.starts_with("model = \"o4\"\n"), "{config}");
    assert!(config.contains(&format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:")), "{config}");
    let again = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--write"]);
    assert!(text(&again.stdout).is_empty() && text(&again.stderr).contains("already set up"), "{again:?}");
    let check = setup_with(project.path(), home.path(), &env, &["codex", "--user", "--check"]);
    assert!(check.status.success(), "{check:?}");
    assert!(
        text(&check.stdout).contains("ok      ") && text(&check.stdout).contains("Codex trusts the hook"),
        "{check:?}"
    );
    assert!(text(&check.stdout).contains("the hook runs"), "{check:?}");
    codex_agrees(codex_home.path(), project.path(), &key);
}

#[test]
fn qwen_code_is_set_up_with_its_server_and_hook() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let written = setup(project.path(), home.path(), &["qwen-code", "--write"]);
    assert!(written.status.success(), "{written:?}");
    let settings = json_file(&project.path().join(".qwen/settings.json"));
    assert_eq!(settings["mcpServers"]["verbatim"]["trust"], true);
    assert_eq!(
        settings["hooks"]["PreToolUse"],
        json!([{"matcher": "edit|write_file", "hooks": [{"type": "command", "command": "verbatim hook qwen-code", "timeout": 600}]}])
    );
    let user = setup(project.path(), home.path(), &["qwen", "--user", "--write"]);
    assert!(user.status.success(), "{user:?}");
    assert!(home.path().join(".qwen/settings.json").exists());
    let check = setup(project.path(), home.path(), &["qwen-code", "--check"]);
    assert!(check.status.success(), "{check:?}");
}

#[test]
fn check_reports_a_hook_that_does_not_work_with_what_it_said() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let written = setup(project.path(), home.path(), &["gemini-cli", "--trust", "--write"]);
    assert!(written.status.success(), "{written:?}");
    let broken = "echo 'cannot reach the editor' >&2; exit 1";
    let check = setup_with_hook(project.path(), home.path(), &[], broken, &["gemini-cli", "--check"]);
    assert_eq!(check.status.code(), Some(2), "{check:?}");
    let out = text(&check.stdout);
    assert!(out.contains("failed ") && out.contains("(stderr: cannot reach the editor)"), "{out}");
    assert!(out.contains("fix:    make `verbatim hook gemini-cli` work"), "{out}");
    // Gemini CLI's event in the input.
    let log = project.path().join("input.json");
    let logging = format!("cat > {}", log.display());
    let check = setup_with_hook(project.path(), home.path(), &[], &logging, &["gemini-cli", "--check"]);
    assert!(check.status.success(), "{check:?}");
    let input = json_file(&log);
    assert_eq!(input["hook_event_name"], "BeforeTool");
    assert_eq!(input["tool_name"], "verbatim_setup_check");
    assert_eq!(input["cwd"], project.path().display().to_string());
}

/// Codex's own binary, installed by `tests/agents/install.sh --all` (or named by
/// `VERBATIM_TEST_CODEX`).
fn codex_binary() -> Option<PathBuf> {
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.agents/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    std::env::var_os("VERBATIM_TEST_CODEX").map(PathBuf::from).or(Some(pinned)).filter(|path| path.is_file())
}

/// Codex's `hooks/list` (its app server, JSON-RPC on stdio) says the hook at `key` is
/// trusted: the hash `setup` recorded is the one Codex computes. Checked when Codex is
/// installed.
fn codex_agrees(codex_home: &Path, project: &Path, key: &str) {
    let Some(codex) = codex_binary() else {
        eprintln!("Codex is not installed (tests/agents/install.sh --all): its own view of the trust is not checked");
        return;
    };
    let mut server = Command::new(codex)
        .arg("app-server")
        .current_dir(project)
        .env("CODEX_HOME", codex_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let stdout = server.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "verbatim-test", "version": "1"}}}));
    let answer = |id: i64| loop {
        let line = received.recv_timeout(Duration::from_secs(30)).expect("codex app-server answers");
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if message["id"] == id {
            break message;
        }
    };
    answer(1);
    send(json!({"method": "initialized"}));
    send(json!({"id": 2, "method": "hooks/list", "params": {"cwds": [project.display().to_string()]}}));
    let list = answer(2);
    let _ = server.kill();
    let _ = server.wait();
    let hooks: Vec<&Value> = list["result"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|entry| entry["hooks"].as_array().into_iter().flatten())
        .collect();
    let ours = hooks.iter().find(|hook| hook["key"] == key).unwrap_or_else(|| panic!("no hook {key} in {list:#}"));
    assert_eq!(ours["command"], "verbatim hook codex", "{list:#}");
    assert_eq!(ours["trustStatus"], "trusted", "{list:#}");
}
