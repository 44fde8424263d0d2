//! The `time` toolset: now, convert, add_duration, difference.
//!
//! Rules: the toolset never reads the system clock itself, only its
//! [`Clock`], so tests are deterministic; every result has a one-line
//! `content` for the model and the same facts as JSON `details`; when a
//! zone was chosen for the caller (the user's, or UTC because none was
//! set) the details say which (`zone_source`) and a `note` says why.

use std::sync::Arc;
use std::time::SystemTime;

use jiff::fmt::friendly::{Designator, Spacing, SpanPrinter};
use jiff::{Timestamp, Unit, ZonedDateTime, ZonedDateTimeDifference};
use oscova_core::prelude::*;
use oscova_core::serde_json::json;
use serde::Serialize;

use crate::error::{TimeError, shown};
use crate::parse;
use crate::zone;

/// Where the toolset reads the current time from.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(SystemTime::now)
}

/// The largest unit a difference is expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LargestUnit {
    /// Years, months, days, hours, minutes, seconds.
    Years,
    /// Months and smaller.
    Months,
    /// Weeks and smaller.
    Weeks,
    /// Days and smaller (the default).
    #[default]
    Days,
    /// Hours and smaller.
    Hours,
    /// Minutes and seconds.
    Minutes,
    /// Seconds only.
    Seconds,
}

impl LargestUnit {
    fn unit(self) -> Unit {
        match self {
            Self::Years => Unit::Year,
            Self::Months => Unit::Month,
            Self::Weeks => Unit::Week,
            Self::Days => Unit::Day,
            Self::Hours => Unit::Hour,
            Self::Minutes => Unit::Minute,
            Self::Seconds => Unit::Second,
        }
    }
}

/// Date and time tools for one user.
pub struct TimeToolset {
    user_zone: Option<String>,
    clock: Clock,
}

impl std::fmt::Debug for TimeToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeToolset")
            .field("user_zone", &self.user_zone)
            .finish_non_exhaustive()
    }
}

impl TimeToolset {
    /// A toolset for a user whose zone is `user_zone` (an IANA name, or
    /// `None` for UTC), reading `clock`.
    pub fn new(user_zone: Option<String>, clock: Clock) -> Self {
        Self { user_zone, clock }
    }

    /// A toolset for the context's user, on the system clock.
    pub fn for_context(ctx: &AgentPluginContext) -> Self {
        Self::new(ctx.time_zone().map(str::to_owned), system_clock())
    }

    fn now(&self) -> Result<Timestamp, TimeError> {
        Timestamp::try_from((self.clock)()).map_err(|e| TimeError::Arithmetic {
            what: "the current time".to_owned(),
            reason: e.to_string(),
        })
    }

    fn zone(&self, argument: Option<&str>) -> Result<zone::ResolvedZone, TimeError> {
        zone::resolve(argument, self.user_zone.as_deref())
    }
}

#[toolset]
impl TimeToolset {
    /// The current date and time in the user's time zone, or in `zone`.
    /// Without either, the time is given in UTC and the result says so.
    #[tool(name = "now", approval = NotRequired)]
    pub fn current(
        &self,
        /// An IANA time zone such as `Europe/Berlin`; defaults to the user's.
        zone: Option<String>,
    ) -> Result<ToolResult, TimeError> {
        let resolved = self.zone(zone.as_deref())?;
        let now = self.now()?.to_zoned_datetime(resolved.zone.clone());
        let now = now.round(Unit::Second).unwrap_or(now);
        let described = describe(&now);
        let mut content = format!("It is {}.", described.human);
        if let Some(note) = &resolved.note {
            content.push_str(&format!(" Note: {note}."));
        }
        Ok(ToolResult::text(content).with_details(json!({
            "time": described,
            "zone_source": resolved.source,
            "note": resolved.note,
        })))
    }

    /// Converts a time to another time zone. A time without an offset or
    /// `[Zone]` is read in `from_zone` (default: the user's zone, else UTC).
    #[tool(approval = NotRequired)]
    pub fn convert(
        &self,
        /// The time: `2024-03-10T14:30`, `2024-03-10T14:30:00+01:00`,
        /// `2024-03-10T14:30[Europe/Berlin]`, `2024-03-10` or `now`.
        time: String,
        /// The IANA zone to convert to, such as `America/New_York`.
        to_zone: String,
        /// The IANA zone a time without offset is in; defaults to the user's.
        from_zone: Option<String>,
    ) -> Result<ToolResult, TimeError> {
        let target = zone::lookup(&to_zone)?;
        let from = self.zone(from_zone.as_deref())?;
        let parsed = parse::time(&time, &from, self.now()?)?;
        let converted = parsed.time.with_time_zone(target);
        let (a, b) = (describe(&parsed.time), describe(&converted));
        let mut content = format!("{} is {}.", a.human, b.human);
        push_note(&mut content, parsed.note.as_deref());
        Ok(ToolResult::text(content).with_details(json!({
            "from": a,
            "to": b,
            "from_zone_source": parsed.source,
            "note": parsed.note,
        })))
    }

    /// Adds a duration to a time (subtracts when it is negative), with
    /// calendar arithmetic in the time's zone: `1 day` across a
    /// daylight-saving change keeps the wall-clock time.
    #[tool(approval = NotRequired)]
    pub fn add_duration(
        &self,
        /// The start: `2024-03-10T14:30`, `...+01:00`, `...[Europe/Berlin]`,
        /// a date, or `now`.
        time: String,
        /// ISO 8601 (`PT1H30M`, `P2D`, `-P1W`) or words (`1 hour 30
        /// minutes`, `-2 days`, `3 weeks ago`).
        duration: String,
        /// The IANA zone to read and compute in; defaults to the user's.
        zone: Option<String>,
    ) -> Result<ToolResult, TimeError> {
        let resolved = self.zone(zone.as_deref())?;
        let start = parse::time(&time, &resolved, self.now()?)?;
        let span = parse::duration(&duration)?;
        let end = start
            .time
            .checked_add(span)
            .map_err(|e| TimeError::Arithmetic {
                what: format!("`{}` + `{}`", shown(&time), shown(&duration)),
                reason: e.to_string(),
            })?;
        let (a, b) = (describe(&start.time), describe(&end));
        let mut content = format!("{} + {} = {}.", a.human, friendly(&span), b.human);
        push_note(&mut content, start.note.as_deref());
        Ok(ToolResult::text(content).with_details(json!({
            "start": a,
            "duration": span.to_string(),
            "result": b,
            "zone_source": start.source,
            "note": start.note,
        })))
    }

    /// The time between two times, as calendar units up to `largest_unit`
    /// and as exact seconds. Negative when `end` is before `start`.
    #[tool(approval = NotRequired)]
    pub fn difference(
        &self,
        /// The earlier time (any form `convert` accepts, or `now`).
        start: String,
        /// The later time.
        end: String,
        /// `years`, `months`, `weeks`, `days` (default), `hours`, `minutes`
        /// or `seconds`.
        largest_unit: Option<LargestUnit>,
        /// The IANA zone to read times without offsets in and to count
        /// days in; defaults to the user's.
        zone: Option<String>,
    ) -> Result<ToolResult, TimeError> {
        let resolved = self.zone(zone.as_deref())?;
        let now = self.now()?;
        let a = parse::time(&start, &resolved, now)?;
        let b = parse::time(&end, &resolved, now)?;
        // Calendar units need one zone; count them in the start's.
        let end_time = b.time.with_time_zone(a.time.time_zone().clone());
        let largest = largest_unit.unwrap_or_default();
        let span = a
            .time
            .until(ZonedDateTimeDifference::new(&end_time).largest(largest.unit()))
            .map_err(|e| TimeError::Arithmetic {
                what: format!("the time from `{}` to `{}`", shown(&start), shown(&end)),
                reason: e.to_string(),
            })?;
        let exact = end_time.duration_since(&a.time);
        let mut content = format!(
            "From {} to {}: {} ({} seconds).",
            describe(&a.time).human,
            describe(&b.time).human,
            friendly(&span),
            exact.as_secs_f64()
        );
        let note = a.note.or(b.note);
        push_note(&mut content, note.as_deref());
        Ok(ToolResult::text(content).with_details(json!({
            "start": describe(&a.time),
            "end": describe(&b.time),
            "span": span.to_string(),
            "friendly": friendly(&span),
            "total_seconds": exact.as_secs_f64(),
            "largest_unit": format!("{largest:?}").to_lowercase(),
            "note": note,
        })))
    }
}

/// One time, as the details show it.
#[derive(Debug, Serialize)]
struct Described {
    /// RFC 9557: `2024-03-10T14:30:00+01:00[Europe/Berlin]`.
    time: String,
    /// RFC 3339: `2024-03-10T14:30:00+01:00`.
    rfc3339: String,
    zone: String,
    offset: String,
    abbreviation: String,
    weekday: String,
    unix_seconds: i64,
    #[serde(skip)]
    human: String,
}

fn describe(t: &ZonedDateTime) -> Described {
    let ts = t.timestamp();
    let zone_name = zone::name_of(t.time_zone(), ts);
    let info = t.time_zone().to_offset_info(ts);
    let abbreviation = info.abbreviation().to_owned();
    let weekday = t.strftime("%A").to_string();
    let rfc3339 = ts.display_with_offset(t.offset()).to_string();
    let human = format!(
        "{weekday} {} {abbreviation} (UTC{}, {zone_name})",
        t.strftime("%Y-%m-%d %H:%M:%S"),
        t.strftime("%:z"),
    );
    Described {
        time: t.to_string(),
        rfc3339,
        zone: zone_name,
        offset: t.offset().to_string(),
        abbreviation,
        weekday,
        unix_seconds: ts.as_second(),
        human,
    }
}

fn friendly(span: &jiff::Span) -> String {
    SpanPrinter::new()
        .designator(Designator::Verbose)
        .spacing(Spacing::BetweenUnitsAndDesignators)
        .comma_after_designator(true)
        .span_to_string(span)
}

fn push_note(content: &mut String, note: Option<&str>) {
    if let Some(note) = note {
        content.push_str(" Note: ");
        content.push_str(note);
        content.push('.');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friendly_spans_read_as_words() {
        let span: jiff::Span = "P1DT2H".parse().unwrap();
        assert_eq!(friendly(&span), "1 day, 2 hours");
    }
}
