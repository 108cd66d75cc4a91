//! Where the command line's words go: results to stdout, errors and notes to stderr.
//!
//! Everything is written through `io::Write` handles rather than `print!`: a reader
//! that closes the pipe early (`verbatim read f | head`) then ends the output
//! quietly instead of panicking, and stdout stays a channel only this module uses.

use std::io::{self, Write};

use serde_json::Value;

/// Writes `text` to stdout as is.
pub fn out(text: &str) {
    write_ignoring_closed_pipe(&mut io::stdout().lock(), text.as_bytes());
}

/// Writes `text` to stderr, ending it with a newline.
pub fn note(text: &str) {
    let mut stderr = io::stderr().lock();
    write_ignoring_closed_pipe(&mut stderr, text.as_bytes());
    if !text.ends_with('\n') {
        write_ignoring_closed_pipe(&mut stderr, b"\n");
    }
}

/// Writes a JSON value and a newline to stdout.
pub fn json(value: &Value) {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    out(&text);
}

fn write_ignoring_closed_pipe(writer: &mut impl Write, bytes: &[u8]) {
    let outcome = writer.write_all(bytes).and_then(|()| writer.flush());
    if let Err(error) = outcome
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        // Nothing else can carry this message; the exit code still tells.
        let _ = io::stderr().write_all(format!("verbatim: cannot write the output: {error}\n").as_bytes());
    }
}
