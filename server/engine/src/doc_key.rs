//! Document identity: turns the URIs editors and agents send into one key per file.
//!
//! Editors and agents spell the same file differently (`file:///a%20b.rs`,
//! `file:///a b.rs`, `/a b.rs`, `file:///x/../a b.rs`); all of these become the same
//! [`DocKey::File`] holding a lexically normalised absolute path. URIs of other schemes
//! (`untitled:Untitled-1`) are kept as they are and can only name open documents.

use std::borrow::Cow;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use percent_encoding::AsciiSet;

/// The identity of a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKey {
    /// A file, by its absolute, lexically normalised path.
    File(PathBuf),
    /// Any other URI, verbatim.
    Other(String),
}

/// Why a URI could not name a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("`uri` is empty: pass a file: URI such as file:///home/you/project/src/main.rs, or an absolute path")]
    Empty,
    #[error("`{0}` is not a URI nor an absolute path: pass a file: URI such as file:///home/you/project/src/main.rs")]
    Malformed(String),
    #[error("`{0}` is a relative path: pass an absolute path or a file: URI")]
    Relative(String),
}

impl DocKey {
    /// Parses what an editor or agent sent as a `uri`.
    pub fn parse(uri: &str) -> Result<Self, UriError> {
        if uri.is_empty() {
            return Err(UriError::Empty);
        }
        if uri.starts_with('/') {
            return Ok(Self::File(normalize(Path::new(uri))));
        }
        let parsed = fluent_uri::Uri::parse(uri).map_err(|_| {
            if uri.contains(':') { UriError::Malformed(uri.to_owned()) } else { UriError::Relative(uri.to_owned()) }
        })?;
        let is_file = parsed.scheme().as_str().eq_ignore_ascii_case("file");
        if !is_file {
            return Ok(Self::Other(uri.to_owned()));
        }
        let path = file_uri_path(&parsed).ok_or_else(|| UriError::Malformed(uri.to_owned()))?;
        if !path.is_absolute() {
            return Err(UriError::Relative(uri.to_owned()));
        }
        Ok(Self::File(normalize(&path)))
    }

    /// The canonical URI of this document.
    pub fn to_uri(&self) -> String {
        match self {
            Self::File(path) => file_uri(path).unwrap_or_else(|| format!("file://{}", path.display())),
            Self::Other(uri) => uri.clone(),
        }
    }

    /// The file path, for file documents.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Other(_) => None,
        }
    }
}

impl fmt::Display for DocKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Other(uri) => f.write_str(uri),
        }
    }
}

// `file:` URIs are read and written exactly as `ls_types::Uri` (the LSP types of
// tower-lsp-server) does on Unix, the only platform verbatim builds for: the engine
// uses the same `fluent-uri` and `percent-encoding` directly so that it does not depend
// on the LSP types. A test in the verbatim crate (`service::to_proto`) holds the two
// to the same answers.

/// What `percent-encoding` leaves alone in a path: RFC 3986's unreserved characters and `/`.
const PATH_UNRESERVED: AsciiSet =
    percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

/// The path of a `file:` URI, percent-decoded (invalid UTF-8 replaced); `None` if empty.
fn file_uri_path(uri: &fluent_uri::Uri<&str>) -> Option<PathBuf> {
    let path = uri.path().decode().to_string_lossy().into_owned();
    if path.is_empty() { None } else { Some(PathBuf::from(path)) }
}

/// The `file:` URI of a path (a relative one is canonicalized first); `None` if it cannot be
/// named.
fn file_uri(path: &Path) -> Option<String> {
    let absolute = if path.is_absolute() { Cow::Borrowed(path) } else { Cow::Owned(std::fs::canonicalize(path).ok()?) };
    let uri =
        format!("file://{}", percent_encoding::utf8_percent_encode(&absolute.to_string_lossy(), &PATH_UNRESERVED));
    fluent_uri::Uri::parse(uri.as_str()).ok()?;
    Some(uri)
}

/// Removes `.` components and resolves `..` lexically (never above the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_file_agree() {
        let expected = DocKey::File(PathBuf::from("/p/a b.rs"));
        for spelling in ["file:///p/a%20b.rs", "/p/a b.rs", "file:///p/x/../a%20b.rs", "/p/./a b.rs"] {
            assert_eq!(DocKey::parse(spelling), Ok(expected.clone()), "{spelling}");
        }
        assert_eq!(expected.to_uri(), "file:///p/a%20b.rs");
    }

    #[test]
    fn other_schemes_are_kept() {
        assert_eq!(DocKey::parse("untitled:Untitled-1"), Ok(DocKey::Other("untitled:Untitled-1".into())));
    }

    #[test]
    fn bad_uris_are_explained() {
        assert_eq!(DocKey::parse(""), Err(UriError::Empty));
        assert!(matches!(DocKey::parse("src/main.rs"), Err(UriError::Relative(_))));
        assert!(matches!(DocKey::parse("file://[bad"), Err(UriError::Malformed(_))));
    }
}
