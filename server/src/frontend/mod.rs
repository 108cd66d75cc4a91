//! The agent front-ends: [`mcp`] (`verbatim mcp`) here, the CLI in the binary
//! (`src/cli/`), and what they share: [`client`] (the agent side of the socket),
//! [`routing`] (which server serves a file), [`render`] (results as text), [`hook`]
//! (`verbatim hook`, the agents' pre-write hooks), and this
//! module's [`Frontend`]: a protocol call, routed to the editor that serves its file
//! (as an agent on that server's socket) or, when no editor does, run headless on disk
//! by the same engine.
//!
//! A call is a method's params, declared once in
//! [`crate::service::protocol::params`] and sent as on the wire, so both front-ends map
//! one to one onto `docs/protocol.md`, and a new method needs only its params type, a
//! command or tool that fills it (the tool's input schema is derived from it) and, to
//! work without an editor, its arm in [`Headless::call`]. `verbatim/applyPatch` names
//! its files inside the patch, so it goes to the editor serving the working directory.

pub mod agents;
pub mod client;
pub mod hook;
pub mod mcp;
pub mod render;
pub mod routing;
pub mod setup;
pub mod tool_output;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::position::PositionEncoding;

use crate::frontend::client::{AgentClient, ClientError, Identity};
use crate::frontend::routing::server_for;
use crate::headless::file_lock;
use crate::headless::{Headless, HeadlessOptions};
use crate::service::access::Access;
use crate::service::discovery::live_servers_in;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::Journal;
use crate::service::protocol::{DiscoveryFile, DocumentInfo, MethodParams, method};
use crate::service::registry::AgentInfo;

/// How a front-end reaches documents.
#[derive(Debug, Clone)]
pub struct FrontendOptions {
    /// How the agent is named to the editor and in the journal.
    pub agent: Identity,
    /// Talk to this server's socket, whatever the discovery files say.
    pub socket: Option<PathBuf>,
    /// Never use an editor: always edit on disk.
    pub headless: bool,
    /// Headless writes stay inside these folders (empty: anywhere).
    pub roots: Vec<PathBuf>,
    /// Relative paths are taken from here; `verbatim/documents` is routed by it.
    pub cwd: PathBuf,
    /// Commit every headless write to git.
    pub git_commit: bool,
    /// Write files on disk when no editor serves them. When false (`--no-headless-writes`),
    /// such writes are refused (`permissionDenied`) and say why: they would have no review.
    pub headless_writes: bool,
    /// Where headless lock files are (in `locks/`).
    pub runtime_dir: PathBuf,
    /// Where to look for the discovery files of running servers
    /// ([`crate::service::discovery::discovery_dirs`]).
    pub discovery_dirs: Vec<PathBuf>,
    pub journal: Option<Journal>,
    /// The agent's turn, sent with every write that names none (`--turn`).
    pub turn: Option<String>,
}

/// Where a call went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// To the editor's server on this socket.
    Editor { socket: PathBuf },
    /// Straight to disk.
    Headless,
}

impl Via {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Editor { .. } => "editor",
            Self::Headless => "headless",
        }
    }
}

/// A call's result, and where it was served.
#[derive(Debug, Clone, PartialEq)]
pub struct Routed {
    pub via: Via,
    pub result: Value,
}

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FrontendError {
    /// A documented error: its kind tells what to do next.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// Something the protocol does not describe (a bug, a server too old).
    #[error("{0}")]
    Internal(String),
}

impl From<ClientError> for FrontendError {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::Protocol(error) => Self::Protocol(error),
            ClientError::Connection(message) => Self::Protocol(ProtocolError::new(
                ErrorKind::EditorUnavailable,
                format!("{message}. Nothing was applied; retry (without an editor, verbatim edits the file on disk)."),
            )),
            other @ ClientError::Rpc { .. } => Self::Internal(other.to_string()),
        }
    }
}

/// The routed protocol, for one agent.
#[derive(Debug)]
pub struct Frontend {
    options: FrontendOptions,
    agent: RwLock<Identity>,
}

impl Frontend {
    pub fn new(options: FrontendOptions) -> Arc<Self> {
        let agent = RwLock::new(options.agent.clone());
        Arc::new(Self { options, agent })
    }

    pub fn options(&self) -> &FrontendOptions {
        &self.options
    }

    pub fn agent(&self) -> Identity {
        self.agent.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Renames the agent (the MCP server learns its client's name at `initialize`).
    pub fn set_agent(&self, identity: Identity) {
        *self.agent.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = identity;
    }

    /// A path (absolute, or relative to the working directory) or a URI, as a URI.
    pub fn uri_of(&self, path_or_uri: &str) -> String {
        let is_uri = path_or_uri.contains("://") || path_or_uri.starts_with("untitled:");
        if is_uri || path_or_uri.is_empty() {
            return path_or_uri.to_owned();
        }
        let path = Path::new(path_or_uri);
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.options.cwd.join(path) };
        match DocKey::parse(&absolute.to_string_lossy()) {
            Ok(key) => key.to_uri(),
            Err(_) => path_or_uri.to_owned(),
        }
    }

    /// Makes the paths a call's params name (its `uri`s, as the agent gave them) URIs.
    pub fn resolve_paths<P: MethodParams>(&self, params: &mut P) {
        for uri in params.uris_mut() {
            *uri = self.uri_of(uri);
        }
    }

    /// The running servers, from their discovery files.
    pub fn editors(&self) -> Vec<DiscoveryFile> {
        live_servers_in(&self.options.discovery_dirs)
    }

    /// Where a call on these documents goes. Documents without a path (and calls
    /// without documents) go to the editor serving the working directory, or to the
    /// only editor running.
    pub fn route(&self, uris: &[String]) -> Result<Via, ProtocolError> {
        if self.options.headless {
            return Ok(Via::Headless);
        }
        if let Some(socket) = &self.options.socket {
            return Ok(Via::Editor { socket: socket.clone() });
        }
        let servers = self.editors();
        let route_of = |path: Option<&Path>| -> Via {
            let chosen = match path {
                Some(path) => server_for(&servers, path),
                None => server_for(&servers, &self.options.cwd).or(match servers.as_slice() {
                    [only] => Some(only),
                    _ => None,
                }),
            };
            chosen.map_or(Via::Headless, |server| Via::Editor { socket: PathBuf::from(&server.socket) })
        };
        if uris.is_empty() {
            return Ok(route_of(None));
        }
        let mut routes = uris.iter().map(|uri| {
            let key = DocKey::parse(uri).ok();
            (uri, route_of(key.as_ref().and_then(DocKey::path)))
        });
        let Some((_, first)) = routes.next() else { return Ok(route_of(None)) };
        for (index, (uri, via)) in routes.enumerate() {
            if via != first {
                return Err(ProtocolError::invalid_params(
                    Some("edits"),
                    format!(
                        "edits[{}] ({uri}) is served {} but edits[0] {}: one batch must stay with one editor, or all on disk. Split the batch.",
                        index + 1,
                        describe(&via),
                        describe(&first)
                    ),
                )
                .with("edit", index + 1));
            }
        }
        Ok(first)
    }

    /// Where a call on these documents goes, like [`Frontend::route`], except that a
    /// document an editor has open is that editor's even outside its folders: before
    /// going to disk, each running server is asked for its open documents.
    pub async fn resolve(&self, uris: &[String]) -> Result<Via, ProtocolError> {
        let via = self.route(uris)?;
        if via != Via::Headless || self.options.headless || uris.is_empty() {
            return Ok(via);
        }
        let wanted: Vec<DocKey> = uris.iter().filter_map(|uri| DocKey::parse(uri).ok()).collect();
        for server in self.editors() {
            let socket = PathBuf::from(&server.socket);
            let Ok(mut client) = AgentClient::connect(&socket, &self.agent()).await else { continue };
            let open = client.call(method::DOCUMENTS, Value::Null).await;
            client.close().await;
            let open: Vec<DocumentInfo> =
                open.ok().and_then(|value| serde_json::from_value(value).ok()).unwrap_or_default();
            if open.iter().any(|document| DocKey::parse(&document.uri).is_ok_and(|key| wanted.contains(&key))) {
                return Ok(Via::Editor { socket });
            }
        }
        Ok(Via::Headless)
    }

    /// Runs one protocol method with its params (`uri`s already absolute).
    pub async fn call(&self, name: &str, params: Value) -> Result<Routed, FrontendError> {
        let via = self.resolve(&uris_of(&params)).await?;
        self.call_via(via, name, params).await
    }

    /// Runs one protocol method with its typed params, their paths made URIs.
    pub async fn request<P: MethodParams>(&self, mut params: P) -> Result<Routed, FrontendError> {
        self.resolve_paths(&mut params);
        self.call(P::METHOD, params.to_wire()).await
    }

    /// Runs one protocol method where [`Frontend::resolve`] said it goes.
    pub async fn call_via(&self, via: Via, name: &str, mut params: Value) -> Result<Routed, FrontendError> {
        if let (Some(turn), Value::Object(map)) = (&self.options.turn, &mut params)
            && is_write(name)
            && name != method::REVERT
            && name != method::MARK_REVIEWED
        {
            map.entry("turn").or_insert_with(|| Value::String(turn.clone()));
        }
        let dry_run = params.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
        if via == Via::Headless && !self.options.headless_writes && is_write(name) && !dry_run {
            return Err(FrontendError::Protocol(self.headless_write_refused(&params)));
        }
        let result = match &via {
            Via::Editor { socket } => {
                let mut client = AgentClient::connect(socket, &self.agent()).await?;
                let outcome = client.call(name, params).await;
                client.close().await;
                outcome?
            }
            Via::Headless => {
                let headless = self.headless();
                let name = name.to_owned();
                tokio::task::spawn_blocking(move || headless.call(&name, params))
                    .await
                    .map_err(|error| FrontendError::Internal(format!("the headless call failed: {error}")))??
            }
        };
        Ok(Routed { via, result })
    }

    /// Why a write that would land on disk unreviewed was not made, and what to do.
    fn headless_write_refused(&self, params: &Value) -> ProtocolError {
        let files: Vec<String> = uris_of(params)
            .iter()
            .map(|uri| {
                DocKey::parse(uri)
                    .ok()
                    .and_then(|key| key.path().map(|path| path.display().to_string()))
                    .unwrap_or_else(|| uri.clone())
            })
            .collect();
        let what = if files.is_empty() { "the patch's files".to_owned() } else { files.join(", ") };
        ProtocolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "no editor with Verbatim serves {what}, so this write would land on disk with no review, and this \
                 server was started with --no-headless-writes: nothing was written. Make this change with your own \
                 file-editing tool (its permission prompt asks the person), or ask the person to open the file in \
                 their editor with Verbatim and retry. (`verbatim setup AGENT --trust-headless` lets Verbatim write \
                 such files itself.)"
            ),
        )
        .with("reason", "headlessWritesOff")
    }

    /// The headless engine, for this agent.
    pub fn headless(&self) -> Headless {
        let agent = self.agent();
        Headless::new(HeadlessOptions {
            agent: AgentInfo {
                id: 0,
                name: agent.name,
                version: agent.version,
                connected_at: crate::service::clock::now_rfc3339(),
                encoding: PositionEncoding::Utf32,
                access: Access::ReadWrite,
                options: Default::default(),
                session: crate::service::registry::session_of(0),
                turn: None,
            },
            roots: self.options.roots.clone(),
            cwd: self.options.cwd.clone(),
            git_commit: self.options.git_commit,
            journal: self.options.journal.clone(),
            lock_dir: if self.options.runtime_dir.as_os_str().is_empty() {
                file_lock::default_lock_dir()
            } else {
                self.options.runtime_dir.join("locks")
            },
        })
    }
}

fn describe(via: &Via) -> String {
    match via {
        Via::Editor { socket } => format!("by the editor at {}", socket.display()),
        Via::Headless => "on disk (no editor serves it)".to_owned(),
    }
}

/// The documents a call names: `uri`, or each `edits[].uri`.
pub fn uris_of(params: &Value) -> Vec<String> {
    if let Some(uri) = params.get("uri").and_then(Value::as_str) {
        return vec![uri.to_owned()];
    }
    params
        .get("edits")
        .and_then(Value::as_array)
        .map(|edits| {
            edits.iter().filter_map(|edit| edit.get("uri").and_then(Value::as_str).map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}

/// Methods that change documents (and may wait for review).
pub fn is_write(name: &str) -> bool {
    method::WRITE_METHODS.contains(&name)
}
