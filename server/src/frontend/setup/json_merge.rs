//! Merging into a JSON configuration file: every key the person had stays, in its order,
//! and a file already configured is left byte for byte as it is.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::types::SetupError;

/// Adds `item` to the array at `key` of `map` (made an array if it is not one).
pub(crate) fn push_unique(map: &mut Map<String, Value>, key: &str, item: &str) {
    let list = map.entry(key).or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Value::Array(entries) = list
        && !entries.iter().any(|entry| entry == item)
    {
        entries.push(json!(item));
    }
}

pub(crate) fn object_at<'a>(root: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let value = root.entry(key).or_insert_with(|| json!({}));
    if !value.is_object() {
        *value = json!({});
    }
    match value {
        Value::Object(map) => map,
        _ => unreachable!("just made an object"),
    }
}

/// Merges into a JSON file's text (or a new one); every other key stays as it was.
/// `change` refuses with the reason when what is there cannot take the entry (a key
/// of the person's that holds something else): nothing is written then.
pub(crate) fn merge_json(
    path: &Path,
    text: Option<&str>,
    change: impl Fn(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<String, SetupError> {
    let mut root = match text.map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(unmergeable(path, "it is JSON, but not an object", &change));
            }
            Err(error) => {
                let why = if text.contains("//") || text.contains("/*") {
                    "it has comments, which a JSON writer would drop".to_owned()
                } else {
                    format!("it is not valid JSON: {error}")
                };
                return Err(unmergeable(path, &why, &change));
            }
        },
    };
    let before = root.clone();
    if let Err(why) = change(&mut root) {
        return Err(unmergeable(path, &why, &change));
    }
    if text.is_some() && root == before {
        // Already configured: leave the file byte for byte as it is.
        return Ok(text.unwrap_or_default().to_owned());
    }
    let mut out = serde_json::to_string_pretty(&Value::Object(root))
        .map_err(|error| SetupError::Io(format!("cannot write JSON: {error}")))?;
    out.push('\n');
    Ok(out)
}

pub(crate) fn unmergeable(
    path: &Path,
    why: &str,
    change: &impl Fn(&mut Map<String, Value>) -> Result<(), String>,
) -> SetupError {
    let mut entry = Map::new();
    // The entry alone, as it would be in a new file, to add by hand.
    let _ = change(&mut entry);
    let by_hand = serde_json::to_string_pretty(&Value::Object(entry)).unwrap_or_default();
    SetupError::Unmergeable { path: path.to_owned(), why: why.to_owned(), by_hand }
}
