//! Quote matching and planning on arbitrary text: no panic, and an accepted plan
//! changes nothing outside its replaced spans (and, when no normalization was
//! needed, replaces exactly the quote).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ropey::Rope;
use verbatim_engine::normalize::Normalization;
use verbatim_engine::plan::{self, Edit, ReplaceRange, StrReplace};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    // Fields separated by U+0001: text, quote, replacement, after, before, selector.
    let mut fields = input.split('\u{1}');
    let text = fields.next().unwrap_or_default();
    let quote = fields.next().unwrap_or_default();
    let new = fields.next().unwrap_or_default();
    let after = fields.next().filter(|field| !field.is_empty()).map(str::to_owned);
    let before = fields.next().filter(|field| !field.is_empty()).map(str::to_owned);
    let selector = fields.next().and_then(|field| field.bytes().next()).unwrap_or(0);
    let rope = Rope::from_str(text);
    let edit = match selector % 4 {
        0 => Edit::StrReplace(StrReplace {
            old_str: quote.into(),
            new_str: new.into(),
            after,
            before,
            ..StrReplace::default()
        }),
        1 => Edit::StrReplace(StrReplace {
            old_str: quote.into(),
            new_str: new.into(),
            after,
            before,
            replace_all: true,
            ..StrReplace::default()
        }),
        2 => Edit::StrReplace(StrReplace {
            old_str: quote.into(),
            new_str: new.into(),
            after,
            before,
            occurrence: Some(u64::from(selector / 4)),
            ..StrReplace::default()
        }),
        _ => {
            let (from, to) =
                quote.split_at(quote.char_indices().nth(quote.chars().count() / 2).map_or(0, |(at, _)| at));
            Edit::ReplaceRange(ReplaceRange {
                from_str: from.into(),
                to_str: to.into(),
                new_str: new.into(),
                after,
                before,
                ..ReplaceRange::default()
            })
        }
    };
    let Ok(planned) = plan::plan(&rope, &edit) else { return };
    let replacements = planned.replacements;
    let result = plan::apply(&rope, &replacements).to_string();
    // Rebuild the expected text from the untouched gaps and the new texts.
    let mut expected = String::new();
    let mut position = 0;
    for replacement in &replacements {
        assert!(replacement.range.start >= position, "replacements overlap or are unsorted");
        expected.push_str(&text[position..replacement.range.start]);
        if let Edit::StrReplace(request) = &edit {
            let replaced = &text[replacement.range.clone()];
            if planned.normalizations.is_empty() {
                assert_eq!(replaced, request.old_str, "replaced text is not the quote");
            } else if planned.normalizations.iter().eq([Normalization::DeletedTrailingNewline].iter()) {
                assert!(replaced.starts_with(&request.old_str), "replaced text does not start with the quote");
            }
        }
        expected.push_str(&replacement.new_text);
        position = replacement.range.end;
    }
    expected.push_str(&text[position..]);
    assert_eq!(result, expected);
});
