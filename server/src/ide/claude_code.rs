//! Claude Code's IDE tools, served to one connection: `openDiff` as a Verbatim review
//! ([`crate::ide::proposal`]), the editor queries ([`crate::ide::editor_queries`]),
//! and the `selection_changed` / `at_mentioned` notifications. Answers are shaped as
//! Claude Code reads them (`FILE_SAVED` + the text, `DIFF_REJECTED` + the tab name;
//! JSON in text blocks for the queries).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use verbatim_engine::position::PositionEncoding;

use crate::ide::editor_queries::{self, Show};
use crate::ide::mcp::{self, Outgoing, ToolFuture, ToolResult, Tools};
use crate::ide::proposal::{self, DiffOutcome};
use crate::service::editor_context::{ContextEvent, Selection};
use crate::service::registry::AgentInfo;
use crate::service::state::State;

/// The name Claude Code goes by in reviews, the registry and the journal.
pub const AGENT_NAME: &str = "Claude Code";
/// At most one `selection_changed` per this long.
const SELECTION_INTERVAL: Duration = Duration::from_millis(50);
/// Claude Code ignores notifications for a moment after it connects (1 to 3 s seen with
/// 2.1.332, even after `ide_connected`): the latest selection is sent again then.
const SELECTION_RESENDS: [Duration; 2] = [Duration::from_millis(1500), Duration::from_millis(3500)];

/// One Claude Code connection.
pub struct ClaudeCodeIde {
    state: Arc<State>,
    agent: Mutex<AgentInfo>,
    /// The reviews waiting for the person, by tab name, each with its number.
    tabs: Mutex<HashMap<String, (u64, CancellationToken)>>,
    next_review: std::sync::atomic::AtomicU64,
    /// Ends the notification task with the connection.
    closed: CancellationToken,
}

impl ClaudeCodeIde {
    /// Registers the connection as an agent and starts its notifications.
    pub fn connect(state: Arc<State>, outgoing: Outgoing) -> Arc<Self> {
        let id = state.registry().next_agent_id();
        let agent = AgentInfo {
            id,
            session: crate::service::registry::session_of(id),
            turn: None,
            name: AGENT_NAME.into(),
            version: None,
            connected_at: crate::service::clock::now_rfc3339(),
            encoding: PositionEncoding::Utf16,
            access: state.main_socket_access(),
            options: Default::default(),
        };
        state.registry().add_agent(agent.clone());
        state.notify_status();
        let ide = Arc::new(Self {
            state,
            agent: Mutex::new(agent),
            tabs: Mutex::default(),
            next_review: std::sync::atomic::AtomicU64::new(1),
            closed: CancellationToken::new(),
        });
        tokio::spawn(forward_context(ide.state.clone(), outgoing, ide.closed.clone()));
        ide
    }

    fn agent(&self) -> AgentInfo {
        self.agent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    fn tabs(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.tabs.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn open_diff(&self, arguments: &Value, cancel: CancellationToken) -> ToolResult {
        let text = |name: &str| arguments.get(name).and_then(Value::as_str);
        let (Some(path), Some(proposal)) = (text("new_file_path").or(text("old_file_path")), text("new_file_contents"))
        else {
            return ToolResult::error("openDiff needs new_file_path and new_file_contents");
        };
        let tab = text("tab_name").unwrap_or(path).to_owned();
        let withdrawn = CancellationToken::new();
        let number = self.next_review.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some((_, previous)) = self.tabs().insert(tab.clone(), (number, withdrawn.clone())) {
            // The same tab again: the older review is replaced, as an IDE replaces a tab.
            previous.cancel();
        }
        let agent = self.agent();
        let outcome = tokio::select! {
            outcome = proposal::review_file(&self.state, &agent, Path::new(path), proposal) => outcome,
            () = withdrawn.cancelled() => DiffOutcome::Rejected { why: "Claude Code closed the tab".into() },
            () = cancel.cancelled() => DiffOutcome::Rejected { why: "Claude Code cancelled the call".into() },
        };
        {
            let mut tabs = self.tabs();
            if tabs.get(&tab).is_some_and(|(current, _)| *current == number) {
                tabs.remove(&tab);
            }
        }
        match outcome {
            DiffOutcome::Accepted { text, modified } => {
                tracing::info!(path, modified, "openDiff: accepted; Claude Code writes the file");
                ToolResult::texts(["FILE_SAVED".to_owned(), text])
            }
            DiffOutcome::Rejected { why } => {
                tracing::info!(path, "openDiff: rejected ({why})");
                ToolResult::texts(["DIFF_REJECTED".to_owned(), tab])
            }
        }
    }

    fn close_tab(&self, arguments: &Value) -> ToolResult {
        if let Some(tab) = arguments.get("tab_name").and_then(Value::as_str)
            && let Some((_, review)) = self.tabs().remove(tab)
        {
            tracing::info!(tab, "Claude Code closed the tab of a review: withdrawn");
            review.cancel();
        }
        ToolResult::texts(["TAB_CLOSED"])
    }

    fn close_all(&self) -> ToolResult {
        let reviews: Vec<CancellationToken> = self.tabs().drain().map(|(_, (_, review))| review).collect();
        for review in &reviews {
            review.cancel();
        }
        ToolResult::texts([format!("CLOSED_{}_DIFF_TABS", reviews.len())])
    }

    async fn diagnostics(&self, arguments: &Value) -> ToolResult {
        let path = arguments.get("uri").and_then(Value::as_str).map(path_of);
        match editor_queries::diagnostics(&self.state, path.as_deref()).await {
            Ok(answer) => {
                let files: Vec<Value> = answer
                    .get("documents")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|document| {
                        let diagnostics: Vec<Value> = document
                            .get("diagnostics")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(readable_diagnostic)
                            .collect();
                        json!({"uri": document.get("uri"), "diagnostics": diagnostics})
                    })
                    .collect();
                ToolResult::texts([Value::Array(files).to_string()])
            }
            Err(why) => ToolResult::error(format!("No diagnostics: {why}.")),
        }
    }

    fn open_editors(&self) -> ToolResult {
        let workspace = self.state.workspace();
        let tabs: Vec<Value> = editor_queries::open_documents(&self.state)
            .into_iter()
            .map(|document| {
                let label = document.path.file_name().map(|name| name.to_string_lossy().into_owned());
                json!({"uri": document.uri, "isActive": document.active, "label": label,
                       "languageId": document.language_id, "isDirty": document.dirty,
                       "relativePath": workspace.label(&verbatim_engine::doc_key::DocKey::File(document.path.clone()))})
            })
            .collect();
        ToolResult::texts([json!({"tabs": tabs}).to_string()])
    }

    fn workspace_folders(&self) -> ToolResult {
        let workspace = self.state.workspace();
        let folders: Vec<Value> = workspace
            .folders()
            .iter()
            .map(|folder| {
                let name = folder.file_name().map(|name| name.to_string_lossy().into_owned());
                json!({"name": name, "uri": verbatim_engine::doc_key::DocKey::File(folder.clone()).to_uri(),
                       "path": folder.display().to_string()})
            })
            .collect();
        let root = workspace.folders().first().map(|folder| folder.display().to_string());
        ToolResult::texts([json!({"success": true, "folders": folders, "rootPath": root}).to_string()])
    }

    fn check_dirty(&self, arguments: &Value) -> ToolResult {
        let Some(path) = arguments.get("filePath").and_then(Value::as_str) else {
            return ToolResult::error("checkDocumentDirty needs filePath");
        };
        let answer = match editor_queries::is_dirty(&self.state, &path_of(path)) {
            Some(dirty) => json!({"success": true, "filePath": path, "isDirty": dirty, "isUntitled": false}),
            None => json!({"success": false, "message": format!("Document not open: {path}")}),
        };
        ToolResult::texts([answer.to_string()])
    }

    async fn save(&self, arguments: &Value) -> ToolResult {
        let Some(path) = arguments.get("filePath").and_then(Value::as_str) else {
            return ToolResult::error("saveDocument needs filePath");
        };
        let answer = match editor_queries::save(&self.state, &path_of(path)).await {
            Ok(result) => json!({"success": result.saved, "filePath": path, "saved": result.saved,
                                 "message": result.message.unwrap_or_else(|| if result.saved { "Document saved".into() } else { "Document not saved".into() })}),
            Err(why) => json!({"success": false, "filePath": path, "saved": false, "message": why}),
        };
        ToolResult::texts([answer.to_string()])
    }

    async fn open_file(&self, arguments: &Value) -> ToolResult {
        let text = |name: &str| arguments.get(name).and_then(Value::as_str);
        let Some(path) = text("filePath") else {
            return ToolResult::error("openFile needs filePath");
        };
        let show = Show {
            start: text("startText"),
            end: text("endText"),
            take_focus: arguments.get("makeFrontmost").and_then(Value::as_bool).unwrap_or(true),
        };
        match editor_queries::show(&self.state, &path_of(path), show).await {
            Ok(()) => ToolResult::texts([format!("Opened file: {path}")]),
            Err(why) => ToolResult::error(format!("Could not open {path}: {why}")),
        }
    }

    fn selection(&self) -> ToolResult {
        let answer = match self.state.context.latest_selection() {
            Some(selection) => {
                json!({"success": true, "text": selection.text, "filePath": selection.path.display().to_string(),
                                      "fileUrl": selection.uri, "selection": selection_json(&selection)})
            }
            None => json!({"success": false, "message": "No active editor found"}),
        };
        ToolResult::texts([answer.to_string()])
    }
}

impl Drop for ClaudeCodeIde {
    fn drop(&mut self) {
        self.closed.cancel();
        for (_, (_, review)) in self.tabs().drain() {
            review.cancel();
        }
        let id = self.agent().id;
        self.state.registry().remove_agent(id);
        self.state.notify_status();
    }
}

impl Tools for ClaudeCodeIde {
    fn server_name(&self) -> &'static str {
        "verbatim"
    }

    fn initialized(&self, client: &Value) {
        let version = client.pointer("/clientInfo/version").and_then(Value::as_str).map(ToOwned::to_owned);
        let mut agent = self.agent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        agent.version = version;
        self.state.registry().add_agent(agent.clone());
    }

    fn list(&self) -> Vec<Value> {
        tool_list()
    }

    fn call(self: Arc<Self>, name: String, arguments: Value, cancel: CancellationToken) -> ToolFuture {
        Box::pin(async move {
            match name.as_str() {
                "openDiff" => self.open_diff(&arguments, cancel).await,
                "close_tab" => self.close_tab(&arguments),
                "closeAllDiffTabs" => self.close_all(),
                "getDiagnostics" => self.diagnostics(&arguments).await,
                "getOpenEditors" => self.open_editors(),
                "getWorkspaceFolders" => self.workspace_folders(),
                "checkDocumentDirty" => self.check_dirty(&arguments),
                "saveDocument" => self.save(&arguments).await,
                "openFile" => self.open_file(&arguments).await,
                "getCurrentSelection" | "getLatestSelection" => self.selection(),
                "executeCode" => ToolResult::error(
                    "executeCode is not supported: Verbatim runs no code in the editor. Run it in a terminal instead.",
                ),
                other => ToolResult::error(format!("Unknown tool: {other}")),
            }
        })
    }
}

/// Sends the person's selection and at-mentions to Claude Code until the connection ends.
async fn forward_context(state: Arc<State>, outgoing: Outgoing, closed: CancellationToken) {
    let mut events = state.context.subscribe();
    let connected = tokio::time::Instant::now();
    let mut last_sent = connected - SELECTION_INTERVAL;
    let mut pending: Option<Selection> = state.context.latest_selection();
    let mut resends = SELECTION_RESENDS.iter().map(|after| connected + *after).collect::<Vec<_>>().into_iter();
    let mut resend_at = resends.next();
    loop {
        let wake = last_sent + SELECTION_INTERVAL;
        tokio::select! {
            () = closed.cancelled() => return,
            () = tokio::time::sleep_until(resend_at.unwrap_or(connected)), if resend_at.is_some() => {
                resend_at = resends.next();
                if pending.is_none() {
                    pending = state.context.latest_selection();
                }
            }
            () = tokio::time::sleep_until(wake), if pending.is_some() => {
                if let Some(selection) = pending.take() {
                    mcp::notify(&outgoing, "selection_changed", selection_notification(&selection));
                    tracing::debug!(
                        path = %selection.path.display(),
                        line = selection.range.end.line + 1,
                        "selection_changed sent to Claude Code"
                    );
                    last_sent = tokio::time::Instant::now();
                }
            }
            event = events.recv() => match event {
                Ok(ContextEvent::Selection(selection)) => pending = Some(selection),
                Ok(ContextEvent::AtMention(mention)) => {
                    let (start, end) = mention.lines.unwrap_or((0, 0));
                    let mut params = json!({"filePath": mention.path.display().to_string()});
                    if mention.lines.is_some() {
                        params["lineStart"] = json!(start);
                        params["lineEnd"] = json!(end);
                    }
                    mcp::notify(&outgoing, "at_mentioned", params);
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}

fn selection_notification(selection: &Selection) -> Value {
    json!({"text": selection.text, "filePath": selection.path.display().to_string(), "fileUrl": selection.uri,
           "selection": selection_json(selection)})
}

fn selection_json(selection: &Selection) -> Value {
    let range = selection.range;
    json!({"start": {"line": range.start.line, "character": range.start.character},
           "end": {"line": range.end.line, "character": range.end.character},
           "isEmpty": range.start == range.end})
}

/// A path as Claude Code names it: a plain path, or a `file:` URI (getDiagnostics).
fn path_of(name: &str) -> PathBuf {
    match verbatim_engine::doc_key::DocKey::parse(name) {
        Ok(key) => key.path().map_or_else(|| PathBuf::from(name), Path::to_path_buf),
        Err(_) => PathBuf::from(name),
    }
}

/// An LSP diagnostic with its severity spelled out, as Claude Code's IDEs send it.
fn readable_diagnostic(diagnostic: &Value) -> Value {
    let severity = match diagnostic.get("severity").and_then(Value::as_u64) {
        Some(1) => "Error",
        Some(2) => "Warning",
        Some(3) => "Information",
        Some(4) => "Hint",
        _ => "Error",
    };
    let mut readable = diagnostic.clone();
    readable["severity"] = json!(severity);
    readable
}

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn tool(name: &str, description: &str, input_schema: Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": input_schema})
}

fn tool_list() -> Vec<Value> {
    let string = |description: &str| json!({"type": "string", "description": description});
    let path_only = |description: &str| schema(json!({"filePath": string(description)}), &["filePath"]);
    vec![
        tool(
            "openDiff",
            "Show a proposed change of a file for review in the editor's live buffer and wait for the person's decision",
            schema(
                json!({"old_file_path": string("The file as it is"), "new_file_path": string("The file to write"),
                       "new_file_contents": string("The whole proposed text"), "tab_name": string("The review's name")}),
                &["old_file_path", "new_file_path", "new_file_contents", "tab_name"],
            ),
        ),
        tool(
            "close_tab",
            "Withdraw the review shown under a tab name",
            schema(json!({"tab_name": string("The review's name")}), &["tab_name"]),
        ),
        tool("closeAllDiffTabs", "Withdraw every review this connection opened", schema(json!({}), &[])),
        tool(
            "getDiagnostics",
            "The problems the editor's language servers report, for one file or every open file",
            schema(json!({"uri": string("A file URI; every open file when left out")}), &[]),
        ),
        tool("getOpenEditors", "The files open in the editor", schema(json!({}), &[])),
        tool("getWorkspaceFolders", "The editor's workspace folders", schema(json!({}), &[])),
        tool("checkDocumentDirty", "Whether an open file has unsaved changes", path_only("The file")),
        tool("saveDocument", "Save an open file in the editor", path_only("The file")),
        tool(
            "openFile",
            "Show a file in the editor, optionally selecting the lines from startText to endText",
            schema(
                json!({"filePath": string("The file"), "preview": {"type": "boolean"}, "startText": string("Text on the first line to select"),
                       "endText": string("Text on the last line to select"), "selectToEndOfLine": {"type": "boolean"},
                       "makeFrontmost": {"type": "boolean"}}),
                &["filePath"],
            ),
        ),
        tool("getCurrentSelection", "The person's selection in the editor", schema(json!({}), &[])),
        tool("getLatestSelection", "The person's latest selection in the editor", schema(json!({}), &[])),
        tool("executeCode", "Not supported by Verbatim", schema(json!({"code": string("Code")}), &["code"])),
    ]
}
