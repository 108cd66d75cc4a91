//! Verbatim: an LSP server that lets AI agents edit files inside the editor by
//! quoting text instead of counting lines.
//!
//! Modules, in reading order:
//! - the engine, which knows nothing of LSP or JSON:
//!   [`position`] (line/column in utf-8, utf-16, utf-32), [`rev`] (revisions),
//!   [`document`] and [`store`] (live buffers), [`doc_key`] (document identity),
//!   [`quote`] (finding quotes), [`normalize`] (the normalization ladder),
//!   [`plan`] (quote-addressed requests to replacements), [`line_endings`] (new text
//!   adopts the line ending around it), [`near_miss`] (the region most like a missing
//!   quote), [`patch`] (patch dialects parsed) and [`hunk`] (their hunks planned),
//!   [`diff`] (minimal edits and unified diffs), [`file_format`] (encodings and BOMs,
//!   byte exact), [`disk`] (files that are not open), [`workspace`] (which files are in
//!   reach), [`access`] (read-only agents, denied paths);
//! - the protocol: [`protocol`] (wire types), [`error`] (error kinds and codes),
//!   [`feedback`] (errors an agent can act on), [`to_proto`] (engine to LSP types);
//! - the service: [`state`] (shared between connections), [`registry`] (agents and
//!   pending edits), [`edits`] (the agent methods), [`patching`] (`verbatim/applyPatch`),
//!   [`apply`] (through the editor), [`journal`] (every write, as JSON lines per workspace);
//! - headless mode, the disk as the target: [`headless`], [`file_lock`] (writers take
//!   turns across processes), [`atomic_write`] (temp file, fsync, rename), [`git`];
//! - the transports: [`ordered_sync`] and [`editor`] (the editor on stdio),
//!   [`agent`] and [`listener`] (agents on the socket), [`framing`] (the frame guard), [`discovery`] (runtime
//!   directory and discovery files), [`lsp`] (`verbatim lsp`), [`clock`];
//! - the agent front-ends: [`client`] (the agent side of the socket), [`routing`]
//!   (which server serves a file), [`frontend`] (a call routed to the editor or run
//!   headless), [`render`] (results as text), [`mcp`] (`verbatim mcp`).
#![deny(clippy::print_stdout)]

pub mod access;
pub mod agent;
pub mod apply;
pub mod atomic_write;
pub mod client;
pub mod clock;
pub mod diff;
pub mod discovery;
pub mod disk;
pub mod doc_key;
pub mod document;
pub mod editor;
pub mod edits;
pub mod error;
pub mod feedback;
pub mod file_format;
pub mod file_lock;
pub mod framing;
pub mod frontend;
pub mod git;
pub mod headless;
pub mod hunk;
pub mod journal;
pub mod line_endings;
pub mod listener;
pub mod lsp;
pub mod mcp;
pub mod near_miss;
pub mod normalize;
pub mod ordered_sync;
pub mod patch;
pub mod patching;
pub mod plan;
pub mod position;
pub mod protocol;
pub mod quote;
pub mod registry;
pub mod render;
pub mod rev;
pub mod routing;
pub mod state;
pub mod store;
pub mod to_proto;
pub mod workspace;
