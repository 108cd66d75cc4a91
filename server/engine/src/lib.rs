//! Verbatim's engine: what an edit by quotation means, with no LSP, no JSON and no
//! async. The `verbatim` crate wraps it in the protocol, the service, headless mode,
//! the transports and the agent front-ends.
//!
//! Modules, in reading order:
//! [`position`] (line/column in utf-8, utf-16, utf-32), [`rev`] (revisions),
//! [`document`] and [`store`] (live buffers), [`text_change`] (an incremental change applied to a rope), [`unsent`] (edits a client applied and sends later), [`doc_key`] (document identity),
//! [`quote`] (finding quotes), [`normalize`] (the normalization ladder),
//! [`plan`] (quote-addressed requests to replacements), [`line_endings`] (new text
//! adopts the line ending around it), [`near_miss`] (the regions most like a missing
//! quote, voted for by tokens and by [`trigram`]s), [`patch`] (patch dialects parsed) and [`hunk`] (their hunks planned),
//! [`diff`] (minimal edits and unified diffs), [`proposal_hunks`] (what a reviewer keeps or leaves out), [`problems`] (what an edit changed in a language server's problems), [`merge`] (a change on disk merged into a buffer), [`transplant`] (a reviewed edit of a buffer moved onto the disk text), [`revert`] (recorded changes undone in the current text, keeping later ones), [`file_format`] (encodings and BOMs,
//! byte exact), [`disk`] (files that are not open), [`workspace`] (which files are in
//! reach), [`agent_tools`] (the agents' own edit tools as text functions, for their
//! pre-write hooks).

pub mod agent_tools;
pub mod diff;
pub mod disk;
pub mod doc_key;
pub mod document;
pub mod file_format;
pub mod history;
pub mod hunk;
#[cfg(test)]
mod indentation_properties;
pub mod line_endings;
pub mod merge;
pub mod near_miss;
pub mod normalize;
pub mod patch;
pub mod plan;
pub mod position;
pub mod problems;
pub mod proposal_hunks;
pub mod quote;
pub mod rev;
pub mod revert;
#[cfg(test)]
mod revert_properties;
#[cfg(test)]
mod slip_properties;
pub mod store;
pub mod text_change;
pub mod transplant;
pub mod trigram;
pub mod unsent;
pub mod workspace;
