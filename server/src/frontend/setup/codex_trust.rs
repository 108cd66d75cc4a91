//! Codex's trust of a hook, recorded the way Codex records it when the person trusts a
//! hook in its TUI: `codex exec` silently skips a hook that is not trusted, and the
//! person asked `setup` for this one.
//!
//! Codex 0.171 keeps the trust in `config.toml` as
//! `[hooks.state."<key>"] trusted_hash = "<hash>"`, and runs a hook only when the
//! hash it computes now equals the one recorded (a changed hook is "modified", and
//! skipped until trusted again). `codex app-server` shows both (`hooks/list`: `key`,
//! `currentHash`, `trustStatus`).
//!
//! **The key** is `<source>:<event>:<group>:<handler>`: the absolute path of the
//! `hooks.json` (with `$CODEX_HOME` resolved through symlinks, as Codex resolves it;
//! `~/.codex` is taken from `$HOME` as it is), the event's snake-case label
//! (`pre_tool_use`), and the indexes of the matcher group in the event's list and of
//! the handler in the group. It holds the hook's position: that is why ours is
//! appended.
//!
//! **The hash** (Codex's `hooks/src/engine/discovery.rs`, `command_hook_hash`, and
//! `config/src/fingerprint.rs`, `version_for_toml`) is of a normalized identity of
//! the one handler, not of the file's text, so that the same hook in `hooks.json` or in
//! `config.toml` hashes the same:
//! 1. the object `{"event_name": "pre_tool_use", "matcher": M, "hooks": [H]}`, where
//!    `matcher` is left out when the group has none, and `H` is the handler with its
//!    defaults filled in and nothing unset: `{"type": "command", "command": C,
//!    "timeout": T, "async": A}` plus `"statusMessage"` when set; `T` is the timeout
//!    in seconds, 600 when unset, at least 1; `A` is `false` when unset;
//! 2. serialized as JSON with every object's keys sorted and no whitespace;
//! 3. SHA-256 of those bytes, in lowercase hex, prefixed with `sha256:`.
//!
//! For our group that is `sha256(`{"event_name":"pre_tool_use","hooks":[{"async":false,
//! "command":"verbatim hook codex","timeout":600,"type":"command"}],"matcher":"apply_patch"}`)`.
//! A test runs the real Codex's `hooks/list` against it when Codex is installed.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Codex's label of the event our hook is on, as in keys and hashes.
const EVENT_LABEL: &str = "pre_tool_use";

/// The timeout Codex gives a handler that names none, in seconds.
const CODEX_DEFAULT_TIMEOUT_SECS: u64 = 600;

/// One hook's trust entry: where it goes in `config.toml`, and the hash to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    pub key: String,
    pub hash: String,
}

/// The path Codex names `hooks.json` by in keys: `$CODEX_HOME` resolved (Codex
/// canonicalizes it), `~/.codex` as `$HOME` gives it.
pub fn hooks_file_key_path(codex_home: Option<&Path>, home: &Path) -> PathBuf {
    match codex_home {
        Some(dir) => dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()).join("hooks.json"),
        None => home.join(".codex").join("hooks.json"),
    }
}

/// The key of the handler at `group`, `handler` of the `PreToolUse` list.
pub fn key(hooks_file: &Path, group: usize, handler: usize) -> String {
    format!("{}:{EVENT_LABEL}:{group}:{handler}", hooks_file.display())
}

/// The hash Codex computes for a `PreToolUse` command handler of a group with
/// `matcher`; `None` when the handler is not a command hook.
pub fn hash(matcher: Option<&str>, handler: &Value) -> Option<String> {
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        return None;
    }
    let command = handler.get("command")?.as_str()?;
    let timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(CODEX_DEFAULT_TIMEOUT_SECS).max(1);
    let is_async = handler.get("async").and_then(Value::as_bool).unwrap_or(false);
    let mut normalized = json!({"type": "command", "command": command, "timeout": timeout, "async": is_async});
    if let Some(status) = handler.get("statusMessage").and_then(Value::as_str) {
        normalized["statusMessage"] = json!(status);
    }
    let mut identity = json!({"event_name": EVENT_LABEL, "hooks": [normalized]});
    if let Some(matcher) = matcher {
        identity["matcher"] = json!(matcher);
    }
    let bytes = serde_json::to_vec(&sorted(&identity)).ok()?;
    let digest = Sha256::digest(&bytes);
    Some(format!("sha256:{}", digest.iter().map(|byte| format!("{byte:02x}")).collect::<String>()))
}

/// The same value with every object's keys in sorted order (our JSON keeps insertion
/// order, and Codex hashes sorted keys).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key.clone(), sorted(value))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The trust entry of the handler at (`group`, `handler`) of `hooks.json`'s
/// `PreToolUse` list in `root`.
pub fn trust_of(root: &Map<String, Value>, hooks_file: &Path, group: usize, handler: usize) -> Option<Trust> {
    let group_value = root.get("hooks")?.get("PreToolUse")?.get(group)?;
    let matcher = group_value.get("matcher").and_then(Value::as_str);
    let hash = hash(matcher, group_value.get("hooks")?.get(handler)?)?;
    Some(Trust { key: key(hooks_file, group, handler), hash })
}

/// Records `trust` in Codex's `config.toml` document, leaving every other entry (and
/// a state entry already equal) as it was.
pub fn record(document: &mut toml_edit::DocumentMut, trust: &Trust) -> Result<(), String> {
    let implicit_table = || {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    };
    let hooks = document.entry("hooks").or_insert_with(implicit_table);
    let hooks = hooks.as_table_mut().ok_or("hooks is not a table")?;
    let state = hooks.entry("state").or_insert_with(implicit_table);
    let state = state.as_table_mut().ok_or("hooks.state is not a table")?;
    let entry = state.entry(&trust.key).or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let entry = entry.as_table_like_mut().ok_or_else(|| format!("hooks.state.\"{}\" is not a table", trust.key))?;
    if entry.get("trusted_hash").and_then(toml_edit::Item::as_str) != Some(trust.hash.as_str()) {
        entry.insert("trusted_hash", toml_edit::value(trust.hash.as_str()));
    }
    Ok(())
}

/// The hash recorded for `key` in Codex's `config.toml` text, and whether the person
/// turned the hook off there (`enabled = false`).
pub fn recorded(config: &str, key: &str) -> (Option<String>, bool) {
    let Ok(document) = config.parse::<toml_edit::DocumentMut>() else { return (None, false) };
    let entry = document.get("hooks").and_then(|hooks| hooks.get("state")).and_then(|state| state.get(key));
    let hash = entry.and_then(|entry| entry.get("trusted_hash")).and_then(toml_edit::Item::as_str).map(str::to_owned);
    let disabled = entry.and_then(|entry| entry.get("enabled")).and_then(toml_edit::Item::as_bool) == Some(false);
    (hash, disabled)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Hashes `codex app-server` reported (`hooks/list`, `currentHash`) with Codex 0.171.
    #[test]
    fn the_hash_is_the_one_codex_computes() {
        let ours = json!({"type": "command", "command": "verbatim hook codex", "timeout": 600});
        assert_eq!(
            hash(Some("apply_patch"), &ours).unwrap(),
            "sha256:aa4152c711e307223f0eaf343c3a6c7deade20ea39001d27dd7eb90ca59c1296"
        );
        // No timeout: Codex's default, 600, is hashed.
        let theirs = json!({"type": "command", "command": "echo mine"});
        assert_eq!(
            hash(Some("Bash"), &theirs).unwrap(),
            "sha256:54682e1bcbd5af5d3ea517518110b9d67624ab71368a6260afec290b9c362cae"
        );
        assert_eq!(hash(Some("Bash"), &json!({"type": "prompt"})), None);
    }

    #[test]
    fn the_key_names_the_file_the_event_and_the_position() {
        assert_eq!(key(Path::new("/h/.codex/hooks.json"), 2, 0), "/h/.codex/hooks.json:pre_tool_use:2:0");
        assert_eq!(hooks_file_key_path(None, Path::new("/h")), Path::new("/h/.codex/hooks.json"));
    }

    #[test]
    fn recording_keeps_the_rest_and_twice_changes_nothing() {
        let trust = Trust { key: "/h/hooks.json:pre_tool_use:1:0".into(), hash: "sha256:ab".into() };
        let text = "# mine\nmodel = \"o4\"\n\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:cd\"\n";
        let mut document = text.parse::<toml_edit::DocumentMut>().unwrap();
        record(&mut document, &trust).unwrap();
        let once = document.to_string();
        assert!(once.starts_with(text), "{once}");
        assert!(
            once.ends_with("[hooks.state.\"/h/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:ab\"\n"),
            "{once}"
        );
        let mut again = once.parse::<toml_edit::DocumentMut>().unwrap();
        record(&mut again, &trust).unwrap();
        assert_eq!(again.to_string(), once);
        assert_eq!(recorded(&once, &trust.key), (Some("sha256:ab".into()), false));
    }
}
