//! Conversion of engine results to LSP wire types: ranges in a position encoding,
//! the edits reported to agents, and the WorkspaceEdit sent to the editor (text
//! edits, and the create, delete and rename operations of files).

use std::collections::HashMap;
use std::ops::Range;
use std::str::FromStr;

use ropey::Rope;
use tower_lsp_server::ls_types::{
    self, AnnotatedTextEdit, ChangeAnnotation, CreateFile, CreateFileOptions, DeleteFile, DeleteFileOptions,
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, RenameFile,
    RenameFileOptions, ResourceOp, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

use verbatim_engine::plan::Replacement;
use verbatim_engine::position::{PositionEncoding, byte_range_to_positions};
use verbatim_engine::proposal_hunks::ProposalHunk;

use crate::service::protocol::WireEdit;

/// The position encoding for a peer, from what its `initialize` offers.
pub fn negotiated_encoding(capabilities: &ls_types::ClientCapabilities) -> PositionEncoding {
    let offered = capabilities.general.as_ref().and_then(|general| general.position_encodings.as_ref());
    PositionEncoding::negotiate(offered.into_iter().flatten().map(|encoding| encoding.as_str()))
}

pub fn position(position: verbatim_engine::position::Position) -> ls_types::Position {
    ls_types::Position::new(position.line, position.character)
}

pub fn from_position(position: ls_types::Position) -> verbatim_engine::position::Position {
    verbatim_engine::position::Position::new(position.line, position.character)
}

/// A byte range of `text` as an LSP range in `encoding`.
pub fn range(text: &Rope, range: &Range<usize>, encoding: PositionEncoding) -> ls_types::Range {
    let (start, end) = byte_range_to_positions(text, range, encoding);
    ls_types::Range::new(position(start), position(end))
}

/// The replacements as reported to an agent.
pub fn wire_edits(text: &Rope, replacements: &[Replacement], encoding: PositionEncoding) -> Vec<WireEdit> {
    replacements
        .iter()
        .map(|replacement| WireEdit {
            range: range(text, &replacement.range, encoding),
            old_text: text.byte_slice(replacement.range.clone()).to_string(),
            new_text: replacement.new_text.clone(),
        })
        .collect()
}

/// One document's part of a WorkspaceEdit.
#[derive(Debug, Clone)]
pub struct EditorChange<'a> {
    /// The URI as the editor knows it.
    pub uri: &'a str,
    /// The version the plan was computed against; `None` for a file that is not open.
    pub version: Option<i32>,
    pub base: &'a Rope,
    /// The proposal's hunks, in document order (their edits are what is sent).
    pub hunks: &'a [ProposalHunk],
    /// What the person should know about each hunk, by hunk (`note` of `verbatim.hunks`).
    pub notes: &'a [Option<String>],
    /// Create the file first.
    pub create: bool,
    /// Delete the file (no text edits are sent for it).
    pub delete: bool,
    /// Move the file to this URI after its text edits.
    pub rename_to: Option<&'a str>,
}

/// How the WorkspaceEdit is labelled and what the editor supports.
#[derive(Debug, Clone)]
pub struct EditorEditOptions {
    pub encoding: PositionEncoding,
    pub annotation_id: String,
    pub annotation: ChangeAnnotation,
    /// The editor supports versioned `documentChanges`.
    pub document_changes: bool,
}

/// Which text edits of one document form a hunk (`verbatim.hunks` of the params).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HunkEdits {
    pub uri: String,
    /// Indexes into the document's text edits.
    pub edits: Vec<usize>,
    /// What the person should know before taking this hunk (a revert's conflict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Builds the WorkspaceEdit for the editor: minimal annotated edits per document,
/// versioned with the revision the plan was computed against; and which of its
/// text edits form each hunk, numbered across the documents in order.
pub fn workspace_edit(
    changes: &[EditorChange<'_>],
    options: &EditorEditOptions,
) -> Result<(WorkspaceEdit, Vec<HunkEdits>), String> {
    let mut operations = Vec::new();
    let mut plain: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    let mut hunk_edits = Vec::new();
    for change in changes {
        let uri =
            Uri::from_str(change.uri).map_err(|error| format!("cannot send {} to the editor: {error}", change.uri))?;
        if change.delete && options.document_changes {
            operations.push(DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
                uri,
                options: Some(DeleteFileOptions { recursive: Some(false), ignore_if_not_exists: Some(false) }),
                annotation_id: Some(options.annotation_id.clone()),
            })));
            continue;
        }
        let mut next_edit = 0;
        for (index, hunk) in change.hunks.iter().enumerate() {
            let edits = (next_edit..next_edit + hunk.edits.len()).collect();
            next_edit += hunk.edits.len();
            let note = change.notes.get(index).cloned().flatten();
            hunk_edits.push(HunkEdits { uri: change.uri.to_owned(), edits, note });
        }
        let text_edits: Vec<TextEdit> = change
            .hunks
            .iter()
            .flat_map(|hunk| &hunk.edits)
            .map(|edit| TextEdit {
                range: range(change.base, &edit.range, options.encoding),
                new_text: edit.new_text.clone(),
            })
            .collect();
        if !options.document_changes {
            plain.entry(uri).or_default().extend(text_edits);
            continue;
        }
        if change.create {
            operations.push(DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                uri: uri.clone(),
                options: Some(CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(false) }),
                annotation_id: Some(options.annotation_id.clone()),
            })));
        }
        let edits: Vec<_> = text_edits
            .into_iter()
            .map(|text_edit| {
                OneOf::Right(AnnotatedTextEdit { text_edit, annotation_id: options.annotation_id.clone() })
            })
            .collect();
        // A pure move carries no text edit (an empty one would still pin the version).
        if !edits.is_empty() || change.rename_to.is_none() {
            operations.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: change.version },
                edits,
            }));
        }
        if let Some(target) = change.rename_to {
            let new_uri =
                Uri::from_str(target).map_err(|error| format!("cannot send {target} to the editor: {error}"))?;
            operations.push(DocumentChangeOperation::Op(ResourceOp::Rename(RenameFile {
                old_uri: uri,
                new_uri,
                options: Some(RenameFileOptions { overwrite: Some(false), ignore_if_exists: Some(false) }),
                annotation_id: Some(options.annotation_id.clone()),
            })));
        }
    }
    if !options.document_changes {
        return Ok((WorkspaceEdit { changes: Some(plain), ..WorkspaceEdit::default() }, hunk_edits));
    }
    let edit = WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(operations)),
        change_annotations: Some(HashMap::from([(options.annotation_id.clone(), options.annotation.clone())])),
    };
    Ok((edit, hunk_edits))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::str::FromStr;

    use tower_lsp_server::ls_types::Uri;
    use verbatim_engine::doc_key::DocKey;

    /// The engine reads and writes `file:` URIs without the LSP types; they must agree.
    #[test]
    fn doc_keys_write_file_uris_as_ls_types_does() {
        for path in [
            "/",
            "/p/a b.rs",
            "/p/ünï cødé/ß.rs",
            "/p/100%.txt",
            "/p/a#b?c.rs",
            "/p/[x]{y}(z).rs",
            "/p/semi;colon,comma=eq&amp+plus$@!'*.rs",
            "/p/~tilde-._",
            "/p/tab\there",
            "/p/emoji 😀.md",
            "/p/back\\slash",
        ] {
            let expected = Uri::from_file_path(path).map(|uri| uri.to_string()).expect("an absolute path has a URI");
            assert_eq!(DocKey::File(PathBuf::from(path)).to_uri(), expected, "{path}");
        }
    }

    #[test]
    fn doc_keys_read_uris_as_ls_types_does() {
        for uri in [
            "file:///p/a%20b.rs",
            "file:///p/a b.rs",
            "file:///p/%C3%BC.rs",
            "file:///p/%FF.rs",
            "file:///p/x.rs?query#fragment",
            "FILE:///p/x.rs",
            "file://host/p/x.rs",
            "file:relative/x.rs",
            "file:",
            "file://",
            "file:///",
            "file://[bad",
            "untitled:Untitled-1",
            "https://example.com/x.rs",
            "c:\\x.rs",
            "%%",
            "x",
        ] {
            let expected = match Uri::from_str(uri) {
                Err(_) => None,
                Ok(parsed) if !parsed.scheme().as_str().eq_ignore_ascii_case("file") => {
                    Some(DocKey::Other(uri.to_owned()))
                }
                Ok(parsed) => {
                    parsed.to_file_path().filter(|path| path.is_absolute()).map(|path| DocKey::File(path.into_owned()))
                }
            };
            assert_eq!(DocKey::parse(uri).ok(), expected, "{uri}");
        }
    }
}
