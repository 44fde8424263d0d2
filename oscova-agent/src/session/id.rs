//! Session and entry ids, and the clock entries are stamped with.
//!
//! Rules: an entry id is pi's: 8 lowercase hex characters from the
//! operating system's random source, drawn again on a collision within
//! the session (the store refuses a duplicate whatever made it). A session
//! id is a UUID version 7 (time-ordered, random below the millisecond), as
//! pi names its sessions; ids read from elsewhere are checked against pi's
//! rule (alphanumeric, with `.`, `_`, `-` inside). Timestamps are UTC ISO
//! 8601 with milliseconds (`2026-12-02T03:20:00.123Z`), what JavaScript's
//! `Date.toISOString` writes, and read back to Unix milliseconds the way
//! `Date.parse` reads that form.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::SessionError;

/// The id of one entry in a session's tree (pi: 8 hex characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(String);

impl EntryId {
    /// An id as written elsewhere (an imported file, a store's column).
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// A fresh random id: 8 lowercase hex characters.
    pub fn random() -> Result<Self, SessionError> {
        let mut bytes = [0u8; 4];
        getrandom::fill(&mut bytes).map_err(|e| SessionError::Random(e.to_string()))?;
        Ok(Self(hex(&bytes)))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of a session: unique across users and stores.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    /// Checks an id read from elsewhere against pi's rule: non-empty,
    /// ASCII letters and digits, with `.`, `_` and `-` allowed inside.
    ///
    /// ```
    /// use oscova_agent::session::SessionId;
    /// assert!(SessionId::parse("0193a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b").is_ok());
    /// assert!(SessionId::parse("../etc").is_err());
    /// ```
    pub fn parse(id: &str) -> Result<Self, SessionError> {
        let bytes = id.as_bytes();
        let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
        let ok = match (bytes.first(), bytes.last()) {
            (Some(first), Some(last)) => {
                first.is_ascii_alphanumeric()
                    && last.is_ascii_alphanumeric()
                    && bytes.iter().all(inner_ok)
            }
            _ => false,
        };
        if ok {
            Ok(Self(id.to_owned()))
        } else {
            Err(SessionError::InvalidId(id.to_owned()))
        }
    }

    /// A fresh UUID version 7.
    pub fn random() -> Result<Self, SessionError> {
        let mut b = [0u8; 16];
        getrandom::fill(&mut b).map_err(|e| SessionError::Random(e.to_string()))?;
        let millis = now_millis().to_be_bytes();
        b[..6].copy_from_slice(&millis[2..8]);
        b[6] = (b[6] & 0x0f) | 0x70;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = hex(&b);
        Ok(Self(format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        )))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The time now as pi stamps entries: `2026-12-02T03:20:00.123Z`.
pub fn now_iso() -> String {
    millis_to_iso(now_millis())
}

/// Unix milliseconds as an ISO 8601 UTC timestamp with milliseconds.
pub fn millis_to_iso(millis: i64) -> String {
    let days = millis.div_euclid(86_400_000);
    let rem = millis.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, ms) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{ms:03}Z")
}

/// Reads `YYYY-MM-DDTHH:MM:SS[.fff]Z` (what `Date.toISOString` writes) as
/// Unix milliseconds; `None` for any other form.
pub fn iso_to_millis(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) && !s.is_empty() {
            s.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, min, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = match b[19] {
        b'Z' if b.len() == 20 => 0,
        b'.' => {
            let frac = text.get(20..b.len() - 1)?;
            let digits = num(20..b.len() - 1)?;
            match frac.len() {
                1 => digits * 100,
                2 => digits * 10,
                3 => digits,
                _ => return None,
            }
        }
        _ => return None,
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || s > 59 {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400_000 + h * 3_600_000 + min * 60_000 + s * 1000 + ms)
}

// Howard Hinnant's civil calendar algorithms.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips_and_matches_known_instants() {
        assert_eq!(millis_to_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(millis_to_iso(1_733_234_400_000), "2024-12-03T14:00:00.000Z");
        assert_eq!(
            iso_to_millis("2024-12-03T14:00:00.000Z"),
            Some(1_733_234_400_000)
        );
        assert_eq!(
            iso_to_millis("2024-02-29T23:59:59.5Z"),
            Some(1_709_251_199_500)
        );
        for ms in [0, 951_782_400_123, 1_733_234_401_999, 4_102_444_800_000] {
            assert_eq!(iso_to_millis(&millis_to_iso(ms)), Some(ms));
        }
        assert_eq!(iso_to_millis("2024-12-03 14:00:00Z"), None);
        assert_eq!(iso_to_millis("2024-13-03T14:00:00Z"), None);
    }

    #[test]
    fn fresh_ids_have_pi_shapes() {
        let entry = EntryId::random().unwrap();
        assert_eq!(entry.as_str().len(), 8);
        assert!(entry.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        let session = SessionId::random().unwrap();
        assert_eq!(session.as_str().len(), 36);
        assert_eq!(&session.as_str()[14..15], "7");
        assert!(SessionId::parse(session.as_str()).is_ok());
        assert!(SessionId::parse("a/b").is_err());
        assert!(SessionId::parse("-a").is_err());
        assert!(SessionId::parse("").is_err());
    }
}
