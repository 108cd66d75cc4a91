//! How a text file is stored: its encoding and byte order mark. Decoding gives the
//! text an editor would show (without the BOM); encoding it back gives the very same
//! bytes, so everything an edit does not touch survives byte for byte.
//!
//! Supported: UTF-8 with or without a BOM, UTF-16 little and big endian with a BOM.
//! Anything else (NUL bytes, invalid UTF-8, unpaired surrogates, odd UTF-16 lengths,
//! UTF-32) is not text: it is refused rather than mangled.

/// The stored form of a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Utf8,
    /// UTF-8 starting with `EF BB BF`.
    Utf8Bom,
    /// UTF-16 little endian starting with `FF FE`.
    Utf16Le,
    /// UTF-16 big endian starting with `FE FF`.
    Utf16Be,
}

impl Encoding {
    /// How the encoding is named in results and journal entries.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf8Bom => "utf-8-bom",
            Self::Utf16Le => "utf-16le",
            Self::Utf16Be => "utf-16be",
        }
    }
}

/// Why bytes are not a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotText {
    #[error("it contains NUL bytes")]
    NulBytes,
    #[error("invalid UTF-8")]
    InvalidUtf8,
    #[error("UTF-16 with an odd number of bytes")]
    OddUtf16,
    #[error("UTF-16 with an unpaired surrogate")]
    UnpairedSurrogate,
    #[error("UTF-32 is not supported")]
    Utf32,
}

/// A decoded text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text without its byte order mark.
    pub text: String,
    pub encoding: Encoding,
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decodes the bytes of a file.
pub fn decode(bytes: &[u8]) -> Result<Decoded, NotText> {
    if bytes.starts_with(b"\xFF\xFE\0\0") || bytes.starts_with(b"\0\0\xFE\xFF") {
        return Err(NotText::Utf32);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return Ok(Decoded { text: decode_utf16(rest, u16::from_le_bytes)?, encoding: Encoding::Utf16Le });
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return Ok(Decoded { text: decode_utf16(rest, u16::from_be_bytes)?, encoding: Encoding::Utf16Be });
    }
    let (body, encoding) = match bytes.strip_prefix(UTF8_BOM) {
        Some(rest) => (rest, Encoding::Utf8Bom),
        None => (bytes, Encoding::Utf8),
    };
    if memchr::memchr(0, body).is_some() {
        return Err(NotText::NulBytes);
    }
    let text = std::str::from_utf8(body).map_err(|_| NotText::InvalidUtf8)?;
    Ok(Decoded { text: text.to_owned(), encoding })
}

fn decode_utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Result<String, NotText> {
    if !bytes.len().is_multiple_of(2) {
        return Err(NotText::OddUtf16);
    }
    let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    let mut text = String::with_capacity(bytes.len() / 2);
    for decoded in char::decode_utf16(units) {
        match decoded {
            Ok('\0') => return Err(NotText::NulBytes),
            Ok(ch) => text.push(ch),
            Err(_) => return Err(NotText::UnpairedSurrogate),
        }
    }
    Ok(text)
}

/// Encodes text back into the bytes of a file stored as `encoding`.
pub fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf8Bom => [UTF8_BOM, text.as_bytes()].concat(),
        Encoding::Utf16Le => encode_utf16(text, b"\xFF\xFE", u16::to_le_bytes),
        Encoding::Utf16Be => encode_utf16(text, b"\xFE\xFF", u16::to_be_bytes),
    }
}

fn encode_utf16(text: &str, bom: &[u8], bytes: fn(u16) -> [u8; 2]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bom.len() + text.len() * 2);
    out.extend_from_slice(bom);
    for unit in text.encode_utf16() {
        out.extend_from_slice(&bytes(unit));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let mut out = if big_endian { vec![0xFE, 0xFF] } else { vec![0xFF, 0xFE] };
        for unit in text.encode_utf16() {
            out.extend(if big_endian { unit.to_be_bytes() } else { unit.to_le_bytes() });
        }
        out
    }

    #[test]
    fn every_supported_form_round_trips_byte_for_byte() {
        let text = "héllo 😀\r\nworld\n";
        let cases = [
            (text.as_bytes().to_vec(), Encoding::Utf8),
            ([b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(), Encoding::Utf8Bom),
            (utf16(text, false), Encoding::Utf16Le),
            (utf16(text, true), Encoding::Utf16Be),
            (b"\xEF\xBB\xBF".to_vec(), Encoding::Utf8Bom),
            (b"\xFF\xFE".to_vec(), Encoding::Utf16Le),
            (Vec::new(), Encoding::Utf8),
        ];
        for (bytes, encoding) in cases {
            let decoded = decode(&bytes).expect("text");
            assert_eq!(decoded.encoding, encoding);
            assert!(!decoded.text.starts_with('\u{feff}'));
            assert_eq!(encode(&decoded.text, encoding), bytes, "{encoding:?}");
        }
    }

    #[test]
    fn what_is_not_text_is_refused() {
        assert_eq!(decode(b"a\0b"), Err(NotText::NulBytes));
        assert_eq!(decode(b"\xC3\x28"), Err(NotText::InvalidUtf8));
        assert_eq!(decode(b"\xFF\xFEa"), Err(NotText::OddUtf16));
        assert_eq!(decode(b"\xFF\xFE\x00\xD8"), Err(NotText::UnpairedSurrogate));
        assert_eq!(decode(b"\xFF\xFE\0\0a\0\0\0"), Err(NotText::Utf32));
        assert_eq!(decode(&utf16("a\0", false)), Err(NotText::NulBytes));
    }
}
