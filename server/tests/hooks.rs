//! `verbatim hook AGENT` end to end: the real binary run as each agent runs its
//! pre-write hook (JSON on stdin, the answer on stdout), against the real `verbatim lsp`
//! with a scripted editor on its stdio that accepts, keeps some hunks, rejects or never
//! answers. The real agent CLIs are driven by `tests/agents/e2e_hooks.py`.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{Review, ScriptedEditor, binary};

const TIMEOUT: Duration = Duration::from_secs(30);

/// What the hook printed on stdout and stderr, and its exit code.
struct Ran {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl Ran {
    fn answer(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|_| panic!("not JSON: {:?} ({})", self.stdout, self.stderr))
    }
}

/// Runs `verbatim hook AGENT ARGS` in `cwd` with the editor's runtime directory (so it
/// finds the editor's server), feeding it `input`.
async fn hook(agent: &str, args: &[&str], runtime_dir: &Path, cwd: &Path, input: &str) -> Ran {
    let (agent, args, runtime_dir, cwd, input) = (
        agent.to_owned(),
        args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>(),
        runtime_dir.to_owned(),
        cwd.to_owned(),
        input.to_owned(),
    );
    tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(binary())
            .arg("hook")
            .arg(&agent)
            .args(&args)
            .current_dir(&cwd)
            .env("VERBATIM_RUNTIME_DIR", &runtime_dir)
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        Ran {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code(),
        }
    })
    .await
    .unwrap()
}

fn codex_input(cwd: &Path, patch: &str) -> String {
    json!({"session_id": "s1", "turn_id": "t1", "cwd": cwd, "hook_event_name": "PreToolUse",
           "permission_mode": "bypassPermissions", "tool_name": "apply_patch", "tool_input": {"command": patch}})
    .to_string()
}

const DISK: &str = "first\nsecond\nthird\nfourth\nfifth\nsixth\nseventh\neighth\n";
const PATCH: &str =
    "*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+FIRST\n@@\n-eighth\n+EIGHTH\n*** End Patch\n";

#[tokio::test]
async fn every_hunk_kept_is_an_allow_unchanged() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("b.txt"), DISK).unwrap();
    editor.set_review(Review::Accept);
    let ran = tokio::time::timeout(
        TIMEOUT,
        hook(
            "codex",
            &[],
            editor.runtime_dir.path(),
            editor.workspace.path(),
            &codex_input(editor.workspace.path(), PATCH),
        ),
    )
    .await
    .unwrap();
    assert_eq!(ran.code, Some(0));
    let answer = ran.answer();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow", "{answer}");
    assert!(answer["hookSpecificOutput"].get("updatedInput").is_none(), "{answer}");
    // The hook wrote nothing itself: the agent does.
    assert_eq!(std::fs::read_to_string(editor.path("b.txt")).unwrap(), DISK);
}

#[tokio::test]
async fn some_hunks_kept_rewrite_the_patch_and_tell_the_reason() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("b.txt", DISK, DISK).await;
    std::fs::write(editor.path("b.txt"), DISK).unwrap();
    editor.set_review(Review::AcceptHunks { keep: vec![0], reason: Some("eighth stays".into()), report: true });
    let ran = tokio::time::timeout(
        TIMEOUT,
        hook(
            "codex",
            &[],
            editor.runtime_dir.path(),
            editor.workspace.path(),
            &codex_input(editor.workspace.path(), PATCH),
        ),
    )
    .await
    .unwrap();
    let answer = ran.answer();
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow", "{answer}");
    let patch = output["updatedInput"]["command"].as_str().unwrap();
    assert!(patch.contains("+FIRST") && !patch.contains("EIGHTH"), "{patch}");
    let context = output["additionalContext"].as_str().unwrap();
    assert!(context.contains("Their reason: eighth stays.") && context.contains("+EIGHTH"), "{context}");
    editor.wait_for_buffer(&uri, &DISK.replace("first", "FIRST")).await;
}

#[tokio::test]
async fn a_rejection_is_a_deny_with_the_persons_words_for_each_agent() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("b.txt"), DISK).unwrap();
    editor.set_review(Review::Reject(Some("not now".into())));
    let cwd = editor.workspace.path();
    let claude = json!({"session_id": "s", "prompt_id": "p", "cwd": cwd, "hook_event_name": "PreToolUse",
                        "permission_mode": "acceptEdits", "tool_name": "Edit",
                        "tool_input": {"file_path": editor.path("b.txt"), "old_string": "second", "new_string": "SECOND"}});
    let ran = hook("claude-code", &[], editor.runtime_dir.path(), cwd, &claude.to_string()).await;
    let answer = ran.answer();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "The person rejected this change in the editor: not now"
    );
    let gemini = json!({"session_id": "s", "cwd": cwd, "hook_event_name": "BeforeTool", "tool_name": "replace",
                        "tool_input": {"file_path": editor.path("b.txt"), "instruction": "x",
                                       "old_string": "second", "new_string": "SECOND"}});
    let ran = hook("gemini-cli", &[], editor.runtime_dir.path(), cwd, &gemini.to_string()).await;
    assert_eq!(
        ran.answer(),
        json!({"decision": "deny", "reason": "The person rejected this change in the editor: not now"})
    );
    assert_eq!(std::fs::read_to_string(editor.path("b.txt")).unwrap(), DISK);
}

#[tokio::test]
async fn an_undecided_review_is_withdrawn_and_denied_before_the_agents_timeout() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("b.txt"), DISK).unwrap();
    editor.set_review(Review::Manual);
    let cwd = editor.workspace.path().to_owned();
    let runtime = editor.runtime_dir.path().to_owned();
    let started = Instant::now();
    let ran = hook("codex", &["--review-timeout", "2"], &runtime, &cwd, &codex_input(&cwd, PATCH)).await;
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    let answer = ran.answer();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("did not decide") && reason.contains("nothing was written"), "{reason}");
    // The editor was told to withdraw the review it was showing.
    let request = editor.next_review().await;
    for _ in 0..200 {
        if editor.cancelled().contains(&request.id) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(editor.cancelled().contains(&request.id), "the applyEdit was cancelled: {:?}", editor.cancelled());
    assert_eq!(std::fs::read_to_string(editor.path("b.txt")).unwrap(), DISK);
}

#[tokio::test]
async fn no_editor_bad_input_and_the_agents_own_errors_give_no_decision() {
    let nowhere = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    std::fs::write(nowhere.path().join("b.txt"), DISK).unwrap();
    let cases = [
        ("codex", codex_input(nowhere.path(), PATCH), "no editor with Verbatim serves this file"),
        ("codex", "not json".to_owned(), "not JSON"),
        (
            "codex",
            codex_input(nowhere.path(), "*** Begin Patch\n*** Update File: b.txt\n@@\n-zzz\n+y\n*** End Patch\n"),
            "do not apply",
        ),
        (
            "claude-code",
            json!({"cwd": nowhere.path(), "hook_event_name": "PreToolUse", "tool_name": "Edit",
                   "tool_input": {"file_path": "b.txt", "old_string": "missing", "new_string": "x"}})
            .to_string(),
            "not in the file",
        ),
        ("nobody", "{}".to_owned(), "unknown agent"),
    ];
    for (agent, input, said) in cases {
        let ran = hook(agent, &[], runtime.path(), nowhere.path(), &input).await;
        assert_eq!((ran.code, ran.stdout.as_str()), (Some(0), ""), "{agent}: {input}");
        assert!(ran.stderr.contains(said), "{agent}: {:?} lacks {said:?}", ran.stderr);
    }
    // Another tool, as `setup --check` sends: silence.
    let check = json!({"hook_event_name": "PreToolUse", "tool_name": "verbatim_setup_check", "tool_input": {}});
    let ran = hook("codex", &[], runtime.path(), nowhere.path(), &check.to_string()).await;
    assert_eq!((ran.code, ran.stdout.as_str(), ran.stderr.as_str()), (Some(0), "", ""));
    assert_eq!(std::fs::read_to_string(nowhere.path().join("b.txt")).unwrap(), DISK);
}

#[tokio::test]
async fn an_editor_that_quits_during_the_review_is_a_deny_never_an_allow() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("b.txt"), DISK).unwrap();
    editor.set_review(Review::Manual);
    let cwd = editor.workspace.path().to_owned();
    let runtime = editor.runtime_dir.path().to_owned();
    let running = tokio::spawn({
        let (cwd, runtime) = (cwd.clone(), runtime.clone());
        async move { hook("codex", &[], &runtime, &cwd, &codex_input(&cwd, PATCH)).await }
    });
    // The review is on screen; then the editor quits without answering.
    let _request = tokio::time::timeout(TIMEOUT, editor.next_review()).await.unwrap();
    editor.shutdown().await;
    let ran = tokio::time::timeout(TIMEOUT, running).await.unwrap().unwrap();
    let answer = ran.answer();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.starts_with("The change was not made:"), "{reason}");
}
