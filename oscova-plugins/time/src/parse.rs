//! Reading times and durations the way a model writes them.
//!
//! Rules for a time: `now` is the injected clock; a `[Zone]` annotation
//! wins over everything; an offset (`Z`, `+01:00`) fixes the instant, and
//! the zone argument (if any) only decides how it is shown and how
//! calendar arithmetic runs; a bare civil time (`2024-03-10T14:30`, or a
//! date alone, meaning midnight) is read in the zone argument, else the
//! user's zone, else UTC. A civil time that a DST change skips or repeats
//! resolves the way RFC 5545 and Temporal do ("compatible") and says so in
//! a note. Durations are jiff spans: ISO 8601 or the "friendly" words.

use jiff::civil::{DateTime, Time};
use jiff::fmt::temporal::Pieces;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Span, Timestamp, ZonedDateTime};

use crate::error::{TimeError, shown};
use crate::zone::{self, ResolvedZone, ZoneSource};

/// A time read from the model's input.
#[derive(Debug, Clone)]
pub(crate) struct ParsedTime {
    pub(crate) time: ZonedDateTime,
    pub(crate) source: ZoneSource,
    pub(crate) note: Option<String>,
}

/// Reads `input`; `zone` is the zone the call resolved (argument, user or
/// UTC) and `now` the clock's reading.
pub(crate) fn time(
    input: &str,
    zone: &ResolvedZone,
    now: Timestamp,
) -> Result<ParsedTime, TimeError> {
    let text = input.trim();
    let bad = |reason: String| TimeError::BadTime {
        input: shown(input),
        reason,
    };
    if text.eq_ignore_ascii_case("now") {
        return Ok(ParsedTime {
            time: now.to_zoned_datetime(zone.zone.clone()),
            source: zone.source,
            note: zone.note.clone(),
        });
    }
    let pieces = Pieces::parse(text).map_err(|e| bad(e.to_string()))?;

    if let Some(annotation) = pieces.time_zone_annotation() {
        if let Err(e) = annotation.to_time_zone() {
            let name = annotation_name(text);
            return Err(match name {
                Some(name) => TimeError::UnknownZone {
                    suggestions: zone::suggest(name),
                    name: shown(name),
                },
                None => bad(e.to_string()),
            });
        }
        let time: ZonedDateTime = text.parse().map_err(|e: jiff::Error| bad(e.to_string()))?;
        let time = match zone.source {
            ZoneSource::Argument => time.with_time_zone(zone.zone.clone()),
            _ => time,
        };
        return Ok(ParsedTime {
            time,
            source: ZoneSource::Input,
            note: None,
        });
    }

    if let Some(offset) = pieces.to_numeric_offset() {
        let instant: Timestamp = text.parse().map_err(|e: jiff::Error| bad(e.to_string()))?;
        let (shown_in, source) = match zone.source {
            ZoneSource::Argument => (zone.zone.clone(), ZoneSource::Argument),
            _ => (TimeZone::fixed(offset), ZoneSource::Input),
        };
        return Ok(ParsedTime {
            time: instant.to_zoned_datetime(shown_in),
            source,
            note: None,
        });
    }

    let civil = DateTime::from_parts(pieces.date(), pieces.time().unwrap_or(Time::midnight()));
    let ambiguous = zone.zone.to_ambiguous_zoned_datetime(civil);
    let note = if ambiguous.is_ambiguous() {
        let kind = if matches!(ambiguous.offset(), AmbiguousOffset::Gap { .. }) {
            "does not exist (the clocks skip it at a daylight-saving change); the time after the gap is used"
        } else {
            "happens twice (the clocks repeat it at a daylight-saving change); the earlier one is used"
        };
        Some(format!("{civil} {kind}"))
    } else {
        None
    };
    let time = ambiguous.compatible().map_err(|e| bad(e.to_string()))?;
    let note = match (note, &zone.note) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or_else(|| b.clone()),
    };
    Ok(ParsedTime {
        time,
        source: zone.source,
        note,
    })
}

/// The zone name inside `[...]`, if the input has one.
fn annotation_name(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let end = start + text.get(start..)?.find(']')?;
    let name = text.get(start..end)?.trim_start_matches('!');
    (!name.is_empty() && !name.contains('=')).then_some(name)
}

/// Reads a duration: ISO 8601 (`P1DT2H`, `-PT30M`) or words (`1 day 2
/// hours`, `2h 30m`, `3 weeks ago`).
pub(crate) fn duration(input: &str) -> Result<Span, TimeError> {
    input
        .trim()
        .parse()
        .map_err(|e: jiff::Error| TimeError::BadDuration {
            input: shown(input),
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> ResolvedZone {
        ResolvedZone {
            zone: TimeZone::get("Europe/Berlin").unwrap(),
            source: ZoneSource::User,
            note: None,
        }
    }

    fn epoch() -> Timestamp {
        Timestamp::UNIX_EPOCH
    }

    #[test]
    fn civil_times_are_read_in_the_resolved_zone() {
        let t = time("2024-01-15T09:00", &berlin(), epoch()).unwrap();
        assert_eq!(
            t.time.to_string(),
            "2024-01-15T09:00:00+01:00[Europe/Berlin]"
        );
        assert_eq!(t.source, ZoneSource::User);
        let t = time("2024-01-15", &berlin(), epoch()).unwrap();
        assert_eq!(
            t.time.to_string(),
            "2024-01-15T00:00:00+01:00[Europe/Berlin]"
        );
        let t = time("2024-01-15 09:00", &berlin(), epoch()).unwrap();
        assert_eq!(t.time.hour(), 9);
    }

    #[test]
    fn offsets_fix_the_instant_and_annotations_win() {
        let t = time("2024-01-15T09:00:00Z", &berlin(), epoch()).unwrap();
        assert_eq!(t.time.to_string(), "2024-01-15T09:00:00+00:00[UTC]");
        assert_eq!(t.source, ZoneSource::Input);
        let t = time("2024-01-15T09:00[Asia/Tokyo]", &berlin(), epoch()).unwrap();
        assert_eq!(t.time.to_string(), "2024-01-15T09:00:00+09:00[Asia/Tokyo]");
    }

    #[test]
    fn now_reads_the_clock() {
        let t = time(" NOW ", &berlin(), epoch()).unwrap();
        assert_eq!(
            t.time.to_string(),
            "1970-01-01T01:00:00+01:00[Europe/Berlin]"
        );
    }

    #[test]
    fn dst_gaps_and_folds_are_noted() {
        let gap = time("2024-03-31T02:30", &berlin(), epoch()).unwrap();
        assert_eq!(gap.time.hour(), 3);
        assert!(gap.note.unwrap().contains("does not exist"));
        let fold = time("2024-10-27T02:30", &berlin(), epoch()).unwrap();
        assert!(fold.note.unwrap().contains("happens twice"));
    }

    #[test]
    fn bad_inputs_say_what_would_work() {
        let e = time("next tuesday", &berlin(), epoch()).unwrap_err();
        assert!(e.to_string().contains("2024-03-10T14:30"), "{e}");
        let e = time("2024-01-15T09:00[Europe/Berlni]", &berlin(), epoch()).unwrap_err();
        assert!(
            matches!(&e, TimeError::UnknownZone { name, .. } if name == "Europe/Berlni"),
            "{e}"
        );
        assert!(e.to_string().contains("Europe/Berlin"), "{e}");
        let e = duration("forever").unwrap_err();
        assert!(e.to_string().contains("PT1H30M"), "{e}");
    }

    #[test]
    fn durations_in_both_forms() {
        assert_eq!(duration("PT1H30M").unwrap().get_minutes(), 30);
        assert_eq!(duration("1 day 2 hours").unwrap().get_days(), 1);
        assert_eq!(duration("-2 days").unwrap().get_days(), -2);
    }
}
