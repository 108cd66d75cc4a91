//! `verbatim mcp`: an MCP server on stdio (the official `rmcp` SDK) whose tools map
//! one to one onto the protocol, each call routed by [`Frontend`]: to the editor
//! serving the file, else headless on disk.
//!
//! The tool descriptions teach the ladder an agent should climb: a bare
//! `str_replace` for a small fix; on `ambiguous`, narrow with `after`/`before` or
//! resend with the `occurrence` the error gave; `replace_range` for a block;
//! `write_file` only for new or small files. Errors come back as tool errors whose
//! text (in MCP's parameter names) says what to send next. A write waiting for the
//! person's review keeps waiting, with progress notifications when the client
//! asked for them. Claude Code and Codex show the model only `structuredContent`, so
//! every tool but `read_file` returns there what its text says ([`tool_output`]).
//!
//! [`tool_output`]: crate::frontend::tool_output
//!
//! Each tool takes its method's params type ([`crate::service::protocol::params`]): its
//! input schema is derived from that type, and its arguments are read into it
//! (`mcp/arguments.rs`) and sent as they are, with paths made URIs. Adding a tool: the
//! params type with its [`MethodParams`] impl, a `#[tool]` method that calls
//! `VerbatimMcp::tool` with it, and the method's arm in
//! [`crate::headless::Headless::call`] if it can work without an editor.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use crate::frontend::client::Identity;
use crate::frontend::render::{self, Diffs, Vocabulary};
use crate::frontend::tool_output::{
    DiagnosticsOutput, DocumentsOutput, EditOutput, ErrorOutput, FileOutput, JournalOutput, OpenDocumentOutput,
    input_schema, output_schema,
};
use crate::frontend::{Frontend, FrontendError, Routed, Via, is_write, uris_of};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::protocol::{
    ApplyPatchParams, ApplyPatchResult, BatchEditParams, BatchResult, DiagnosticsLevel, DocumentInfo, DocumentsParams,
    EditResult, MethodParams, ReadParams, ReadResult, ReplaceRangeParams, RevertParams, StrReplaceParams,
    TimelineParams, WriteParams,
};

mod arguments;

/// How often a call waiting for review reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The server's instructions; `{headless}` says what becomes of a file no editor serves.
const INSTRUCTIONS: &str = "Verbatim edits files inside the person's editor (VS Code, Neovim), where they review \
each edit; {headless} Edits quote text, never line numbers. Read with read_file, then: str_replace for most changes; replace_range to rewrite a block; batch_edit (or apply_patch) for \
changes that must land together; write_file only for new or small files. Give each edit a one-line summary (the \
person sees it) and the rev you read as base_rev. A call waits while the person reviews; they may keep only some \
hunks, and the result's message says which and gives the rev to use next: read the file again before building on a \
partial edit.";
const HEADLESS_WRITES: &str = "when no editor serves a file, it edits the file on disk.";
const HEADLESS_REFUSED: &str =
    "when no editor serves a file, it does not write it: edit such files with your own edit tool.";

const READ_FILE: &str = "Read a file as the person's editor has it (unsaved changes included), or from disk when the \
editor does not have it open. Returns a header line (path, rev, line endings, where the text came from), a blank line, \
then the exact text (no line numbers added). Quote from this text in your edits. Pass the rev as base_rev in your next \
edit of this file: it is then moved over changes made since in other parts of the file, and refused (stale) only if \
the text you quoted changed.";

const STR_REPLACE: &str = "Replace one exact quote in a file. Use this for almost every change. Quote in old_str a \
few lines that occur exactly once in the file (copy them from read_file, whitespace and indentation included), give \
the replacement in new_str, and a one-line summary of why (the person reviews it in their editor). The call waits \
while the person reviews; they may keep only some hunks (the result says which). With no editor the file is written \
at once, unless this server leaves such writes to your own edit tool (the error says so).\n\
If old_str occurs several times, the call fails and lists every match with its line, column and context: resend \
the same call with occurrence set to the number of the match you mean, or narrow the search with after (a quote \
that occurs once, before the target) and/or before (a quote after it). replace_all changes every match. To insert, \
quote a neighbouring line and repeat it in new_str together with the new text. To rewrite a whole block (a function, \
a section), use replace_range instead of quoting all of it.";

const REPLACE_RANGE: &str = "Replace a whole block without quoting its middle: from the start of from_str through \
the end of to_str, both included. from_str must occur once in the file (or in the window after/before give), and \
to_str once after it. Use this to rewrite a function, a class or a section; for small changes use str_replace. \
Example: from_str \"fn parse(\" and to_str \"\\n}\\n\" replace the whole function parse, and new_str holds the \
new function.";

const BATCH_EDIT: &str = "Apply several edits, in one or more files, as one change: every edit applies or none does, \
and the person reviews them together. Each entry is a str_replace entry (path, old_str, new_str, optional after, \
before, occurrence, replace_all, base_rev) or a replace_range entry (path, from_str, to_str, new_str, optional \
after, before, base_rev). All entries are matched against the same snapshot, so their quotes refer to the text as \
you read it; entries must not overlap. Use it for renames across files and for changes that only make sense \
together. An error names the failing entry as edits[N].";

const WRITE_FILE: &str = "Create a new file, or replace the whole text of a small existing file. Replacing an \
existing file requires base_rev from your last read_file, so that nothing the person changed since is lost. For \
changes inside an existing file prefer str_replace or replace_range: they show a focused diff and cannot revert text \
you did not mean to touch.";

const APPLY_PATCH: &str = "Apply a patch in a format you already know, reviewed as one change: all of it applies or \
none does. Two formats: OpenAI's apply_patch (`*** Begin Patch`, `*** Add File: path` with + lines, `*** Update File: \
path` with @@ hunks of context, - and + lines and an optional `*** Move to: path`, `*** Delete File: path`, `*** End \
Patch`), or SEARCH/REPLACE blocks (a path line, then <<<<<<< SEARCH, the exact old lines, =======, the new lines, \
>>>>>>> REPLACE). Relative paths are taken from the editor's workspace folders (without an editor, from the working \
directory, and the files are written on disk, all or nothing). Hunks are matched like quotes (unique, small slips \
forgiven unless exact is set); every failing hunk is reported with its patch line. For one small change, str_replace \
is simpler.";

const TIMELINE: &str = "List the changes every agent made (yours included), newest first: sessions, their turns, each \
write with its files, outcome and ids. Use it to find what to undo with `revert`: an entry id or write id, a turn or a \
session.";

const REVERT: &str = "Undo changes as a new change the person reviews, keeping everything done since: `ids` (from \
`timeline`), or a whole `turn` or `session`. Where a later change touched the same lines, the revert is not applied \
blindly: the person sees both texts and chooses (without an editor, those lines are left as they are and listed). The \
revert can itself be reverted. Use dry_run to see what would change first.";

const LIST_DOCUMENTS: &str = "List the documents open in the person's editor, with their revs. Empty when no editor \
with verbatim serves the working directory (edits then go straight to disk).";

/// The MCP server.
#[derive(Debug, Clone)]
pub struct VerbatimMcp {
    frontend: Arc<Frontend>,
    /// The agent was named on the command line; otherwise the MCP client's name is used.
    agent_fixed: bool,
    /// `--diagnostics`: what every write reports unless its arguments say otherwise.
    diagnostics: Option<DiagnosticsLevel>,
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve(
    frontend: Arc<Frontend>,
    agent_fixed: bool,
    diagnostics: Option<DiagnosticsLevel>,
) -> std::io::Result<()> {
    let mut server = VerbatimMcp::new(frontend, agent_fixed);
    server.diagnostics = diagnostics;
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The tool's arguments as its method's params; a mistake is a tool error that says
/// what was wrong, in the tool's names.
fn parse<P: MethodParams>(tool: &str, arguments: JsonObject, shape: Shape) -> Result<P, Box<CallToolResult>> {
    arguments::params_of(arguments).map_err(|error| {
        let error = ProtocolError::new(
            ErrorKind::InvalidParams,
            format!("invalid arguments for {tool}: {error}. See the tool's input schema for its parameters."),
        );
        // Not through the vocabulary: the message names the fields exactly as they were sent.
        let text = format!("{}: {}", error.kind, error.message);
        Box::new(tool_error(shape, text, Some(ErrorOutput::from_error(&error))))
    })
}

/// The form of a tool's `structuredContent` (its `outputSchema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// No structured content: the text reaches the model as it is (`read_file`).
    TextOnly,
    /// [`EditOutput`].
    Edit,
    /// [`DocumentsOutput`].
    Documents,
    /// [`JournalOutput`].
    Journal,
}

/// A tool error: the text, and for tools with an output schema the same in `structuredContent`.
fn tool_error(shape: Shape, message: String, error: Option<ErrorOutput>) -> CallToolResult {
    let structured = match shape {
        Shape::TextOnly => None,
        Shape::Edit => {
            let mut output = EditOutput::failed(message.clone(), None);
            output.error = error;
            serde_json::to_value(output).ok()
        }
        Shape::Documents => {
            serde_json::to_value(DocumentsOutput { message: message.clone(), documents: Vec::new(), error }).ok()
        }
        Shape::Journal => serde_json::to_value(JournalOutput { message: message.clone(), result: None, error }).ok(),
    };
    let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
    result.structured_content = structured;
    result
}

/// A tool's answer: the text content, and what goes into `structuredContent`.
struct Described {
    text: String,
    structured: Option<Value>,
}

/// Puts `key` into `params` when the optional value is present.
fn put<T: serde::Serialize>(params: &mut Value, key: &str, value: Option<T>) {
    if let Some(value) = value {
        params[key] = json!(value);
    }
}

#[tool_router]
impl VerbatimMcp {
    pub fn new(frontend: Arc<Frontend>, agent_fixed: bool) -> Self {
        Self { frontend, agent_fixed, diagnostics: None }
    }

    #[tool(description = READ_FILE, input_schema = input_schema::<ReadParams>(), annotations(read_only_hint = true))]
    async fn read_file(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        let mut params: ReadParams = match parse("read_file", arguments, Shape::TextOnly) {
            Ok(params) => params,
            Err(error) => return *error,
        };
        // The header names the file as the model named it.
        let path = params.uri.clone();
        self.frontend.resolve_paths(&mut params);
        self.run(ReadParams::METHOD, params.to_wire(), &context, Shape::TextOnly, |routed| {
            let result: ReadResult = serde_json::from_value(routed.result.clone()).ok()?;
            let headless_writes = self.frontend.options().headless_writes;
            let header = render::read_header_with(&result, &path, headless_writes);
            let text = format!("{header}\n\n{}", result.text);
            Some(Described { text, structured: None })
        })
        .await
    }

    #[tool(description = STR_REPLACE, input_schema = input_schema::<StrReplaceParams>(), output_schema = output_schema::<EditOutput>())]
    async fn str_replace(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<StrReplaceParams>("str_replace", arguments, &context, Shape::Edit, edit_text, |_| {}).await
    }

    #[tool(description = REPLACE_RANGE, input_schema = input_schema::<ReplaceRangeParams>(), output_schema = output_schema::<EditOutput>())]
    async fn replace_range(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<ReplaceRangeParams>("replace_range", arguments, &context, Shape::Edit, edit_text, |_| {}).await
    }

    #[tool(description = BATCH_EDIT, input_schema = input_schema::<BatchEditParams>(), output_schema = output_schema::<EditOutput>())]
    async fn batch_edit(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<BatchEditParams>("batch_edit", arguments, &context, Shape::Edit, batch_text, |_| {}).await
    }

    #[tool(description = WRITE_FILE, input_schema = input_schema::<WriteParams>(), output_schema = output_schema::<EditOutput>())]
    async fn write_file(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<WriteParams>("write_file", arguments, &context, Shape::Edit, edit_text, |_| {}).await
    }

    #[tool(description = APPLY_PATCH, input_schema = input_schema::<ApplyPatchParams>(), output_schema = output_schema::<EditOutput>())]
    async fn apply_patch(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<ApplyPatchParams>("apply_patch", arguments, &context, Shape::Edit, patch_text, |_| {}).await
    }

    #[tool(description = TIMELINE, input_schema = input_schema::<TimelineParams>(), output_schema = output_schema::<JournalOutput>(), annotations(read_only_hint = true))]
    async fn timeline(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        // Bounded for a model, whose every token counts (the wire's default is everything).
        self.tool("timeline", arguments, &context, Shape::Journal, journal_text, |params: &mut TimelineParams| {
            params.limit.get_or_insert(20);
            params.max_edits.get_or_insert(100);
        })
        .await
    }

    #[tool(description = REVERT, input_schema = input_schema::<RevertParams>(), output_schema = output_schema::<JournalOutput>())]
    async fn revert(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<RevertParams>("revert", arguments, &context, Shape::Journal, journal_text, |_| {}).await
    }

    #[tool(description = LIST_DOCUMENTS, input_schema = input_schema::<DocumentsParams>(), output_schema = output_schema::<DocumentsOutput>(), annotations(read_only_hint = true))]
    async fn list_documents(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.tool::<DocumentsParams>("list_documents", arguments, &context, Shape::Documents, documents_text, |_| {})
            .await
    }
}

/// The structured output of a result that covers several files (a batch, a patch).
fn many_files_output(
    routed: &Routed,
    (applied, dry_run, partial): (bool, bool, bool),
    reason: &Option<String>,
    documents: &[crate::service::protocol::DocumentResult],
    diagnostics: Option<&crate::service::protocol::DiagnosticsReport>,
) -> EditOutput {
    let mut output = EditOutput::new(String::new(), applied, dry_run, &routed.via);
    output.partial = partial;
    output.reason = reason.clone();
    output.files = documents.iter().map(FileOutput::from_result).collect();
    output.diagnostics = diagnostics.map(DiagnosticsOutput::from_report);
    output
}

fn batch_text(routed: &Routed) -> Option<Described> {
    let result: BatchResult = serde_json::from_value(routed.result.clone()).ok()?;
    let text = render::batch_result(&result, &routed.via);
    let message = render::batch_result_with(&result, &routed.via, Diffs::Omitted);
    let output = many_files_output(
        routed,
        (result.applied, result.dry_run, result.partial),
        &result.reason,
        &result.documents,
        result.diagnostics.as_ref(),
    );
    Some(finish_edit(routed, text, message, output))
}

fn patch_text(routed: &Routed) -> Option<Described> {
    let result: ApplyPatchResult = serde_json::from_value(routed.result.clone()).ok()?;
    let text = render::patch_result(&result, &routed.via);
    let message = render::patch_result_with(&result, &routed.via, Diffs::Omitted);
    let output = many_files_output(
        routed,
        (result.applied, result.dry_run, result.partial),
        &result.reason,
        &result.documents,
        result.diagnostics.as_ref(),
    );
    Some(finish_edit(routed, text, message, output))
}

/// The text of a `timeline` or `revert` result: its message (a revert's) or a summary of
/// the sessions, with the whole result in `structuredContent`.
fn journal_text(routed: &Routed) -> Option<Described> {
    let mut result = routed.result.clone();
    let text = match serde_json::from_value::<crate::service::protocol::RevertResult>(result.clone()) {
        Ok(revert) => render::revert(&revert),
        Err(_) => {
            let timeline: crate::service::protocol::TimelineResult = serde_json::from_value(result.clone()).ok()?;
            // The lists of every agent and file are for an editor's filters: an agent
            // filters by naming one, and the lists would only cost it tokens.
            if let Some(object) = result.as_object_mut() {
                object.remove("agents");
                object.remove("files");
            }
            render::timeline(&timeline)
        }
    };
    let output = JournalOutput { message: text.clone(), result: Some(result), error: None };
    Some(Described { text, structured: serde_json::to_value(output).ok() })
}

fn documents_text(routed: &Routed) -> Option<Described> {
    let documents: Vec<DocumentInfo> = serde_json::from_value(routed.result.clone()).ok()?;
    let text = render::documents(&documents);
    let output = DocumentsOutput {
        message: text.clone(),
        documents: documents.iter().map(OpenDocumentOutput::from_info).collect(),
        error: None,
    };
    Some(Described { text, structured: serde_json::to_value(output).ok() })
}

/// The text of a `strReplace`, `replaceRange` or `write` result.
fn edit_text(routed: &Routed) -> Option<Described> {
    let result: EditResult = serde_json::from_value(routed.result.clone()).ok()?;
    let text = render::edit_result(&result, &routed.via);
    let message = render::edit_result_with(&result, &routed.via, Diffs::Omitted);
    let mut output = EditOutput::new(String::new(), result.applied, result.dry_run, &routed.via);
    output.partial = result.document.partial;
    output.reason = result.reason.clone();
    output.files = vec![FileOutput::from_result(&result.document)];
    output.diagnostics = result.diagnostics.as_ref().map(DiagnosticsOutput::from_report);
    Some(finish_edit(routed, text, message, output))
}

/// Adds what every edit says at its end (the rev to use next, the git commit) to the
/// text and to the structured message alike.
fn finish_edit(routed: &Routed, text: String, message: String, mut output: EditOutput) -> Described {
    let mut tail = String::new();
    if output.applied && !output.dry_run {
        for file in output.files.iter().filter(|file| file.operation.as_deref() != Some("delete")) {
            if let Some(rev) = &file.rev {
                let name = file.new_path.as_deref().unwrap_or(&file.path);
                let (pronoun, name) = if output.files.len() == 1 {
                    ("The file".to_owned(), "this file")
                } else {
                    (name.to_owned(), "it")
                };
                tail.push_str(&format!("{pronoun} is now at rev {rev}: pass it as base_rev to edit {name} again.\n"));
            }
        }
        if output.partial {
            tail.push_str("Read the file again before building on this edit: the person did not keep all of it.\n");
        }
    }
    if let Some(commit) = routed.result.get("commit").and_then(Value::as_str) {
        tail.push_str(&format!("Committed to git as {commit}.\n"));
        output.commit = Some(commit.to_owned());
    }
    if let Some(error) = routed.result.get("commitError").and_then(Value::as_str) {
        tail.push_str(&format!("Warning: {error}\n"));
        output.commit_error = Some(error.to_owned());
    }
    let join = |body: String| if tail.is_empty() { body } else { format!("{}\n{tail}", body.trim_end()) };
    output.message = join(message).trim_end().to_owned();
    Described { text: join(text), structured: serde_json::to_value(output).ok() }
}

impl VerbatimMcp {
    /// Names the agent after the MCP client, unless the command line named it.
    fn learn_agent(&self, context: &RequestContext<RoleServer>) {
        if self.agent_fixed {
            return;
        }
        let client =
            context.peer.peer_info().map(|info| info.client_info.clone()).or_else(|| context.meta.client_info());
        if let Some(client) = client.filter(|client| !client.name.trim().is_empty()) {
            let identity =
                Identity { name: client.name, version: Some(client.version).filter(|version| !version.is_empty()) };
            if identity != self.frontend.agent() {
                self.frontend.set_agent(identity);
            }
        }
    }

    /// Parses a tool's arguments into its method's params, makes its paths URIs, lets
    /// the tool fill in what it defaults, and runs the call.
    async fn tool<P: MethodParams>(
        &self,
        tool: &str,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
        shape: Shape,
        describe: fn(&Routed) -> Option<Described>,
        defaults: impl FnOnce(&mut P),
    ) -> CallToolResult {
        match parse::<P>(tool, arguments, shape) {
            Ok(mut params) => {
                self.frontend.resolve_paths(&mut params);
                defaults(&mut params);
                self.run(P::METHOD, params.to_wire(), context, shape, describe).await
            }
            Err(error) => *error,
        }
    }

    /// Runs one call; while a write waits for review, reports progress if asked to.
    async fn run(
        &self,
        name: &str,
        params: Value,
        context: &RequestContext<RoleServer>,
        shape: Shape,
        describe: impl FnOnce(&Routed) -> Option<Described>,
    ) -> CallToolResult {
        self.learn_agent(context);
        let mut params = params;
        if is_write(name) && params.get("diagnostics").is_none() {
            put(&mut params, "diagnostics", self.diagnostics);
        }
        let dry_run = params.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
        let via = match self.frontend.resolve(&uris_of(&params)).await {
            Ok(via) => via,
            Err(error) => return tool_error(shape, error_text(&error), Some(ErrorOutput::from_error(&error))),
        };
        let waits_for_review = is_write(name) && !dry_run && matches!(via, Via::Editor { .. });
        let call = self.frontend.call_via(via, name, params);
        tokio::pin!(call);
        let progress_token = context.meta.get_progress_token().filter(|_| waits_for_review);
        let mut ticker = tokio::time::interval(PROGRESS_EVERY);
        let started = tokio::time::Instant::now();
        let mut step = 0u32;
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                () = context.ct.cancelled() => {
                    // Dropping the call closes its connection: the server then asks the
                    // editor to withdraw a review that was waiting.
                    let cancelled = ErrorOutput { kind: "cancelled".into(), data: Default::default() };
                    return tool_error(shape, "cancelled: the call was cancelled; the editor was asked to withdraw an edit that waited for review. Read the file again before retrying.".into(), Some(cancelled));
                }
                _ = ticker.tick(), if progress_token.is_some() => {
                    if let Some(token) = &progress_token {
                        step += 1;
                        let waited = started.elapsed().as_secs();
                        let message = format!("waiting for the person to review the edit in the editor ({waited} s)");
                        let notification = ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
                        let _ = context.peer.notify_progress(notification).await;
                    }
                }
            }
        };
        match outcome {
            Ok(routed) => match describe(&routed) {
                // Claude Code and Codex show the model only `structuredContent`: it
                // carries the same words as the text (see `tool_output`).
                Some(Described { text, structured }) => {
                    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                    result.structured_content = structured;
                    result
                }
                None => tool_error(
                    shape,
                    format!("internal error: the server's result could not be read: {}", routed.result),
                    None,
                ),
            },
            Err(FrontendError::Protocol(error)) => {
                tool_error(shape, error_text(&error), Some(ErrorOutput::from_error(&error)))
            }
            Err(FrontendError::Internal(message)) => tool_error(shape, format!("internal error: {message}"), None),
        }
    }
}

/// An error as a model reads it: its kind, then what to do next.
pub fn error_text(error: &ProtocolError) -> String {
    format!("{}: {}", error.kind, render::error(error, Vocabulary::Mcp))
}

#[tool_handler]
impl ServerHandler for VerbatimMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("verbatim", env!("CARGO_PKG_VERSION"))
                    .with_description("Edit files inside the person's editor by quoting text"),
            )
            .with_instructions(INSTRUCTIONS.replace(
                "{headless}",
                if self.frontend.options().headless_writes { HEADLESS_WRITES } else { HEADLESS_REFUSED },
            ))
    }
}
