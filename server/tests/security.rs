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
