//! A tool's arguments, in the model's names, as its method's params.
//!
//! A tool's input schema is derived from its method's params
//! ([`crate::service::protocol::params`]): the same fields, named snake_case, with
//! `path` for `uri`. The arguments are read along that schema: a name it does not list
//! is refused, and a required one that is missing, with the schema's names (what the
//! model sent and can fix), before the renamed object is read by the params' own serde.

use serde_json::{Map, Value};

use crate::frontend::tool_output::input_schema;
use crate::service::protocol::MethodParams;

/// The params of `P` from a tool's arguments, or what was wrong with them.
pub fn params_of<P: MethodParams>(arguments: Map<String, Value>) -> Result<P, String> {
    let schema = Value::Object((*input_schema::<P>()).clone());
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let wire = wire_names(Value::Object(arguments), &schema, &defs)?;
    serde_json::from_value(wire).map_err(|error| error.to_string())
}

/// The protocol's name of a tool's parameter: `path` is `uri`, the others are the
/// same words in camelCase.
pub fn wire_name(tool_name: &str) -> String {
    if tool_name == "path" {
        return "uri".to_owned();
    }
    let mut wire = String::with_capacity(tool_name.len());
    let mut upper = false;
    for c in tool_name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            wire.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            wire.push(c);
        }
    }
    wire
}

/// `value` with every object's names the protocol's, checked against `schema`.
fn wire_names(value: Value, schema: &Value, defs: &Value) -> Result<Value, String> {
    let schema = resolved(schema, defs);
    match value {
        Value::Object(object) if schema.get("type").and_then(Value::as_str) == Some("object") => {
            let no_properties = Map::new();
            let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&no_properties);
            let mut wire = Map::new();
            for (name, value) in object {
                let Some(property) = properties.get(&name) else { return Err(unknown_field(&name, properties)) };
                wire.insert(wire_name(&name), wire_names(value, property, defs)?);
            }
            let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
            if let Some(missing) = required.filter_map(Value::as_str).find(|name| !wire.contains_key(&wire_name(name)))
            {
                return Err(format!("missing field `{missing}`"));
            }
            Ok(Value::Object(wire))
        }
        Value::Array(items) => match schema.get("items") {
            Some(item) => {
                items.into_iter().map(|value| wire_names(value, item, defs)).collect::<Result<_, _>>().map(Value::Array)
            }
            None => Ok(Value::Array(items)),
        },
        other => Ok(other),
    }
}

/// The schema a `$ref` points to, or `schema` itself.
fn resolved<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name))
        .unwrap_or(schema)
}

/// Serde's words for an unknown field, with the tool's names.
fn unknown_field(name: &str, properties: &Map<String, Value>) -> String {
    let names: Vec<String> = properties.keys().map(|name| format!("`{name}`")).collect();
    let expected = match names.as_slice() {
        [] => "there are no fields".to_owned(),
        [only] => format!("expected {only}"),
        [first, second] => format!("expected {first} or {second}"),
        all => format!("expected one of {}", all.join(", ")),
    };
    format!("unknown field `{name}`, {expected}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::service::protocol::{
        ApplyPatchParams, BatchEditParams, DiagnosticsLevel, DocumentsParams, ReadParams, ReplaceRangeParams,
        RevertParams, StrReplaceParams, TimelineParams, WriteParams,
    };

    /// The protocol's names of `P`'s fields, as its serde lists them when refusing an
    /// unknown one.
    fn wire_fields<P: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
        let error = serde_json::from_value::<P>(json!({"\u{1}": 0})).expect_err("an unknown field is refused");
        let message = error.to_string();
        message.split('`').skip(3).step_by(2).map(str::to_owned).collect()
    }

    fn properties(schema: &Value) -> Vec<String> {
        schema["properties"].as_object().map(|properties| properties.keys().cloned().collect()).unwrap_or_default()
    }

    /// Every field of `P` is a parameter of its tool (in the tool's names) but those
    /// `hidden` on purpose, and every parameter of the tool is a field of `P`.
    fn derived_from<P: MethodParams>(hidden: &[&str]) {
        let schema = schema_of::<P>();
        let tool: Vec<String> = properties(&schema).iter().map(|name| wire_name(name)).collect();
        let wire = wire_fields::<P>();
        for field in &wire {
            assert_eq!(tool.contains(field), !hidden.contains(&field.as_str()), "{field} of {}: {schema}", P::METHOD);
        }
        for name in &tool {
            assert!(wire.contains(name), "the tool's {name} is no field of {}: {wire:?}", P::METHOD);
        }
    }

    fn schema_of<P: MethodParams>() -> Value {
        Value::Object((*input_schema::<P>()).clone())
    }

    /// Reads `arguments` (a JSON object) as `P`'s tool does.
    fn read<P: MethodParams>(arguments: Value) -> Result<P, String> {
        match arguments {
            Value::Object(arguments) => params_of(arguments),
            other => Err(format!("not an object: {other}")),
        }
    }

    #[test]
    fn every_tool_schema_is_its_methods_params() {
        derived_from::<ReadParams>(&[]);
        derived_from::<StrReplaceParams>(&["diagnosticsTimeoutMs"]);
        derived_from::<ReplaceRangeParams>(&["diagnosticsTimeoutMs"]);
        derived_from::<BatchEditParams>(&["diagnosticsTimeoutMs"]);
        derived_from::<WriteParams>(&["diagnosticsTimeoutMs"]);
        derived_from::<ApplyPatchParams>(&["diagnosticsTimeoutMs"]);
        derived_from::<TimelineParams>(&["workspace"]);
        derived_from::<RevertParams>(&["asTurn"]);
        assert!(properties(&schema_of::<DocumentsParams>()).is_empty());
        // A batch's entries too.
        let schema = schema_of::<BatchEditParams>();
        let entry: Vec<String> =
            properties(&schema["$defs"]["BatchEditEntry"]).iter().map(|name| wire_name(name)).collect();
        assert_eq!(entry, wire_fields::<crate::service::protocol::BatchEntry>(), "{schema}");
    }

    #[test]
    fn each_tool_offers_the_schema_of_its_methods_params() {
        let tools = super::super::VerbatimMcp::tool_router().list_all();
        let offered = |name: &str| {
            let tool = tools.iter().find(|tool| tool.name == name).expect("the tool is listed");
            Value::Object((*tool.input_schema).clone())
        };
        assert_eq!(offered("read_file"), schema_of::<ReadParams>());
        assert_eq!(offered("str_replace"), schema_of::<StrReplaceParams>());
        assert_eq!(offered("replace_range"), schema_of::<ReplaceRangeParams>());
        assert_eq!(offered("batch_edit"), schema_of::<BatchEditParams>());
        assert_eq!(offered("write_file"), schema_of::<WriteParams>());
        assert_eq!(offered("apply_patch"), schema_of::<ApplyPatchParams>());
        assert_eq!(offered("timeline"), schema_of::<TimelineParams>());
        assert_eq!(offered("revert"), schema_of::<RevertParams>());
        assert_eq!(offered("list_documents"), schema_of::<DocumentsParams>());
    }

    #[test]
    fn arguments_in_the_tools_names_become_the_params() {
        let params: StrReplaceParams = read(json!({
            "path": "src/a.rs", "old_str": "a", "new_str": "b", "summary": "s", "replace_all": true,
            "base_rev": "e1.2", "diagnostics": "warnings", "occurrence": 2,
        }))
        .expect("valid arguments");
        assert_eq!((params.uri.as_str(), params.old_str.as_str(), params.new_str.as_str()), ("src/a.rs", "a", "b"));
        assert!(params.replace_all);
        assert_eq!(params.base_rev.as_deref(), Some("e1.2"));
        assert_eq!(params.diagnostics, Some(DiagnosticsLevel::Warnings));
        assert_eq!(params.occurrence, Some(2));

        let batch: BatchEditParams =
            read(json!({"summary": "s", "edits": [{"path": "a", "from_str": "x", "to_str": "y", "new_str": "z"}]}))
                .expect("valid arguments");
        assert_eq!((batch.edits[0].uri.as_str(), batch.edits[0].to_str.as_deref()), ("a", Some("y")));
        // Sent without the fields left out, so that the front-end's own turn and
        // diagnostics can fill them.
        let wire = batch.to_wire();
        assert!(wire.get("turn").is_none() && wire.get("diagnostics").is_none(), "{wire}");
        assert_eq!(
            wire["edits"][0],
            json!({"uri": "a", "fromStr": "x", "toStr": "y", "newStr": "z", "replaceAll": false, "exact": false})
        );
    }

    #[test]
    fn wire_names_and_hidden_fields_are_refused_in_the_tools_names() {
        let refused = |arguments: Value| read::<StrReplaceParams>(arguments).expect_err("refused");
        let camel = refused(json!({"path": "a", "oldStr": "x", "new_str": "y", "summary": "s"}));
        assert!(camel.starts_with("unknown field `oldStr`, expected one of `path`, `old_str`"), "{camel}");
        let hidden =
            refused(json!({"path": "a", "old_str": "x", "new_str": "y", "summary": "s", "diagnostics_timeout_ms": 5}));
        assert!(hidden.starts_with("unknown field `diagnostics_timeout_ms`"), "{hidden}");
        let expected = &hidden["unknown field `diagnostics_timeout_ms`".len()..];
        assert!(expected.contains("`diagnostics`") && !expected.contains("timeout"), "{hidden}");
        assert_eq!(refused(json!({"path": "a", "new_str": "y", "summary": "s"})), "missing field `old_str`");
        let entry = read::<BatchEditParams>(json!({"summary": "s", "edits": [{"uri": "a", "new_str": "z"}]}))
            .expect_err("refused");
        assert!(entry.starts_with("unknown field `uri`, expected one of `path`"), "{entry}");
        let none = read::<DocumentsParams>(json!({"x": 1})).expect_err("refused");
        assert_eq!(none, "unknown field `x`, there are no fields");
    }
}
