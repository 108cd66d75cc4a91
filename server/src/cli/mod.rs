//! The agent-facing commands of the `verbatim` binary: build the protocol's params
//! from the arguments, run them through [`Frontend`] (the editor that serves the
//! file, else headless), and print the result for people or, with `--json`, for
//! programs. Exit codes say which error kind ended a command ([`exit`]).

pub mod args;
pub mod exit;
mod output;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use verbatim::frontend::client::Identity;
use verbatim::frontend::render::{self, Vocabulary};
use verbatim::frontend::{Frontend, FrontendError, FrontendOptions, Routed};
use verbatim::service::discovery::{discovery_dirs, runtime_dir};
use verbatim::service::error::{ProtocolError, params_error};
use verbatim::service::journal::Journal;
use verbatim::service::protocol::{
    ApplyPatchParams, ApplyPatchResult, BatchEditParams, BatchResult, DocumentInfo, DocumentsParams, EditResult,
    MethodParams, ReadParams, ReadResult, ReplaceRangeParams, RevertParams, StrReplaceParams, WriteParams,
};
use verbatim_engine::doc_key::DocKey;

use args::{EditArgs, LogArgs, ReplaceRangeArgs, RouteArgs, WindowArgs};

/// The agent name used when `--agent` is not given.
const DEFAULT_AGENT: &str = "verbatim-cli";

/// Why a command failed, and so its exit code.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Protocol(ProtocolError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<FrontendError> for Failure {
    fn from(error: FrontendError) -> Self {
        match error {
            FrontendError::Protocol(error) => Self::Protocol(error),
            FrontendError::Internal(message) => Self::Internal(message),
        }
    }
}

impl Failure {
    fn code(&self) -> u8 {
        match self {
            Self::Usage(_) => exit::USAGE,
            Self::Protocol(error) => exit::of_kind(error.kind),
            Self::Internal(_) => exit::INTERNAL,
        }
    }

    fn report(&self, json_output: bool) -> ExitCode {
        if json_output {
            let (kind, code, message, data) = match self {
                Self::Usage(message) => ("usage", Value::Null, message.clone(), Value::Null),
                Self::Protocol(error) => (
                    error.kind.as_str(),
                    json!(error.kind.code()),
                    error.message.clone(),
                    Value::Object(error.data.clone()),
                ),
                Self::Internal(message) => ("internal", Value::Null, message.clone(), Value::Null),
            };
            output::json(&json!({"error": {"kind": kind, "code": code, "message": message, "data": data}}));
        } else {
            match self {
                Self::Protocol(error) => {
                    output::note(&format!("verbatim: {}: {}", error.kind, render::error(error, Vocabulary::Cli)))
                }
                Self::Usage(_) | Self::Internal(_) => output::note(&format!("verbatim: {self}")),
            }
        }
        ExitCode::from(self.code())
    }
}

/// Runs an agent-facing command (everything but `lsp` and `mcp`).
pub fn run(command: args::Command) -> ExitCode {
    use args::Command;
    let json_output = match &command {
        Command::Read { output, .. }
        | Command::Batch { output, .. }
        | Command::Patch { output, .. }
        | Command::Write { output, .. }
        | Command::Documents { output, .. } => output.json,
        Command::Edit(args) => args.output.json,
        Command::ReplaceRange(args) => args.output.json,
        Command::Editors { json } => *json,
        Command::Log(args) => args.json,
        Command::Revert(args) => args.output.json,
        Command::Lsp { .. } | Command::Mcp { .. } | Command::Setup(_) | Command::Hook(_) => false,
    };
    let outcome = match command {
        Command::Editors { json } => editors(json),
        Command::Log(args) => log(&args),
        Command::Revert(args) => match revert(&args) {
            Ok(code) => return ExitCode::from(code),
            Err(failure) => Err(failure),
        },
        Command::Setup(args) => setup(&args),
        Command::Hook(args) => return hook(&args),
        other => call(other),
    };
    match outcome {
        Ok(()) => ExitCode::from(exit::OK),
        Err(failure) => failure.report(json_output),
    }
}

/// `verbatim hook`: always exits 0; no decision is an empty stdout.
fn hook(args: &args::HookArgs) -> ExitCode {
    use std::io::{IsTerminal, Read};
    use verbatim::frontend::agents::Agent;
    // The input is read first, whatever the arguments say: an agent writing its payload
    // to a hook that exited unread would meet a broken pipe instead of our message (a
    // person trying the command at a terminal is told at once).
    let agent = Agent::parse(&args.agent);
    let mut input = String::new();
    if (agent.is_some() || !std::io::stdin().is_terminal())
        && let Err(error) = std::io::stdin().take(HOOK_INPUT_LIMIT).read_to_string(&mut input)
    {
        output::note(&format!("verbatim hook: cannot read the hook's input ({error}); no decision"));
        return ExitCode::from(exit::OK);
    }
    let Some(agent) = agent else {
        output::note(&format!("verbatim hook: unknown agent {:?}: use {}; no decision", args.agent, Agent::NAMES));
        return ExitCode::from(exit::OK);
    };
    let options = match frontend_options(&RouteArgs {
        socket: None,
        headless: false,
        agent: None,
        root: Vec::new(),
        git_commit: false,
        no_headless_writes: true,
        turn: None,
    }) {
        Ok(options) => options,
        Err(message) => {
            output::note(&format!("verbatim hook: {message}; no decision"));
            return ExitCode::from(exit::OK);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            output::note(&format!("verbatim hook: cannot start the async runtime ({error}); no decision"));
            return ExitCode::from(exit::OK);
        }
    };
    let answer = runtime.block_on(verbatim::frontend::hook::run(agent, &input, options, args.review_timeout));
    if !answer.stderr.is_empty() {
        output::note(&answer.stderr);
    }
    output::out(&answer.stdout);
    ExitCode::from(exit::OK)
}

/// The most of a hook's input read (a whole-file Write of a large file fits).
const HOOK_INPUT_LIMIT: u64 = 256 * 1024 * 1024;

fn call(command: args::Command) -> Result<(), Failure> {
    use args::Command;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::Internal(format!("cannot start the async runtime: {error}")))?;
    let mut stdin = StdinOnce::default();
    match command {
        Command::Read { path, route, output } => {
            let frontend = frontend(&route)?;
            let label = path.clone();
            let routed = runtime.block_on(frontend.request(ReadParams { uri: path }))?;
            if output.json {
                output::json(&with_via(&routed));
            } else {
                let result: ReadResult = decode(&routed.result)?;
                output::note(&render::read_header(&result, &label));
                output::out(&result.text);
            }
        }
        Command::Edit(args) => {
            let frontend = frontend(&args.route)?;
            let params = edit_params(&args, &mut stdin)?;
            let routed = runtime.block_on(frontend.request(params))?;
            print_edit(&routed, args.output.json)?;
        }
        Command::ReplaceRange(args) => {
            let frontend = frontend(&args.route)?;
            let params = replace_range_params(&args, &mut stdin)?;
            let routed = runtime.block_on(frontend.request(params))?;
            print_edit(&routed, args.output.json)?;
        }
        Command::Write { path, text_file, base_rev, summary, diagnostics, route, output } => {
            let frontend = frontend(&route)?;
            let text = stdin
                .text_of(None, Some(text_file.unwrap_or_else(|| PathBuf::from("-"))), "the text")?
                .unwrap_or_default();
            let params = WriteParams {
                uri: path,
                text,
                summary,
                turn: None,
                base_rev,
                diagnostics: diagnostics.level(),
                diagnostics_timeout_ms: diagnostics.diagnostics_timeout_ms,
            };
            let routed = runtime.block_on(frontend.request(params))?;
            print_edit(&routed, output.json)?;
        }
        Command::Batch { summary, dry_run, diagnostics, route, output } => {
            let frontend = frontend(&route)?;
            let mut params = batch_params(
                &stdin.text_of(None, Some(PathBuf::from("-")), "the batch")?.unwrap_or_default(),
                summary,
                dry_run,
            )?;
            // The flags win over the JSON.
            params.diagnostics = diagnostics.level().or(params.diagnostics);
            params.diagnostics_timeout_ms = diagnostics.diagnostics_timeout_ms.or(params.diagnostics_timeout_ms);
            let routed = runtime.block_on(frontend.request(params))?;
            if output.json {
                output::json(&with_via(&routed));
            } else {
                let result: BatchResult = decode(&routed.result)?;
                output::out(&render::batch_result(&result, &routed.via));
                commit_notes(&routed);
            }
        }
        Command::Patch { patch_file, summary, dry_run, exact, diagnostics, route, output } => {
            let frontend = frontend(&route)?;
            let patch = stdin
                .text_of(None, Some(patch_file.unwrap_or_else(|| PathBuf::from("-"))), "the patch")?
                .unwrap_or_default();
            let params = ApplyPatchParams {
                patch,
                summary,
                turn: None,
                dry_run,
                exact,
                diagnostics: diagnostics.level(),
                diagnostics_timeout_ms: diagnostics.diagnostics_timeout_ms,
            };
            let routed = runtime.block_on(frontend.request(params))?;
            if output.json {
                output::json(&with_via(&routed));
            } else {
                let result: ApplyPatchResult = decode(&routed.result)?;
                output::out(&render::patch_result(&result, &routed.via));
            }
        }
        Command::Documents { route, output } => {
            let frontend = frontend(&route)?;
            let routed = runtime.block_on(frontend.request(DocumentsParams {}))?;
            if output.json {
                output::json(&routed.result);
            } else {
                let documents: Vec<DocumentInfo> = decode(&routed.result)?;
                output::out(&render::documents(&documents));
            }
        }
        Command::Lsp { .. }
        | Command::Mcp { .. }
        | Command::Editors { .. }
        | Command::Log(_)
        | Command::Revert(_)
        | Command::Setup(_)
        | Command::Hook(_) => {
            return Err(Failure::Internal("this command is not an agent call".into()));
        }
    }
    // Reading stdin may occupy a blocking thread; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(())
}

/// The options every front-end call shares.
pub fn frontend_options(route: &RouteArgs) -> Result<FrontendOptions, String> {
    let cwd = std::env::current_dir().map_err(|error| format!("cannot read the current directory: {error}"))?;
    let roots = route.root.iter().map(|root| if root.is_absolute() { root.clone() } else { cwd.join(root) }).collect();
    Ok(FrontendOptions {
        agent: Identity {
            name: route.agent.clone().unwrap_or_else(|| DEFAULT_AGENT.to_owned()),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        },
        socket: route.socket.clone(),
        headless: route.headless,
        roots,
        cwd,
        git_commit: route.git_commit,
        headless_writes: !route.no_headless_writes,
        runtime_dir: runtime_dir(),
        discovery_dirs: discovery_dirs(),
        journal: Journal::from_env(),
        turn: route.turn.clone(),
    })
}

fn frontend(route: &RouteArgs) -> Result<Arc<Frontend>, Failure> {
    frontend_options(route).map(Frontend::new).map_err(Failure::Internal)
}

fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, Failure> {
    serde_json::from_value(value.clone())
        .map_err(|error| Failure::Internal(format!("unexpected result from the server: {error}")))
}

/// The result as JSON, with `via` added to an object.
fn with_via(routed: &Routed) -> Value {
    let mut value = routed.result.clone();
    if let Value::Object(map) = &mut value {
        map.insert("via".into(), json!(routed.via.as_str()));
    }
    value
}

fn print_edit(routed: &Routed, json_output: bool) -> Result<(), Failure> {
    if json_output {
        output::json(&with_via(routed));
        return Ok(());
    }
    let result: EditResult = decode(&routed.result)?;
    output::out(&render::edit_result(&result, &routed.via));
    commit_notes(routed);
    Ok(())
}

fn commit_notes(routed: &Routed) {
    if let Some(commit) = routed.result.get("commit").and_then(Value::as_str) {
        output::note(&format!("committed to git: {commit}"));
    }
    if let Some(error) = routed.result.get("commitError").and_then(Value::as_str) {
        output::note(&format!("verbatim: warning: {error}"));
    }
}

/// Quotes come inline or from files; stdin (`-`) can be read only once.
#[derive(Debug, Default)]
struct StdinOnce {
    taken_by: Option<&'static str>,
}

impl StdinOnce {
    fn text_of(
        &mut self,
        inline: Option<String>,
        file: Option<PathBuf>,
        what: &'static str,
    ) -> Result<Option<String>, Failure> {
        let Some(file) = file else { return Ok(inline) };
        let bytes = if file == Path::new("-") {
            if let Some(other) = self.taken_by.replace(what) {
                return Err(Failure::Usage(format!(
                    "{what} and {other} both want stdin; read one of them from a file"
                )));
            }
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|error| Failure::Internal(format!("cannot read stdin: {error}")))?;
            bytes
        } else {
            std::fs::read(&file)
                .map_err(|error| Failure::Usage(format!("cannot read {what} from {}: {error}", file.display())))?
        };
        String::from_utf8(bytes).map(Some).map_err(|_| {
            Failure::Protocol(ProtocolError::invalid_params(
                None,
                format!("{what} is not UTF-8 text; quotes and new text must be UTF-8."),
            ))
        })
    }

    /// `--after` and `--before`, inline or from their files.
    fn window(&mut self, window: &WindowArgs) -> Result<(Option<String>, Option<String>), Failure> {
        let after = self.text_of(window.after.clone(), window.after_file.clone(), "--after")?;
        let before = self.text_of(window.before.clone(), window.before_file.clone(), "--before")?;
        Ok((after, before))
    }
}

fn required(text: Option<String>, flag: &str) -> Result<String, Failure> {
    text.ok_or_else(|| Failure::Usage(format!("{flag} is required")))
}

fn edit_params(args: &EditArgs, stdin: &mut StdinOnce) -> Result<StrReplaceParams, Failure> {
    let old_str = required(stdin.text_of(args.old.old.clone(), args.old.old_file.clone(), "--old")?, "--old")?;
    let new_str = required(stdin.text_of(args.new.new.clone(), args.new.new_file.clone(), "--new")?, "--new")?;
    let (after, before) = stdin.window(&args.window)?;
    Ok(StrReplaceParams {
        uri: args.path.clone(),
        old_str,
        new_str,
        summary: args.write.summary.clone(),
        turn: None,
        after,
        before,
        occurrence: args.occurrence,
        replace_all: args.all,
        base_rev: args.write.base_rev.clone(),
        dry_run: args.write.dry_run,
        exact: args.write.exact,
        diagnostics: args.write.diagnostics.level(),
        diagnostics_timeout_ms: args.write.diagnostics.diagnostics_timeout_ms,
    })
}

fn replace_range_params(args: &ReplaceRangeArgs, stdin: &mut StdinOnce) -> Result<ReplaceRangeParams, Failure> {
    let from_str = required(stdin.text_of(args.from.from.clone(), args.from.from_file.clone(), "--from")?, "--from")?;
    let to_str = required(stdin.text_of(args.to.to.clone(), args.to.to_file.clone(), "--to")?, "--to")?;
    let new_str = required(stdin.text_of(args.new.new.clone(), args.new.new_file.clone(), "--new")?, "--new")?;
    let (after, before) = stdin.window(&args.window)?;
    Ok(ReplaceRangeParams {
        uri: args.path.clone(),
        from_str,
        to_str,
        new_str,
        summary: args.write.summary.clone(),
        turn: None,
        after,
        before,
        base_rev: args.write.base_rev.clone(),
        dry_run: args.write.dry_run,
        exact: args.write.exact,
        diagnostics: args.write.diagnostics.level(),
        diagnostics_timeout_ms: args.write.diagnostics.diagnostics_timeout_ms,
    })
}

/// The batch from stdin, with the flags filled in (its paths are made URIs when it is sent).
fn batch_params(input: &str, summary: Option<String>, dry_run: bool) -> Result<BatchEditParams, Failure> {
    let mut params: Value = serde_json::from_str(input).map_err(|error| {
        Failure::Protocol(ProtocolError::invalid_params(None, format!("the batch on stdin is not JSON: {error}. Send verbatim/batchEdit params: {{\"summary\": ..., \"edits\": [...]}}.")))
    })?;
    let Value::Object(map) = &mut params else {
        return Err(Failure::Protocol(ProtocolError::invalid_params(
            None,
            "the batch on stdin must be a JSON object: {\"summary\": ..., \"edits\": [...]}",
        )));
    };
    if let Some(summary) = summary {
        map.insert("summary".into(), json!(summary));
    }
    if dry_run {
        map.insert("dryRun".into(), json!(true));
    }
    serde_json::from_value(params).map_err(|error| Failure::Protocol(params_error(BatchEditParams::METHOD, &error)))
}

fn editors(json_output: bool) -> Result<(), Failure> {
    let servers = verbatim::service::discovery::live_servers_in(&discovery_dirs());
    if json_output {
        output::json(&serde_json::to_value(&servers).unwrap_or_default());
    } else {
        output::out(&render::editors(&servers));
    }
    Ok(())
}

fn setup(args: &args::SetupArgs) -> Result<(), Failure> {
    use verbatim::frontend::setup::{self, Agent, AgentDirs, Scope, SetupOptions};
    let agent = match args.agent.as_deref() {
        Some(name) => Some(
            Agent::parse(name)
                .ok_or_else(|| Failure::Usage(format!("unknown agent `{name}`: expected {}", Agent::NAMES)))?,
        ),
        None if args.check => None,
        None => {
            return Err(Failure::Usage(format!(
                "name the agent to set up: {} (or --check alone to check them all)",
                Agent::NAMES
            )));
        }
    };
    let project = std::env::current_dir()
        .map_err(|error| Failure::Internal(format!("cannot read the current directory: {error}")))?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| Failure::Usage("HOME is not set: setup cannot find the agent's user files".into()))?;
    let options = SetupOptions {
        agent: agent.unwrap_or(Agent::ClaudeCode).cli(),
        scope: match (args.user, args.project, agent) {
            (true, _, _) => Scope::User,
            (false, false, Some(agent)) => agent.cli().default_scope(),
            _ => Scope::Project,
        },
        deny_builtin_edit: args.deny_builtin_edit,
        project,
        home,
        dirs: AgentDirs::from_env(),
        command: "verbatim".into(),
        diagnostics: args.diagnostics,
        trust_headless: args.trust_headless,
        trust_folder: args.trust,
        hook: !args.no_hook,
        hook_env: Vec::new(),
    };
    let failed = |error: setup::SetupError| Failure::Usage(error.to_string());
    let Some(agent) = agent else {
        let (all, lines) = setup::check_all(&options);
        output::out(&lines.iter().map(|line| format!("{line}\n")).collect::<String>());
        return if all {
            Ok(())
        } else {
            Err(Failure::Usage("not every agent is set up: run the `fix:` command of the one you use".into()))
        };
    };
    if args.check {
        let (all, lines) = setup::check(&options).map_err(failed)?;
        output::out(&lines.iter().map(|line| format!("{line}\n")).collect::<String>());
        return if all {
            Ok(())
        } else {
            Err(Failure::Usage(format!(
                "{} is not fully set up: run `verbatim setup {}` to see the change",
                agent.name(),
                agent.name()
            )))
        };
    }
    let plan = setup::plan(&options).map_err(failed)?;
    let pending: Vec<_> = plan.changes.iter().filter(|change| change.changes_anything()).collect();
    for change in &pending {
        output::out(&change.diff());
    }
    for note in &plan.notes {
        output::note(note);
    }
    if pending.is_empty() {
        output::note(&format!("{} is already set up: nothing to change.", agent.name()));
    } else if args.write {
        for path in setup::write(&plan).map_err(failed)? {
            output::note(&format!("wrote {}", path.display()));
        }
    } else {
        output::note("Nothing was written: run the same command with --write to apply this change.");
    }
    Ok(())
}

/// `verbatim revert`: through the editor serving the working directory, else on disk.
fn revert(args: &args::RevertArgs) -> Result<u8, Failure> {
    let frontend = frontend(&RouteArgs {
        socket: args.socket.clone(),
        headless: args.headless,
        agent: args.agent.clone(),
        root: args.root.clone(),
        git_commit: false,
        no_headless_writes: false,
        turn: None,
    })?;
    let params = RevertParams {
        ids: Some(args.ids.clone()).filter(|ids| !ids.is_empty()),
        turn: args.turn.clone(),
        session: args.session.clone(),
        summary: args.summary.clone(),
        dry_run: args.dry_run,
        as_turn: args.as_turn.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::Internal(format!("cannot start the async runtime: {error}")))?;
    let routed = runtime.block_on(frontend.request(params))?;
    let result: verbatim::service::protocol::RevertResult = decode(&routed.result)?;
    if args.output.json {
        output::json(&with_via(&routed));
    } else {
        output::out(&render::revert(&result));
    }
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    let left = result.files.iter().flat_map(|file| &file.conflicts).any(|conflict| conflict.chosen == "current");
    Ok(if left && !args.dry_run { exit::CONFLICT } else { exit::OK })
}

fn log(args: &LogArgs) -> Result<(), Failure> {
    let journal = Journal::from_env().ok_or_else(|| {
        Failure::Internal("no state directory: set VERBATIM_STATE_DIR, XDG_STATE_HOME or HOME".into())
    })?;
    let cwd = std::env::current_dir()
        .map_err(|error| Failure::Internal(format!("cannot read the current directory: {error}")))?;
    let files = if args.all {
        journal.files()
    } else {
        let dir = args
            .workspace
            .as_ref()
            .map_or_else(|| cwd.clone(), |dir| if dir.is_absolute() { dir.clone() } else { cwd.join(dir) });
        let found =
            journal.find_for_dir(&dir).or_else(|| dir.canonicalize().ok().and_then(|real| journal.find_for_dir(&real)));
        match found {
            Some(file) => vec![file],
            None => {
                output::note(&format!(
                    "No journal for {} yet (journals are in {}; --all shows every workspace).",
                    dir.display(),
                    journal.dir().display()
                ));
                return Ok(());
            }
        }
    };
    let wanted_path = args.path.as_ref().and_then(|path| {
        let absolute = if Path::new(path).is_absolute() || path.contains(':') {
            path.clone()
        } else {
            cwd.join(path).to_string_lossy().into_owned()
        };
        DocKey::parse(&absolute).ok()
    });
    let all = verbatim::service::timeline::read_all(&files)
        .map_err(|error| Failure::Internal(format!("cannot read the journal: {error}")))?;
    let wanted = |journaled: &&verbatim::service::timeline::Journaled| {
        let entry = &journaled.entry;
        let path_matches =
            wanted_path.as_ref().is_none_or(|wanted| DocKey::parse(&entry.uri).ok().as_ref() == Some(wanted));
        let agent_matches = args.agent.as_ref().is_none_or(|agent| &entry.agent == agent);
        path_matches && agent_matches
    };
    let newest: Vec<&verbatim::service::timeline::Journaled> =
        all.iter().rev().filter(wanted).take(args.limit).collect();
    if args.json {
        let mut text = String::new();
        for journaled in newest {
            let mut entry = journaled.entry.clone();
            entry.id = Some(journaled.id.clone());
            entry.session = Some(journaled.session.clone());
            entry.turn = Some(journaled.turn.clone());
            text.push_str(&serde_json::to_string(&entry).unwrap_or_default());
            text.push('\n');
        }
        output::out(&text);
    } else if newest.is_empty() {
        output::note("No journal entries match.");
    } else {
        output::out(&render::journal_grouped(&newest, args.diff));
    }
    Ok(())
}
