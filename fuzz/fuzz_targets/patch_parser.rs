//! The patch parser on arbitrary text: never panics; every error names a line of
//! the patch; every parsed operation names a path and a line inside the patch.
#![no_main]

use libfuzzer_sys::fuzz_target;
use verbatim_engine::patch::{FileChange, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = text.lines().count().max(1) + 1;
    match parse(text) {
        Err(error) => {
            assert!(error.line >= 1 && error.line <= lines, "error line {} of {lines}", error.line);
            assert!(!error.message.is_empty());
        }
        Ok(patch) => {
            for operation in &patch.operations {
                assert!(!operation.path.trim().is_empty(), "an operation without a path");
                assert!(operation.line >= 1 && operation.line <= lines);
                if let FileChange::Update { hunks, .. } | FileChange::Replace { hunks } = &operation.change {
                    for hunk in hunks {
                        assert!(hunk.line >= 1 && hunk.line <= lines);
                    }
                }
            }
        }
    }
});
