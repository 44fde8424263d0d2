//! One segment of a wire name.
//!
//! Rules: a segment in normal form is one or more runs of `[a-z0-9]` joined
//! by single `_`. [`normalize_segment`] maps any text to that form (or to
//! nothing), and maps a segment already in that form to itself, so
//! normalising twice changes nothing. [`is_normalized_segment`] checks the
//! form without building anything, for callers that receive segments the
//! macros normalised and only need to trust them.

use heck::ToSnakeCase;

/// The suffix [`owner_segment`] removes from a toolset's type name.
const TOOLSET_SUFFIX: &str = "Toolset";

/// Normalises one wire-name segment: `heck` snake_case, then every character
/// outside `[a-z0-9]` becomes `_`, runs of `_` collapse to one, and `_` is
/// trimmed at both ends.
///
/// Nothing is refused here: capitals, dots, dashes, spaces, `__` and
/// non-ASCII characters are normalised. The result is empty when the text
/// has no ASCII letter or digit, and an empty segment is invalid in a wire
/// name.
///
/// ```
/// use oscova_wire::normalize_segment;
///
/// assert_eq!(normalize_segment("acme.search"), "acme_search");
/// assert_eq!(normalize_segment("SearchRecords"), "search_records");
/// assert_eq!(normalize_segment("  --Weird..Name--  "), "weird_name");
/// assert_eq!(normalize_segment("x__y"), "x_y");
/// assert_eq!(normalize_segment("!!!"), "");
/// ```
pub fn normalize_segment(raw: &str) -> String {
    let snake = raw.to_snake_case();
    let mut out = String::with_capacity(snake.len());
    // Starts as if after a `_`, which trims the leading ones.
    let mut after_underscore = true;
    for c in snake.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            after_underscore = false;
        } else if !after_underscore {
            out.push('_');
            after_underscore = true;
        }
    }
    if out.ends_with('_') {
        out.pop();
    }
    out
}

/// The owner segment of a toolset type: the type name with one trailing
/// `Toolset` removed (kept whole if nothing would be left), normalised.
///
/// ```
/// use oscova_wire::owner_segment;
///
/// assert_eq!(owner_segment("ExampleToolset"), "example");
/// assert_eq!(owner_segment("Toolset"), "toolset");
/// assert_eq!(owner_segment("WeatherToolsetToolset"), "weather_toolset");
/// assert_eq!(owner_segment("Weather"), "weather");
/// ```
pub fn owner_segment(type_name: &str) -> String {
    let stripped = match type_name.strip_suffix(TOOLSET_SUFFIX) {
        Some(rest) if !rest.is_empty() => rest,
        _ => type_name,
    };
    normalize_segment(stripped)
}

/// Whether `segment` is already in normal form: non-empty, `[a-z0-9]` runs
/// joined by single `_`, which is exactly what [`normalize_segment`]
/// returns when it returns anything.
///
/// ```
/// use oscova_wire::is_normalized_segment;
///
/// assert!(is_normalized_segment("search_records"));
/// assert!(!is_normalized_segment("SearchRecords"));
/// assert!(!is_normalized_segment("a__b"));
/// assert!(!is_normalized_segment("_a"));
/// assert!(!is_normalized_segment(""));
/// ```
pub fn is_normalized_segment(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first != b'_'
        && last != b'_'
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !bytes.windows(2).any(|w| w == b"__")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs of every kind the rule meets: plugin ids, type names, display
    /// names, method names.
    const CASES: &[(&str, &str)] = &[
        // Plugin ids, including the Oscova manifest spelling.
        ("acme.search", "acme_search"),
        ("Oscova.LocalSpeech", "oscova_local_speech"),
        ("Ceo.Probe-Tools", "ceo_probe_tools"),
        ("Acme-Search", "acme_search"),
        ("Acme Search", "acme_search"),
        ("a__b", "a_b"),
        ("x-y_z.9", "x_y_z_9"),
        ("9lives", "9lives"),
        // Type and tool names.
        ("ExampleToolset", "example_toolset"),
        ("search_records", "search_records"),
        ("example_echo", "example_echo"),
        ("HTTPServer", "http_server"),
        ("getURLForID", "get_url_for_id"),
        ("v2Api", "v2_api"),
        ("ABC123Def", "abc123_def"),
        ("CamelMethod", "camel_method"),
        // Separators, padding and runs.
        ("a--b", "a_b"),
        ("__x__", "x"),
        ("dots.and..dots", "dots_and_dots"),
        ("  padded   name  ", "padded_name"),
        ("tab\there", "tab_here"),
        // Outside ASCII: letters go, the rest of the name stays.
        ("Grüße", "gr_e"),
        ("naïve café", "na_ve_caf"),
        ("名前 lookup", "lookup"),
        ("emoji🙂face", "emoji_face"),
        // Nothing left.
        ("", ""),
        ("___", ""),
        ("...", ""),
        ("名前", ""),
    ];

    #[test]
    fn normalises_like_the_contract() {
        for &(raw, want) in CASES {
            assert_eq!(normalize_segment(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn every_result_is_in_normal_form_and_stays_put() {
        for &(raw, _) in CASES {
            let once = normalize_segment(raw);
            assert_eq!(is_normalized_segment(&once), !once.is_empty(), "{raw:?}");
            assert_eq!(normalize_segment(&once), once, "{raw:?} twice");
        }
    }

    #[test]
    fn normal_form_is_checked_byte_by_byte() {
        for ok in ["a", "a_b", "a1_2b", "9"] {
            assert!(is_normalized_segment(ok), "{ok:?}");
        }
        for bad in ["", "_", "a_", "_a", "a__b", "A", "a-b", "a.b", "a b", "é"] {
            assert!(!is_normalized_segment(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_owner_loses_one_trailing_toolset() {
        let cases = [
            ("ExampleToolset", "example"),
            ("HTTPServerToolset", "http_server"),
            ("XMLToolsetToolset", "xml_toolset"),
            ("Toolset", "toolset"),
            ("Weather", "weather"),
            ("ToolsetWeather", "toolset_weather"),
            ("weatherToolset", "weather"),
        ];
        for (type_name, want) in cases {
            assert_eq!(owner_segment(type_name), want, "{type_name}");
        }
    }
}
