//! Replaying real history with the slips agents make (issues 34 and 43), shared by
//! the replay tests (`tests/indentation_replay.rs`, `tests/slip_replay.rs`) and the
//! full benchmark (`benches/slip_replay.rs`). In reading order:
//!
//! - [`corpus`]: `(old, new)` pairs of real files, from a git history or from the
//!   committed fixtures;
//! - [`hunks`]: the hunks of their diff, and the file's indentation unit;
//! - [`slips`]: one slip applied to a hunk's lines;
//! - [`cases`]: a slipped hunk sent in one dialect (a quote edit, `apply_patch`,
//!   SEARCH/REPLACE), with the text it should leave;
//! - [`outcome`]: what happened (recovered, refused, wrong, partial), counted;
//! - [`runner`]: every pair, dialect and slip through the headless front-end.
#![allow(dead_code)]

pub mod cases;
pub mod corpus;
pub mod hunks;
pub mod outcome;
pub mod runner;
pub mod slips;
