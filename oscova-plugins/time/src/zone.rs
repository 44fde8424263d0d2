//! Time-zone lookup in the bundled IANA database, with suggestions.
//!
//! Rules: names are looked up in jiff's bundled database only (never the
//! machine's `/usr/share/zoneinfo`), so results do not depend on the host;
//! lookups are case-insensitive; a name that is not found becomes an
//! [`UnknownZone`](crate::TimeError::UnknownZone) error carrying at most
//! [`MAX_SUGGESTIONS`] close matches, computed by a linear scan over the
//! few hundred names (cheap enough to do only when a lookup has failed).
//!
//! The work is bounded whatever the model sends: a name longer than
//! [`MAX_NAME_CHARS`] (four times the longest IANA name) gets no
//! suggestions at all, and the edit distance behind them stops as soon as
//! it exceeds its small budget, so one suggestion costs at most
//! `MAX_NAME_CHARS` × (2 × budget + 1) steps per database name. A 100 KB
//! `zone` used to cost seconds here.

use jiff::tz::TimeZone;

use crate::error::{TimeError, shown};

/// How many close matches an unknown-zone error lists.
pub(crate) const MAX_SUGGESTIONS: usize = 3;

/// Names longer than this (in characters) get no suggestions: the longest
/// IANA name, `America/Argentina/ComodRivadavia`, has 32.
pub(crate) const MAX_NAME_CHARS: usize = 128;

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
            name: shown(name),
            suggestions: Vec::new(),
        });
    }
    TimeZone::get(trimmed).map_err(|_| TimeError::UnknownZone {
        name: shown(trimmed),
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

/// Up to [`MAX_SUGGESTIONS`] database names close to `input`; none for an
/// input over [`MAX_NAME_CHARS`].
pub(crate) fn suggest(input: &str) -> Vec<String> {
    if input.chars().nth(MAX_NAME_CHARS).is_some() {
        return Vec::new();
    }
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
                let whole = distance_within(&lower, &wanted, budget);
                let by_city = distance_within(city, &wanted_city, budget);
                1 + whole.into_iter().chain(by_city).min()?
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

/// The Levenshtein distance between `a` and `b` if it is at most `budget`,
/// else `None`, found without the full table: strings whose lengths differ
/// by more than `budget` are refused at once, only the cells within
/// `budget` of the diagonal are computed, and the scan stops at the first
/// row whose every cell is over the budget.
fn distance_within(a: &str, b: &str, budget: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > budget {
        return None;
    }
    // Any distance over the budget is as good as infinite, so cells
    // outside the band hold `over`.
    let over = budget + 1;
    let mut prev: Vec<usize> = (0..=b.len()).map(|j| j.min(over)).collect();
    let mut cur = vec![over; b.len() + 1];
    for (i, ca) in (1..).zip(&a) {
        cur.fill(over);
        if let Some(first) = cur.first_mut() {
            *first = i.min(over);
        }
        let lo = i.saturating_sub(budget).max(1);
        let hi = (i + budget).min(b.len());
        for (j, cb) in (lo..=hi).zip(b.iter().skip(lo - 1)) {
            let above = prev.get(j).copied().unwrap_or(over);
            let diagonal = prev.get(j - 1).copied().unwrap_or(over);
            let left = cur.get(j - 1).copied().unwrap_or(over);
            let value = (above + 1)
                .min(left + 1)
                .min(diagonal + usize::from(ca != cb))
                .min(over);
            if let Some(cell) = cur.get_mut(j) {
                *cell = value;
            }
        }
        if cur.iter().all(|d| *d > budget) {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev.last().copied().filter(|d| *d <= budget)
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
    fn edit_distance_within_a_budget() {
        assert_eq!(distance_within("kitten", "sitting", 3), Some(3));
        assert_eq!(distance_within("kitten", "sitting", 2), None);
        assert_eq!(distance_within("", "abc", 3), Some(3));
        assert_eq!(distance_within("same", "same", 1), Some(0));
        assert_eq!(distance_within("berlni", "berlin", 3), Some(2));
        assert_eq!(distance_within("tokio", "tokyo", 1), Some(1));
        assert_eq!(distance_within("abcdef", "azcdef", 1), Some(1));
        assert_eq!(distance_within("abc", "xyz", 3), Some(3));
        assert_eq!(distance_within("abc", "xyz", 2), None);
    }

    #[test]
    fn the_budget_cuts_the_work_off() {
        // Lengths this far apart are refused before a single cell is computed,
        // and a name over the cap is not scored at all.
        let long = "a".repeat(100_000);
        assert_eq!(distance_within(&long, "europe/berlin", 3), None);
        assert!(suggest(&long).is_empty());
        assert!(suggest(&"Europe/Berlin".repeat(10)).is_empty());
    }
}
