//! Time-zone lookup in the bundled IANA database, with suggestions.
//!
//! Rules: names are looked up in jiff's bundled database only (never the
//! machine's `/usr/share/zoneinfo`), so results do not depend on the host;
//! lookups are case-insensitive; a name that is not found becomes an
//! [`UnknownZone`](crate::TimeError::UnknownZone) error carrying at most
//! [`MAX_SUGGESTIONS`] close matches, computed by a linear scan over the
//! few hundred names (cheap enough to do only when a lookup has failed).

use jiff::tz::TimeZone;

use crate::error::TimeError;

/// How many close matches an unknown-zone error lists.
pub(crate) const MAX_SUGGESTIONS: usize = 3;

/// Where the zone used for a call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ZoneSource {
    /// The caller passed it.
    Argument,
    /// The user's profile (the context's time zone).
    User,
    /// Nobody set one: UTC.
    DefaultUtc,
    /// The user's profile names a zone that does not exist: UTC.
    InvalidUserZone,
    /// The time itself carried it (an offset or a `[Zone]` annotation).
    Input,
}

/// A zone with its provenance and, when it fell back, why.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedZone {
    pub(crate) zone: TimeZone,
    pub(crate) source: ZoneSource,
    pub(crate) note: Option<String>,
}

/// Looks a zone up by IANA name (case-insensitive); `UTC` and `Z` work too.
pub(crate) fn lookup(name: &str) -> Result<TimeZone, TimeError> {
    let trimmed = name.trim();
    if trimmed.eq_ignore_ascii_case("z") {
        return Ok(TimeZone::UTC);
    }
    if trimmed.is_empty() {
        return Err(TimeError::UnknownZone {
            name: name.to_owned(),
            suggestions: Vec::new(),
        });
    }
    TimeZone::get(trimmed).map_err(|_| TimeError::UnknownZone {
        name: trimmed.to_owned(),
        suggestions: suggest(trimmed),
    })
}

/// The zone for a call: the argument if given, else the user's, else UTC.
pub(crate) fn resolve(
    argument: Option<&str>,
    user: Option<&str>,
) -> Result<ResolvedZone, TimeError> {
    if let Some(name) = argument.filter(|n| !n.trim().is_empty()) {
        return Ok(ResolvedZone {
            zone: lookup(name)?,
            source: ZoneSource::Argument,
            note: None,
        });
    }
    match user {
        None => Ok(ResolvedZone {
            zone: TimeZone::UTC,
            source: ZoneSource::DefaultUtc,
            note: Some("no time zone is set for this user, so UTC is used".to_owned()),
        }),
        Some(name) => match lookup(name) {
            Ok(zone) => Ok(ResolvedZone {
                zone,
                source: ZoneSource::User,
                note: None,
            }),
            Err(_) => Ok(ResolvedZone {
                zone: TimeZone::UTC,
                source: ZoneSource::InvalidUserZone,
                note: Some(format!(
                    "the user's time zone `{name}` is not a known IANA zone, so UTC is used"
                )),
            }),
        },
    }
}

/// The display name of a zone: its IANA name, or its fixed offset.
pub(crate) fn name_of(zone: &TimeZone, at: jiff::Timestamp) -> String {
    match zone.iana_name() {
        Some(name) => name.to_owned(),
        None => zone.to_offset(at).to_string(),
    }
}

/// Up to [`MAX_SUGGESTIONS`] database names close to `input`.
pub(crate) fn suggest(input: &str) -> Vec<String> {
    let wanted = normalise(input);
    if wanted.is_empty() {
        return Vec::new();
    }
    let wanted_city = wanted.rsplit('/').next().unwrap_or(&wanted).to_owned();
    let budget = (wanted.chars().count() / 4).clamp(1, 3);
    let mut scored: Vec<(usize, String)> = jiff::tz::db()
        .available()
        .filter_map(|name| {
            let name = name.as_str().to_owned();
            let lower = normalise(&name);
            let city = lower.rsplit('/').next().unwrap_or(&lower);
            let score = if city == wanted_city || lower == wanted {
                0
            } else if wanted_city.len() >= 3 && city.contains(wanted_city.as_str()) {
                1
            } else {
                let d = levenshtein(&lower, &wanted).min(levenshtein(city, &wanted_city));
                if d > budget {
                    return None;
                }
                1 + d
            };
            Some((score, name))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name)
        .collect()
}

/// Lower case, with spaces and hyphens as underscores (`new york` → `new_york`).
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            ' ' | '-' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(0);
            let left = row.get(j).copied().unwrap_or(0);
            let cost = usize::from(ca != *cb);
            let value = (above + 1).min(left + 1).min(diagonal + cost);
            diagonal = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = value;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive() {
        assert!(lookup("europe/berlin").is_ok());
        assert!(lookup("UTC").is_ok());
        assert!(lookup("z").is_ok());
    }

    #[test]
    fn typos_get_close_matches() {
        assert_eq!(
            suggest("Europe/Berlni").first().map(String::as_str),
            Some("Europe/Berlin")
        );
        assert!(suggest("New York").iter().any(|n| n == "America/New_York"));
        assert!(suggest("Tokio").iter().any(|n| n == "Asia/Tokyo"));
        assert!(suggest("qqqqqqqqqqqqqq").is_empty());
    }

    #[test]
    fn unset_and_invalid_user_zones_fall_back_to_utc() {
        let r = resolve(None, None).unwrap();
        assert_eq!(r.source, ZoneSource::DefaultUtc);
        let r = resolve(None, Some("Mars/Olympus")).unwrap();
        assert_eq!(r.source, ZoneSource::InvalidUserZone);
        assert!(r.note.unwrap().contains("Mars/Olympus"));
        let err = resolve(Some("Mars/Olympus"), Some("UTC")).unwrap_err();
        assert!(matches!(err, TimeError::UnknownZone { .. }));
    }

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }
}
