//! Verbatim: an LSP server that lets AI agents edit files inside the editor by
//! quoting text instead of counting lines.
//!
//! Modules, in reading order:
//! - the engine, which knows nothing of LSP or JSON:
//!   [`position`] (line/column in utf-8, utf-16, utf-32), [`rev`] (revisions),
//!   [`document`] and [`store`] (live buffers), [`doc_key`] (document identity),
//!   [`quote`] (finding quotes), [`plan`] (quote-addressed requests to replacements),
//!   [`diff`] (minimal edits and unified diffs);
pub mod position;
pub mod rev;
pub mod document;
pub mod store;
pub mod doc_key;
pub mod quote;
pub mod plan;
pub mod diff;
