//! What the model is to be told after a partly kept write, for agents whose pre-write
//! hook cannot say it (Gemini CLI shows the model nothing of a `BeforeTool` allow, nor
//! Droid of a `PreToolUse` one; their hook after the tool, `AfterTool` and
//! `PostToolUse`, has an `additionalContext` that reaches the model). The run before
//! the tool leaves the note in a 0600 file of a 0700 directory of the runtime
//! directory, keyed by the session and the file; the run after it takes it.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::frontend::agents::HookCall;

/// Notes older than this are stale (the tool never ran): removed when seen.
const NOTE_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

fn note_path(call: &HookCall) -> Option<PathBuf> {
    let session = call.session.as_deref().unwrap_or("");
    let file = ["file_path", "absolute_path"].iter().find_map(|name| call.args.get(*name)?.as_str())?;
    let digest = Sha256::digest(format!("{session}\0{file}").as_bytes());
    let name: String = digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect();
    Some(crate::service::discovery::runtime_dir().join("hook-notes").join(name))
}

/// Leaves `note` for the `AfterTool` run of this call.
pub fn leave(input: &HookCall, note: &str) {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let Some(path) = note_path(input) else { return };
    let Some(dir) = path.parent() else { return };
    let made = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir);
    let written = made.and_then(|()| {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&path)?;
        file.write_all(note.as_bytes())
    });
    if let Err(error) = written {
        tracing::warn!("cannot leave the note for the agent's hook after the tool at {}: {error}", path.display());
    }
}

/// Takes the note the `BeforeTool` run left for this call, if any.
pub fn take(input: &HookCall) -> Option<String> {
    let path = note_path(input)?;
    let fresh = std::fs::metadata(&path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age < NOTE_TTL));
    let note = std::fs::read_to_string(&path).ok();
    let _ = std::fs::remove_file(&path);
    note.filter(|_| fresh)
}
