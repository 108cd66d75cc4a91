//! Reading files that the editor does not have open.
//!
//! The text of a file is its decoded content without a leading byte order mark (as
//! editors show it; see [`crate::file_format`] for the encodings understood); its
//! revision is the hash of its raw bytes. A file that is not text (NUL bytes,
//! invalid UTF-8, ...) is refused rather than mangled.

use std::io;
use std::path::Path;

use crate::file_format::{self, Encoding};
use crate::rev::Rev;

/// A file read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskText {
    pub text: String,
    pub rev: Rev,
    /// How the file is stored, to write it back the same way.
    pub encoding: Encoding,
}

/// Why a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("no such file")]
    Missing,
    #[error("it is not text ({0})")]
    NotText(file_format::NotText),
    #[error("it is a directory")]
    Directory,
    #[error("{0}")]
    Io(#[from] io::Error),
}

pub fn read_text(path: &Path) -> Result<DiskText, DiskError> {
    if path.is_dir() {
        return Err(DiskError::Directory);
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(DiskError::Missing),
        Err(error) => return Err(DiskError::Io(error)),
    };
    let rev = Rev::of_bytes(&bytes);
    let decoded = file_format::decode(&bytes).map_err(DiskError::NotText)?;
    Ok(DiskText { text: decoded.text, rev, encoding: decoded.encoding })
}

/// `lf`, `crlf`, `cr` or `mixed` (`lf` for text without line breaks).
pub fn line_ending_of(text: &str) -> &'static str {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while let Some(offset) = memchr::memchr2(b'\r', b'\n', &bytes[i..]) {
        let at = i + offset;
        if bytes[at] == b'\r' {
            if bytes.get(at + 1) == Some(&b'\n') {
                crlf += 1;
                i = at + 2;
                continue;
            }
            cr += 1;
        } else {
            lf += 1;
        }
        i = at + 1;
    }
    match (lf > 0, crlf > 0, cr > 0) {
        (_, false, false) => "lf",
        (false, true, false) => "crlf",
        (false, false, true) => "cr",
        _ => "mixed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_are_classified() {
        assert_eq!(line_ending_of("no breaks"), "lf");
        assert_eq!(line_ending_of("a\nb\n"), "lf");
        assert_eq!(line_ending_of("a\r\nb\r\n"), "crlf");
        assert_eq!(line_ending_of("a\rb"), "cr");
        assert_eq!(line_ending_of("a\r\nb\n"), "mixed");
    }

    #[test]
    fn binary_and_bom_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = dir.path().join("bin");
        std::fs::write(&binary, b"\x00\x01\x02").expect("write");
        assert!(matches!(read_text(&binary), Err(DiskError::NotText(_))));
        let bom = dir.path().join("bom.txt");
        std::fs::write(&bom, "\u{feff}hi\n").expect("write");
        let read = read_text(&bom).expect("read");
        assert_eq!(read.text, "hi\n");
        assert_eq!(read.rev, Rev::of_bytes("\u{feff}hi\n".as_bytes()));
        assert_eq!(read.encoding, Encoding::Utf8Bom);
        assert!(matches!(read_text(&dir.path().join("none")), Err(DiskError::Missing)));
    }
}
