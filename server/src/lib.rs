//! Verbatim: an LSP server that lets AI agents edit files inside the editor by
//! quoting text instead of counting lines.
//!
//! The engine, which knows nothing of LSP or JSON, is the `verbatim_engine` crate
//! (`server/engine`): positions, revisions, documents and the store, document keys,
//! quote search, the normalization ladder, plans, line endings, near misses, patches
//! and hunks, diffs, three-way merges, file formats, disk reads, workspace containment.
//!
//! This crate, in reading order:
//! - [`service`], the protocol and the service: [`service::protocol`] (wire types),
//!   [`service::error`] (error kinds and codes), [`service::feedback`] (errors an agent can
//!   act on), [`service::to_proto`] (engine to LSP types), [`service::access`] (read-only
//!   agents, denied paths), [`service::state`] (shared between connections),
//!   [`service::registry`] (agents and pending edits), [`service::edits`] (the agent
//!   methods), [`service::patching`] (`verbatim/applyPatch`), [`service::deliver`] (the one way
//!   a planned change reaches the editor), [`service::external`] (changes made on disk offered as edits),
//!   [`service::journal`] (every write, as JSON lines per workspace);
//! - [`headless`] mode, the disk as the target: [`headless::file_lock`] (writers take
//!   turns across processes), [`headless::atomic_write`] (temp file, fsync, rename),
//!   [`headless::git`];
//! - the [`transport`]s: [`transport::ordered_sync`] and [`transport::editor`] (the editor
//!   on stdio), [`transport::disk_watch`] (the files of open documents), [`transport::agent`] and [`transport::listener`] (agents on the socket),
//!   [`transport::framing`] (the frame guard), [`service::discovery`] (runtime directory
//!   and discovery files), [`transport::lsp`] (`verbatim lsp`), [`service::clock`];
//! - the agent [`frontend`]s: [`frontend::client`] (the agent side of the socket),
//!   [`frontend::routing`] (which server serves a file), [`frontend`] itself (a call routed
//!   to the editor or run headless), [`frontend::render`] (results as text),
//!   [`frontend::mcp`] (`verbatim mcp`); the CLI is in the binary (`src/cli/`).
#![deny(clippy::print_stdout)]

pub mod frontend;
pub mod headless;
pub mod ide;
pub mod service;
pub mod transport;
