//! Exit codes: one per error kind, so scripts can branch on what went wrong.
//!
//! A kind's code is 2 + its position in the protocol's numbering (`-33001` →
//! 3, ..., `-33020` → 22); kinds added later follow the same rule. The table is
//! in `--help` and in `docs/agents.md`; tests check both against this function.

use verbatim::service::error::ErrorKind;

/// Success (applied, dry run, or read).
pub const OK: u8 = 0;
/// A failure the protocol does not describe (a bug, an I/O error of the CLI itself).
pub const INTERNAL: u8 = 1;
/// Wrong arguments (clap's own code).
pub const USAGE: u8 = 2;
/// `verbatim revert` wrote the revert but left conflicts as they are.
pub const CONFLICT: u8 = 23;

/// The exit code of an error kind.
pub fn of_kind(kind: ErrorKind) -> u8 {
    let position = -33_000 - kind.code();
    u8::try_from(2 + position).unwrap_or(INTERNAL)
}

pub const EXIT_CODES_HELP: &str = "\
Exit codes:
   0  success (applied, dry run, read)      10  rejected (the person refused it)
   1  internal error                        11  editorUnavailable
   2  wrong arguments                       12  unknownDocument
   3  notFound (a quote is not there)       13  outsideWorkspace
   4  ambiguous (a quote matches twice)     14  invalidParams
   5  stale (the file changed since)        15  timeout
   6  emptyQuote                            16  notText
   7  noChange                              17  io
   8  rangeOrder                            18  editorError
   9  overlap                               19  permissionDenied (read-only, or a denied path)
                                            20  notAnswered (the editor never answered)
                                            21  notRevertible (nothing named can be reverted)
                                            22  unknownEntry (no such id, turn or session)
                                            23  revert written, some conflicts left as they are";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_documented_code() {
        let agents = include_str!("../../../docs/agents.md");
        for kind in ErrorKind::ALL {
            let code = of_kind(kind);
            assert!((3..64).contains(&code), "{kind}: {code}");
            assert!(EXIT_CODES_HELP.contains(&format!("{code:>2}  {kind}")), "--help lacks {code} {kind}");
            assert!(
                agents.contains(&format!("| {code} | `{kind}` |")),
                "docs/agents.md lacks the row | {code} | `{kind}` |"
            );
        }
        assert_eq!(of_kind(ErrorKind::NotFound), 3);
        assert_eq!(of_kind(ErrorKind::EditorError), 18);
    }
}
