//! Targets 4, 5 and 6, end to end against the real binary: an agent's request over
//! the Unix socket → server → `workspace/applyEdit` to an auto-applying editor in
//! another process → `didChange` → result; 8 agents on 8 documents at once; the
//! server's resident memory with 1,000 open documents of 100 KB; time to answer
//! `initialize`; a headless `verbatim edit` from process start to exit.
//!
//! `cargo bench -p verbatim --bench end_to_end` prints the figures;
//! `-- --test` runs every scenario with tiny counts. The editor is this same
//! program started again with `VERBATIM_BENCH_ROLE=editor`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

#[path = "support.rs"]
mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ropey::Rope;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use verbatim_engine::position::{Position, PositionEncoding};
use verbatim_engine::text_change::{TextChange, apply_change};

async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Value> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, message: &Value) {
    let body = serde_json::to_vec(message).unwrap();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend(body);
    writer.write_all(&frame).await.unwrap();
    writer.flush().await.unwrap();
}

/// Line `i` of a benchmark document, in state `k`.
fn doc_line(i: usize, k: u64) -> String {
    format!("    let v{i} = {k}; // the quick brown fox jumps over the lazy dog\n")
}

fn doc_uri(dir: &Path, index: usize) -> String {
    format!("file://{}/doc{index}.rs", dir.display())
}

// ---------------------------------------------------------------- editor role

/// The auto-applying editor: starts `verbatim lsp`, opens the documents, then
/// applies every WorkspaceEdit whose version matches and sends its didChange.
async fn editor_role() {
    let binary = std::env::var("VERBATIM_BENCH_BIN").unwrap();
    let workspace = PathBuf::from(std::env::var("VERBATIM_BENCH_DIR").unwrap());
    let documents: usize = std::env::var("VERBATIM_BENCH_DOCS").unwrap().parse().unwrap();
    let doc_bytes: usize = std::env::var("VERBATIM_BENCH_DOC_BYTES").unwrap().parse().unwrap();
    let (mut server, mut to_server, mut from_server) =
        start_server(Command::new(binary), &workspace, json!({"needsConfirmation": false, "diagnostics": true})).await;
    let mut texts: HashMap<String, (Rope, i32)> = HashMap::new();
    for index in 0..documents {
        let mut text = String::with_capacity(doc_bytes + 100);
        let mut i = 0;
        while text.len() < doc_bytes {
            text.push_str(&doc_line(i, 0));
            i += 1;
        }
        let uri = doc_uri(&workspace, index);
        if std::env::var_os("VERBATIM_BENCH_ON_DISK").is_some() {
            // The file holds what the buffer holds: the server watches it and keeps its baseline.
            std::fs::write(workspace.join(format!("doc{index}.rs")), &text).unwrap();
        }
        write_frame(
            &mut to_server,
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}}),
        )
        .await;
        texts.insert(uri, (Rope::from_str(&text), 1));
    }
    // The person types in every document: each keeps a revision history.
    let changes: i32 = std::env::var("VERBATIM_BENCH_CHANGES").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    for (uri, (rope, version)) in texts.iter_mut() {
        for change in 0..changes {
            let line = (change as usize * 7919) % rope.len_lines().saturating_sub(1).max(1);
            let at = json!({"line": line, "character": 0});
            apply_change(
                rope,
                &TextChange {
                    range: Some(Position::new(line as u32, 0)..Position::new(line as u32, 0)),
                    text: "x".into(),
                },
                PositionEncoding::Utf16,
            );
            *version += 1;
            write_frame(
                &mut to_server,
                &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": *version},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}}),
            )
            .await;
        }
    }
    // Once the server answers this, it has applied every didOpen.
    write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": 1, "method": "verbatim/status"})).await;
    loop {
        let message = read_frame(&mut from_server).await.unwrap();
        if message["id"] == 1 && message.get("method").is_none() {
            break;
        }
    }
    let pid = server.id().unwrap();
    let mut stdout = tokio::io::stdout();
    stdout.write_all(format!("ready {pid}\n").as_bytes()).await.unwrap();
    stdout.flush().await.unwrap();
    // Serve applyEdit until the bench closes our stdin.
    let mut stdin = tokio::io::stdin();
    let mut buffer = [0u8; 1];
    loop {
        tokio::select! {
            message = read_frame(&mut from_server) => {
                let Some(message) = message else { return };
                if message["method"] == "verbatim/diagnostics" {
                    // A language server that has settled at once: 50 problems per document,
                    // the same before and after, so the bench measures Verbatim's own cost.
                    let documents: Vec<Value> = message["params"]["uris"].as_array().unwrap().iter().map(|uri| {
                        let diagnostics: Vec<Value> = (0..50u64).map(|k| json!({
                            "range": {"start": {"line": k * 97 + 13, "character": 4}, "end": {"line": k * 97 + 13, "character": 9}},
                            "severity": 1, "source": "bench", "code": format!("E{k}"), "message": format!("problem {k}")})).collect();
                        json!({"uri": uri, "status": "settled", "sources": ["bench"], "diagnostics": diagnostics})
                    }).collect();
                    write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": message["id"], "result": {"documents": documents}})).await;
                    continue;
                }
                if message["method"] != "workspace/applyEdit" {
                    if message.get("id").is_some() && message.get("method").is_some() {
                        write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": message["id"], "result": null})).await;
                    }
                    continue;
                }
                let mut applied = true;
                let mut notifications = Vec::new();
                for change in message["params"]["edit"]["documentChanges"].as_array().unwrap() {
                    let uri = change["textDocument"]["uri"].as_str().unwrap();
                    let (rope, version) = texts.get_mut(uri).unwrap();
                    if change["textDocument"]["version"].as_i64() != Some(i64::from(*version)) {
                        applied = false;
                        break;
                    }
                    let mut edits: Vec<&Value> = change["edits"].as_array().unwrap().iter().collect();
                    edits.sort_by_key(|edit| std::cmp::Reverse((edit["range"]["start"]["line"].as_u64(), edit["range"]["start"]["character"].as_u64())));
                    let mut content_changes = Vec::new();
                    for edit in edits {
                        let position = |p: &Value| Position::new(p["line"].as_u64().unwrap() as u32, p["character"].as_u64().unwrap() as u32);
                        let range = position(&edit["range"]["start"])..position(&edit["range"]["end"]);
                        let text = edit["newText"].as_str().unwrap().to_owned();
                        apply_change(rope, &TextChange { range: Some(range), text: text.clone() }, PositionEncoding::Utf16);
                        content_changes.push(json!({"range": edit["range"], "text": text}));
                    }
                    *version += 1;
                    notifications.push(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                        "textDocument": {"uri": uri, "version": *version}, "contentChanges": content_changes}}));
                }
                for notification in notifications {
                    write_frame(&mut to_server, &notification).await;
                }
                write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": applied}})).await;
            }
            read = stdin.read(&mut buffer) => {
                if matches!(read, Ok(0) | Err(_)) {
                    let _ = server.kill().await;
                    return;
                }
            }
        }
    }
}

/// Starts `verbatim lsp` as an editor would and initializes it with one workspace folder.
async fn start_server(
    mut command: Command,
    workspace: &Path,
    initialization_options: Value,
) -> (Child, tokio::process::ChildStdin, BufReader<tokio::process::ChildStdout>) {
    let mut server = command
        .arg("lsp")
        .env("VERBATIM_LOG", std::env::var("VERBATIM_BENCH_LOG").unwrap_or_else(|_| "warn".into()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut to_server = server.stdin.take().unwrap();
    let mut from_server = BufReader::new(server.stdout.take().unwrap());
    write_frame(
        &mut to_server,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "processId": null, "rootUri": null,
        "workspaceFolders": [{"uri": format!("file://{}", workspace.display()), "name": "bench"}],
        "initializationOptions": initialization_options,
        "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                         "workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {}}}}}}),
    )
    .await;
    read_frame(&mut from_server).await.unwrap();
    write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})).await;
    (server, to_server, from_server)
}

// ----------------------------------------------------------------- bench role

struct EditorProcess {
    child: Child,
    server_pid: u32,
    socket: PathBuf,
    workspace: tempfile::TempDir,
    _runtime: tempfile::TempDir,
}

async fn start_editor(documents: usize, doc_bytes: usize) -> EditorProcess {
    start_editor_with(documents, doc_bytes, false).await
}

/// `on_disk`: the documents' files exist on disk with the buffers' text.
async fn start_editor_with(documents: usize, doc_bytes: usize, on_disk: bool) -> EditorProcess {
    start_editor_typing(documents, doc_bytes, on_disk, 0).await
}

/// `changes`: one-character changes the editor makes in every document once open.
async fn start_editor_typing(documents: usize, doc_bytes: usize, on_disk: bool, changes: usize) -> EditorProcess {
    let workspace = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let mut command = Command::new(std::env::current_exe().unwrap());
    if on_disk {
        command.env("VERBATIM_BENCH_ON_DISK", "1");
    }
    command.env("VERBATIM_BENCH_CHANGES", changes.to_string());
    let mut child = command
        .env("VERBATIM_BENCH_ROLE", "editor")
        .env("VERBATIM_BENCH_BIN", env!("CARGO_BIN_EXE_verbatim"))
        .env("VERBATIM_BENCH_DIR", workspace.path())
        .env("VERBATIM_BENCH_DOCS", documents.to_string())
        .env("VERBATIM_BENCH_DOC_BYTES", doc_bytes.to_string())
        .env("VERBATIM_RUNTIME_DIR", runtime.path())
        // The server's journal goes there too, not to the user's state directory.
        .env("VERBATIM_STATE_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    let server_pid: u32 = line.trim().strip_prefix("ready ").unwrap().parse().unwrap();
    let socket = runtime.path().join(format!("{server_pid}.sock"));
    EditorProcess { child, server_pid, socket, workspace, _runtime: runtime }
}

struct Agent {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
    next_id: i64,
}

impl Agent {
    async fn connect(socket: &Path, name: &str) -> Self {
        let (read, write) = tokio::net::UnixStream::connect(socket).await.unwrap().into_split();
        let mut agent = Self { reader: BufReader::new(read), writer: write, next_id: 0 };
        agent
            .call(
                "initialize",
                json!({"processId": null, "rootUri": null, "clientInfo": {"name": name}, "capabilities": {}}),
            )
            .await
            .unwrap();
        write_frame(&mut agent.writer, &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})).await;
        agent
    }

    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        write_frame(
            &mut self.writer,
            &json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}),
        )
        .await;
        loop {
            let message = read_frame(&mut self.reader).await.unwrap();
            if message["id"] == self.next_id {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }
}

/// Runs `edits` strReplace calls on one document; returns each call's latency.
async fn edit_loop(agent: Agent, uri: String, lines: usize, edits: usize, seed: u64) -> Vec<Duration> {
    edit_loop_asking(agent, uri, lines, edits, seed, false).await
}

/// `edit_loop`, each edit asking for diagnostics when `diagnostics` is set.
async fn edit_loop_asking(
    mut agent: Agent,
    uri: String,
    lines: usize,
    edits: usize,
    seed: u64,
    diagnostics: bool,
) -> Vec<Duration> {
    let mut states = vec![0u64; lines];
    let mut random = support::Random::new(seed);
    let mut latencies = Vec::with_capacity(edits);
    for _ in 0..edits {
        let i = random.below(lines);
        let k = states[i];
        let started = Instant::now();
        let result = agent
            .call("verbatim/strReplace", json!({"uri": uri, "oldStr": format!("let v{i} = {k};"), "newStr": format!("let v{i} = {};", k + 1), "summary": "bench", "diagnostics": diagnostics}))
            .await;
        latencies.push(started.elapsed());
        let result = result.unwrap();
        assert_eq!(result["applied"], true);
        if diagnostics {
            assert_eq!(result["diagnostics"]["status"], "settled", "{result}");
            assert_eq!(result["diagnostics"]["existing"], 50, "{result}");
        }
        states[i] = k + 1;
    }
    latencies
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

const DOC_10K_LINES: usize = 10_000;

async fn latency(quick: bool) {
    let bytes = DOC_10K_LINES * doc_line(5000, 0).len();
    let editor = start_editor(1, bytes).await;
    let agent = Agent::connect(&editor.socket, "bench-agent").await;
    let edits = if quick { 20 } else { 2000 };
    let mut latencies = edit_loop(agent, doc_uri(editor.workspace.path(), 0), DOC_10K_LINES, edits, 3).await;
    latencies.sort();
    println!(
        "end_to_end/one_agent_10k_lines: {edits} edits, median {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3
    );
    drop(editor.child);
}

/// The cost of diagnostics after an edit to Verbatim itself: the editor answers at
/// once (its language servers' wait is measured in the editors' own suites).
async fn diagnostics(quick: bool) {
    let bytes = DOC_10K_LINES * doc_line(5000, 0).len();
    let editor = start_editor(4, bytes).await;
    let edits = if quick { 20 } else { 1000 };
    // Alternate, each round on a document of its own.
    for (round, asking) in [false, true, false, true].into_iter().enumerate() {
        let agent = Agent::connect(&editor.socket, "bench-agent").await;
        let uri = doc_uri(editor.workspace.path(), round);
        let mut latencies = edit_loop_asking(agent, uri, DOC_10K_LINES, edits, round as u64, asking).await;
        latencies.sort();
        println!(
            "end_to_end/diagnostics_{}: {edits} edits on 10k lines, median {:.3} ms, p99 {:.3} ms",
            if asking { "on" } else { "off" },
            percentile(&latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        );
    }
    drop(editor.child);
}

async fn throughput(quick: bool) {
    let bytes = DOC_10K_LINES * doc_line(5000, 0).len();
    let editor = start_editor(8, bytes).await;
    let per_agent = if quick { 10 } else { 1000 };
    let mut agents = Vec::new();
    for index in 0..8 {
        agents.push(Agent::connect(&editor.socket, &format!("agent-{index}")).await);
    }
    let started = Instant::now();
    let tasks: Vec<_> = agents
        .into_iter()
        .enumerate()
        .map(|(index, agent)| {
            tokio::spawn(edit_loop(
                agent,
                doc_uri(editor.workspace.path(), index),
                DOC_10K_LINES,
                per_agent,
                index as u64 + 10,
            ))
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let total = 8 * per_agent;
    println!(
        "end_to_end/eight_agents_eight_docs: {total} edits in {:.2} s = {:.0} edits/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    drop(editor.child);
}

async fn memory(quick: bool) {
    let (documents, bytes) = if quick { (20, 100 * 1024) } else { (1000, 100 * 1024) };
    for on_disk in [false, true] {
        let editor = start_editor_with(documents, bytes, on_disk).await;
        let rss_mib = resident_kib(editor.server_pid) as f64 / 1024.0;
        let text_mib = (documents * bytes) as f64 / (1024.0 * 1024.0);
        let files = if on_disk { "files on disk, watched, with baselines" } else { "no files on disk" };
        println!(
            "end_to_end/memory: {documents} documents of {} KB = {text_mib:.1} MiB of text ({files}); server RSS {rss_mib:.1} MiB; budget 1.5 × text + 30 MiB = {:.1} MiB",
            bytes / 1024,
            1.5 * text_mib + 30.0
        );
        if on_disk {
            // Idle: nothing changes; a watcher that polls would show here.
            let seconds = if quick { 0.5 } else { 10.0 };
            let before = cpu_ticks(editor.server_pid);
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            let ticks = cpu_ticks(editor.server_pid) - before;
            println!(
                "end_to_end/idle: {documents} open documents watched: server CPU {:.2}% over {seconds} s idle ({ticks} ticks)",
                ticks as f64 / 100.0 / seconds * 100.0
            );
        }
        drop(editor.child);
    }
    // Issue 12: every document keeps its recent revisions for rebasing.
    let changes = if quick { 5 } else { 100 };
    for on_disk in [false, true] {
        let editor = start_editor_typing(documents, bytes, on_disk, changes).await;
        let rss_mib = resident_kib(editor.server_pid) as f64 / 1024.0;
        let text_mib = (documents * bytes) as f64 / (1024.0 * 1024.0);
        let files = if on_disk { "files on disk, with baselines" } else { "no files on disk" };
        println!(
            "end_to_end/memory: {documents} documents of {} KB, {changes} changes typed in each ({files}; each keeps its revision history): server RSS {rss_mib:.1} MiB; budget {:.1} MiB",
            bytes / 1024,
            1.5 * text_mib + 30.0
        );
        drop(editor.child);
    }
}

/// User plus system CPU time of a process, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    fields.get(11).and_then(|utime| utime.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|stime| stime.parse::<u64>().ok()).unwrap_or(0)
}

/// Issue 16: a file written on disk while its buffer has unsaved changes, until the
/// editor receives the merged edit. This process is the editor; each write changes
/// one line far from the person's, atomically (temp file + rename), as agents write.
async fn external(quick: bool) {
    let writes = if quick { 5 } else { 200 };
    let workspace = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..DOC_10K_LINES).map(|i| doc_line(i, 0)).collect();
    let path = workspace.path().join("watched.rs");
    std::fs::write(&path, lines.concat()).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_verbatim"));
    command.env("VERBATIM_RUNTIME_DIR", runtime.path()).env("VERBATIM_STATE_DIR", runtime.path());
    let (mut server, mut to_server, mut from_server) =
        start_server(command, workspace.path(), json!({"externalChanges": "auto"})).await;
    let uri = format!("file://{}", path.display());
    // The buffer has an unsaved first line, so every change on disk is a merge.
    let buffer = format!("// unsaved\n{}", lines.concat());
    write_frame(
        &mut to_server,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": buffer}}}),
    )
    .await;
    write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": 1, "method": "verbatim/status"})).await;
    while read_frame(&mut from_server).await.unwrap()["id"] != 1 {}
    let mut version = 1;
    let mut disk_lines = lines.clone();
    let mut latencies = Vec::with_capacity(writes);
    for write in 0..writes {
        let line = DOC_10K_LINES / 2 + write % 1000;
        disk_lines[line] = doc_line(line, write as u64 + 1);
        let temp = workspace.path().join(".watched.rs.tmp");
        std::fs::write(&temp, disk_lines.concat()).unwrap();
        let started = Instant::now();
        std::fs::rename(&temp, &path).unwrap();
        let request = loop {
            let message = read_frame(&mut from_server).await.unwrap();
            if message["method"] == "workspace/applyEdit" {
                break message;
            }
            let kind = &message["params"]["kind"];
            assert!(message["method"] != "verbatim/externalChange" || kind == "offered", "unexpected {message}");
        };
        latencies.push(started.elapsed());
        version += 1;
        let change = &request["params"]["edit"]["documentChanges"][0];
        write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            // Applied one after another, so from the last to the first: an earlier edit
            // would move a later one on the same line.
            "contentChanges": change["edits"].as_array().unwrap().iter().rev().map(|edit| json!({"range": edit["range"], "text": edit["newText"]})).collect::<Vec<_>>()}})).await;
        write_frame(&mut to_server, &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"applied": true}})).await;
        // Let the server see the change and settle before the next write.
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    latencies.sort();
    println!(
        "end_to_end/external: disk write (rename) → merged workspace/applyEdit received, 10,000-line buffer with unsaved changes: {writes} writes, median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3
    );
    let _ = server.kill().await;
}

async fn startup(quick: bool) {
    let runs = if quick { 3 } else { 30 };
    let mut times = Vec::new();
    for _ in 0..runs {
        let runtime = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let mut server = Command::new(env!("CARGO_BIN_EXE_verbatim"))
            .arg("lsp")
            .env("VERBATIM_RUNTIME_DIR", runtime.path())
            .env("VERBATIM_STATE_DIR", runtime.path())
            .env("VERBATIM_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = server.stdin.take().unwrap();
        let mut stdout = BufReader::new(server.stdout.take().unwrap());
        write_frame(&mut stdin, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": null, "rootUri": null, "capabilities": {}}})).await;
        read_frame(&mut stdout).await.unwrap();
        times.push(started.elapsed());
        drop(stdin);
        let _ = server.wait().await;
    }
    times.sort();
    println!(
        "end_to_end/startup: `verbatim lsp` spawn → initialize answered: median {:.2} ms over {runs} runs",
        percentile(&times, 0.5).as_secs_f64() * 1e3
    );
}

/// Target 6b: `verbatim edit` with no editor running, on a 10,000-line file: each run
/// is a whole process (parse, route, lock, read, plan, atomic write, journal).
async fn headless(quick: bool) {
    let runs = if quick { 3 } else { 30 };
    let project = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let text: String = (0..10_000).map(|i| doc_line(i, 0)).collect();
    std::fs::write(project.path().join("big.rs"), &text).unwrap();
    let mut times = Vec::new();
    for run in 0..runs {
        // Alternate two states of one line, so every run applies an edit.
        let (old, new) = (doc_line(5_000, run % 2), doc_line(5_000, (run + 1) % 2));
        let started = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_verbatim"))
            .args(["edit", "big.rs", "--old", &old, "--new", &new, "-m", "bench"])
            .current_dir(project.path())
            .env("VERBATIM_RUNTIME_DIR", runtime.path())
            .env("VERBATIM_STATE_DIR", runtime.path())
            .stdout(Stdio::null())
            .status()
            .await
            .unwrap();
        times.push(started.elapsed());
        assert!(status.success(), "verbatim edit failed");
    }
    times.sort();
    println!(
        "end_to_end/headless: `verbatim edit` on 10,000 lines, start → exit: median {:.2} ms, max {:.2} ms over {runs} runs",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 1.0).as_secs_f64() * 1e3
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if std::env::var("VERBATIM_BENCH_ROLE").as_deref() == Ok("editor") {
        runtime.block_on(editor_role());
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|arg| arg == "--test");
    let filter = args.iter().skip(1).find(|arg| !arg.starts_with("--")).cloned();
    let selected = |name: &str| filter.as_deref().is_none_or(|filter| name.contains(filter));
    runtime.block_on(async {
        if selected("startup") {
            startup(quick).await;
        }
        if selected("latency") {
            latency(quick).await;
        }
        if selected("throughput") {
            throughput(quick).await;
        }
        if selected("memory") {
            memory(quick).await;
        }
        if selected("headless") {
            headless(quick).await;
        }
        if selected("external") {
            external(quick).await;
        }
        if selected("diagnostics") {
            diagnostics(quick).await;
        }
    });
}
