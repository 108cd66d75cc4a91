//! Who gets in: the socket refuses processes of another user even when the file
//! modes have been loosened, because the server checks `SO_PEERCRED` on every
//! connection. The test connects as `nobody` (it needs root to switch users; as any
//! other user it says so and checks only the file modes).
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use common::ScriptedEditor;

/// A client that connects, sends `initialize`, and prints whether it got an answer.
const CLIENT: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as error:
    print("cannot-connect", error.errno); sys.exit(0)
body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}'
try:
    s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
except (BrokenPipeError, ConnectionResetError):
    print("refused"); sys.exit(0)
s.settimeout(5)
try:
    data = s.recv(65536)
except (socket.timeout, ConnectionResetError):
    data = b""
print("answered" if b'"result"' in data else "refused")
"#;

/// Debian's Python: readable by every user, unlike a per-user pyenv.
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0").unwrap_or(false)
}

#[tokio::test]
async fn another_user_is_refused_even_with_loosened_permissions() {
    let editor = ScriptedEditor::start().await;
    let socket = editor.discovery().await["socket"].as_str().unwrap().to_owned();
    let mode = |path: &str| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);

    let run = |as_nobody: bool| {
        let mut command = if as_nobody {
            let mut command = Command::new("setpriv");
            command.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", SYSTEM_PYTHON]);
            command
        } else {
            Command::new(SYSTEM_PYTHON)
        };
        let output = command.args(["-c", CLIENT, &socket]).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    assert_eq!(run(false), "answered", "the owner must get in");

    if !is_root() {
        eprintln!("not root: cannot switch to `nobody`, so only the owner's access and the modes were checked");
        return;
    }
    // With the modes as the server set them, nobody cannot even reach the socket.
    assert!(run(true).starts_with("cannot-connect"));
    // Loosen everything: the runtime directory (its parent is the world-writable
    // temp directory) and the socket itself.
    std::fs::set_permissions(editor.runtime_dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(run(true), "refused", "the peer-uid check must refuse another user");
    assert_eq!(run(false), "answered", "and still serve the owner");
}

async fn initialize(socket: &str, name: &str) -> (std::sync::Arc<common::Connection>, serde_json::Value) {
    let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let (read, write) = stream.into_split();
    let (connection, _incoming) = common::Connection::start(read, write);
    let result = connection
        .request(
            "initialize",
            serde_json::json!({"processId": null, "rootUri": null, "clientInfo": {"name": name}, "capabilities": {}}),
        )
        .await
        .unwrap();
    connection.notify("initialized", serde_json::json!({})).await;
    (connection, result)
}

#[tokio::test]
async fn the_read_only_socket_allows_reads_and_dry_runs_only() {
    use serde_json::json;
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", "alpha\n", "alpha\n").await;
    let discovery = editor.discovery().await;
    let read_only = discovery["readOnlySocket"].as_str().unwrap();
    let mode = std::fs::metadata(read_only).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let (agent, initialized) = initialize(read_only, "reviewer").await;
    let capabilities = &initialized["capabilities"]["experimental"]["verbatim"];
    assert_eq!(capabilities["access"], "readOnly");
    let methods: Vec<&str> = capabilities["methods"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(
        methods.contains(&"verbatim/read")
            && !methods.contains(&"verbatim/strReplace")
            && !methods.contains(&"verbatim/write"),
        "{methods:?}"
    );
    assert!(capabilities["dryRunOnly"].as_array().unwrap().contains(&json!("verbatim/strReplace")));
    assert_eq!(agent.request("verbatim/read", json!({"uri": uri})).await.unwrap()["text"], "alpha\n");
    let preview = agent
        .request(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "alpha", "newStr": "beta", "dryRun": true, "summary": "s"}),
        )
        .await
        .unwrap();
    assert_eq!(preview["dryRun"], true);
    for (method, params) in [
        ("verbatim/strReplace", json!({"uri": uri, "oldStr": "alpha", "newStr": "beta", "summary": "s"})),
        ("verbatim/write", json!({"uri": editor.uri("new.txt"), "text": "x", "summary": "s"})),
        ("verbatim/batchEdit", json!({"summary": "s", "edits": [{"uri": uri, "oldStr": "alpha", "newStr": "beta"}]})),
    ] {
        let error = agent.request(method, params).await.unwrap_err();
        assert_eq!(error.kind(), "permissionDenied", "{method}");
        assert_eq!(error.code, -33017);
    }
    let status = agent.request("verbatim/status", json!(null)).await.unwrap();
    assert_eq!(status["agents"][0]["access"], "readOnly");
    assert_eq!(editor.buffer(&uri), "alpha\n");
}

#[tokio::test]
async fn the_editor_can_make_every_agent_read_only() {
    use serde_json::json;
    let editor = ScriptedEditor::start_with(common::EditorOptions {
        initialization_options: json!({"agentAccess": "readOnly"}),
        ..common::EditorOptions::default()
    })
    .await;
    let uri = editor.open("a.txt", "alpha\n", "alpha\n").await;
    let agent = editor.agent("agent").await;
    let error = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "alpha", "newStr": "beta", "summary": "s"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "permissionDenied");
}

#[tokio::test]
async fn secrets_and_repository_internals_are_off_limits() {
    use serde_json::json;
    let editor = ScriptedEditor::start().await;
    std::fs::create_dir(editor.path(".git")).unwrap();
    std::fs::write(editor.path(".git/config"), "[core]\n").unwrap();
    std::fs::write(editor.path(".env"), "TOKEN=secret\n").unwrap();
    let env_uri = editor.open(".env.local", "TOKEN=x\n", "TOKEN=x\n").await;
    let agent = editor.agent("agent").await;
    let read = agent.call("verbatim/read", json!({"uri": editor.uri(".env")})).await.unwrap_err();
    assert_eq!(read.kind(), "permissionDenied");
    assert_eq!(read.data["pattern"], ".env");
    let git = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": editor.uri(".git/config"), "oldStr": "core", "newStr": "x", "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(git.kind(), "permissionDenied");
    // Open in the editor or not, a denied file is not written.
    let open = agent
        .call("verbatim/strReplace", json!({"uri": env_uri, "oldStr": "x", "newStr": "y", "summary": "s"}))
        .await
        .unwrap_err();
    assert_eq!(open.kind(), "permissionDenied");
    assert!(open.message.contains("writeDenyList"), "{}", open.message);
    assert_eq!(std::fs::read_to_string(editor.path(".env")).unwrap(), "TOKEN=secret\n");
}

#[tokio::test]
async fn open_documents_outside_the_workspace_are_not_written_unless_allowed() {
    use serde_json::json;
    for allowed in [false, true] {
        let editor = ScriptedEditor::start_with(common::EditorOptions {
            initialization_options: json!({"allowWritesOutsideWorkspace": allowed, "writeDenyList": ["*.lock"]}),
            ..common::EditorOptions::default()
        })
        .await;
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("notes.txt");
        std::fs::write(&path, "one\n").unwrap();
        let uri = common::file_uri(&path);
        editor
            .connection
            .notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": "one\n"}}),
            )
            .await;
        editor.sync().await;
        let agent = editor.agent("agent").await;
        // Reading an open document is fine either way.
        assert_eq!(agent.read(&uri).await["text"], "one\n");
        let result = agent
            .call(
                "verbatim/strReplace",
                json!({"uri": uri, "oldStr": "one", "newStr": "two", "dryRun": true, "summary": "s"}),
            )
            .await;
        assert!(result.is_ok(), "dry runs write nothing: {result:?}");
        let result = agent
            .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "one", "newStr": "two", "summary": "s"}))
            .await;
        if allowed {
            // The scripted editor does not have it open in its own model, so it refuses;
            // what matters is that the server let the edit through to the editor.
            assert_ne!(result.as_ref().err().map(common::RpcError::kind), Some("outsideWorkspace"), "{result:?}");
        } else {
            assert_eq!(result.unwrap_err().kind(), "outsideWorkspace");
        }
        // A custom deny list replaces the default one.
        let lock = agent
            .call("verbatim/write", json!({"uri": editor.uri("Cargo.lock"), "text": "x", "summary": "s"}))
            .await
            .unwrap_err();
        assert_eq!(lock.kind(), "permissionDenied");
        std::fs::write(editor.path(".env"), "A=1\n").unwrap();
        assert_eq!(agent.read(&editor.uri(".env")).await["text"], "A=1\n");
    }
}
