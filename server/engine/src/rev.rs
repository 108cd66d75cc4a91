//! Revisions: the opaque strings an agent reads and carries back as `baseRev`.
//!
//! An open document's revision is `e<session>.<version>`: the editor's version
//! and the number of the `didOpen` that started this editing session, so closing
//! and reopening a document never reuses a revision. A file read from disk has
//! `d<16 hex digits>`, the start of the SHA-256 of its bytes.

use std::fmt;
use std::str::FromStr;

use ropey::Rope;
use sha2::{Digest, Sha256};

/// A document revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rev {
    /// A live editor buffer: its open session and the editor's version.
    Editor { session: u64, version: i32 },
    /// Content on disk, named by the first 8 bytes of its SHA-256.
    Disk([u8; 8]),
}

impl Rev {
    /// The revision of these bytes as a file on disk.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        let digest = Sha256::digest(bytes);
        Self::Disk(first_eight(&digest))
    }

    /// The disk revision a file with exactly this text would have.
    pub fn of_rope(rope: &Rope) -> Self {
        let mut hasher = Sha256::new();
        for chunk in rope.chunks() {
            hasher.update(chunk.as_bytes());
        }
        Self::Disk(first_eight(&hasher.finalize()))
    }
}

fn first_eight(digest: &[u8]) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(&digest[..8]);
    out
}

impl fmt::Display for Rev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Editor { session, version } => write!(f, "e{session}.{version}"),
            Self::Disk(bytes) => {
                f.write_str("d")?;
                for byte in bytes {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
        }
    }
}

/// The text was not a revision this server hands out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a revision: pass back the `rev` string exactly as a read returned it")]
pub struct InvalidRev(pub String);

impl FromStr for Rev {
    type Err = InvalidRev;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidRev(text.to_owned());
        if let Some(rest) = text.strip_prefix('e') {
            let (session, version) = rest.split_once('.').ok_or_else(invalid)?;
            Ok(Self::Editor {
                session: session.parse().map_err(|_| invalid())?,
                version: version.parse().map_err(|_| invalid())?,
            })
        } else if let Some(hex) = text.strip_prefix('d') {
            if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid());
            }
            let mut bytes = [0u8; 8];
            for (i, byte) in bytes.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| invalid())?;
            }
            Ok(Self::Disk(bytes))
        } else {
            Err(invalid())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_round_trip_through_text() {
        for rev in
            [Rev::Editor { session: 3, version: 17 }, Rev::Editor { session: 1, version: -2 }, Rev::of_bytes(b"hello")]
        {
            assert_eq!(rev.to_string().parse::<Rev>(), Ok(rev));
        }
    }

    #[test]
    fn rope_and_bytes_hash_alike() {
        let text = "a\r\nb😀".repeat(2000);
        assert_eq!(Rev::of_rope(&Rope::from_str(&text)), Rev::of_bytes(text.as_bytes()));
    }

    #[test]
    fn garbage_is_refused() {
        for text in ["", "17", "e1", "e1.x", "dzz", "d0011"] {
            assert!(text.parse::<Rev>().is_err(), "{text}");
        }
    }
}
