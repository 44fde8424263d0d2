//! Deciding whether an endpoint string names this machine, from the text alone.
//!
//! No DNS lookup is made and nothing is normalised. An endpoint is local only
//! when its text names this machine *unambiguously*, that is under every
//! parser a caller might hand it to: WHATWG URL parsers (the `url` crate,
//! browsers), RFC 3986 parsers, and the C library (`inet_aton`,
//! `getaddrinfo`). Whenever two of them could disagree, the answer is "not
//! local". That is the safe direction, because "local" is what relaxes other
//! checks (plain HTTP allowed, no API key needed, and so on).
//!
//! # What is local
//!
//! - An `http`, `https`, `ws` or `wss` URL (scheme in any case, followed by
//!   `//`), or a scheme-less `host[:port][/path]` string such as
//!   `localhost:11434` or `[::1]:8080`, whose host is local in the sense of
//!   [`is_local_host`]. The host is the text between `//` (or the start of a
//!   scheme-less string) and the first `/`, `?` or `#`, after an optional
//!   userinfo ending in a single `@`. A port, if present, must be one or more
//!   ASCII digits with a value of at most 65535. Path, query and fragment are
//!   not looked at.
//! - A host is local when it is a loopback IPv4 literal (127.0.0.0/8) written
//!   as four plain decimal parts without leading zeros; a bracketed IPv6
//!   literal in any spelling the standard library accepts that denotes `::1`
//!   or an IPv4-mapped loopback address (`::ffff:127.x.y.z`, also written
//!   `::ffff:7f00:1`); `localhost`; or a name ending in `.localhost` whose
//!   labels are non-empty and made of ASCII letters, digits, `-` and `_`.
//!   Names are compared in any case and may end in a single `.`.
//! - `unix:` followed by an absolute path (`unix:/run/tts.sock`,
//!   `unix:///run/tts.sock`): a Unix domain socket can only be on this
//!   machine.
//! - `file:` followed by an absolute path (`file:/tmp/x`), or `file://`
//!   followed by an empty or local host and an absolute path
//!   (`file:///tmp/x`, `file://localhost/tmp/x`).
//!
//! Decision on userinfo: `http://user:pw@127.0.0.1` is local, since every
//! parser agrees that its host is `127.0.0.1`; only the host decides.
//!
//! # What is refused, and why
//!
//! - Anything containing a byte that is not printable ASCII (space, tab,
//!   newline, control characters, any non-ASCII character), including the
//!   empty string. WHATWG parsers silently strip leading and trailing spaces
//!   and remove tabs and newlines anywhere, and IDNA maps Unicode look-alikes
//!   (fullwidth letters, `。` for `.`) onto ASCII, so such text may name a
//!   host different from what it shows. Callers should trim configuration
//!   values themselves.
//! - Anything containing `\`. WHATWG parsers treat it as `/` in web URLs, so
//!   in `http://example.com\@127.0.0.1` they see the host `example.com`, while
//!   RFC 3986 parsers may read `127.0.0.1` there (and the reverse for
//!   `http://127.0.0.1\@example.com`).
//! - More than one `@` in the authority: WHATWG splits at the last one, other
//!   parsers at the first. With one `@` the host is what follows it, so
//!   `http://127.0.0.1@example.com` and `http://localhost@evil.com` are not
//!   local. A `@` after the first `/`, `?` or `#` is part of the path, query or
//!   fragment, on which all parsers agree, so `http://example.com#@127.0.0.1`
//!   and `http://example.com?@127.0.0.1` name `example.com`.
//! - IPv4 literals not in plain four-part decimal form: integers
//!   (`2130706433`), hexadecimal (`0x7f.1`, `0x7f000001`), leading zeros or
//!   octal (`0177.0.0.1`, `127.000.000.001`), short forms (`127.1`) and a
//!   trailing dot (`127.0.0.1.`). WHATWG and `inet_aton` turn some of them
//!   into 127.0.0.1, other parsers read `0177` as decimal 177 or hand the text
//!   to DNS as a name.
//! - Names that merely begin like a loopback host, such as
//!   `127.0.0.1.example.com` or `localhost.example.com`: they are DNS names in
//!   someone else's zone.
//! - Percent-encoded hosts (`%6c%6fcalhost`): WHATWG decodes them, other
//!   parsers do not. More generally any host text outside the grammar above,
//!   including IDN and Unicode hosts, is refused.
//! - The unspecified addresses `0.0.0.0` and `[::]`: they are not loopback
//!   addresses; some systems route a connection to them to this machine,
//!   others refuse it, and as a bind address they mean every interface.
//! - IPv6 zone identifiers (`[::1%25lo]`), IPv4-compatible addresses
//!   (`[::127.0.0.1]`, deprecated and not loopback), link-local, private and
//!   metadata addresses (`169.254.169.254`, `10.0.0.5`, `192.168.1.2`): these
//!   are not loopback, and the private ones belong to other machines.
//! - Malformed authorities: an empty host, an unbracketed IPv6 literal
//!   (`http://::1`), a broken bracket (`http://[::1`), text after `]`, an
//!   empty port (`http://localhost:`, which WHATWG accepts but others do not),
//!   a port with a sign or above 65535 (`http://localhost:99999`).
//! - A web scheme not followed by `//` (`http:localhost`), three slashes
//!   (`http:///localhost`, whose host WHATWG finds after skipping slashes but
//!   RFC 3986 parsers see as empty) and scheme-relative `//localhost`.
//! - Every scheme other than `http`, `https`, `ws`, `wss`, `unix` and `file`
//!   (`ftp://127.0.0.1`, `http+unix://...`): what they reach is not known
//!   here.
//! - `unix:` or `file:` without an absolute path (`unix:relative.sock`,
//!   `file:80`), since the text can equally be read as a host named `unix` or
//!   `file` with a port; `file://server/share`, a remote share; and
//!   `file:////server/share`, a UNC path on Windows.
//!
//! [`is_loopback_ip`] is meant for addresses a caller has already resolved,
//! for instance to check after resolution that a `*.localhost` name really
//! maps to loopback on this system.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Schemes whose endpoints are reached over the network and are local only
/// when their host is.
const WEB_SCHEMES: [&str; 4] = ["http", "https", "ws", "wss"];

/// Whether an endpoint string names this machine.
///
/// The endpoint may be an `http`, `https`, `ws` or `wss` URL, a scheme-less
/// `host[:port][/path]` string, or a `unix:` or `file:` endpoint. The decision
/// is made from the text alone, without DNS, and is "not local" whenever the
/// text could be read in more than one way; the module documentation lists
/// the exact rules.
pub fn is_local_endpoint(endpoint: &str) -> bool {
    if endpoint.is_empty()
        || !endpoint.bytes().all(|b| b.is_ascii_graphic())
        || endpoint.contains('\\')
    {
        return false;
    }
    match split_scheme(endpoint) {
        Some((scheme, rest)) => {
            if scheme.eq_ignore_ascii_case("unix") {
                is_local_unix(rest)
            } else if scheme.eq_ignore_ascii_case("file") {
                is_local_file(rest)
            } else if WEB_SCHEMES.iter().any(|s| scheme.eq_ignore_ascii_case(s)) {
                rest.strip_prefix("//").is_some_and(is_local_web_rest)
            } else {
                false
            }
        }
        None => is_local_web_rest(endpoint),
    }
}

/// Whether an IP address is a loopback address: 127.0.0.0/8, `::1`, or an
/// IPv4-mapped loopback address `::ffff:127.x.y.z`.
///
/// Meant for addresses that have already been resolved. IPv4-compatible
/// addresses such as `::127.0.0.1` are deprecated and are not loopback, and
/// neither are the unspecified addresses `0.0.0.0` and `::`.
pub fn is_loopback_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Whether a bare host, as it appears in a URL authority, is local.
///
/// The host may be a loopback IP literal in canonical form (IPv4 as four plain
/// decimal parts without leading zeros; IPv6 with or without brackets, in any
/// spelling the standard library parses, denoting `::1` or `::ffff:127.x.y.z`),
/// `localhost`, or a name ending in `.localhost`. Names are compared in any
/// case and may end in a single `.`; IP literals may not. A port is not part
/// of a host, so `localhost:80` is refused here.
pub fn is_local_host(host: &str) -> bool {
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed
            .strip_suffix(']')
            .is_some_and(is_loopback_ipv6_text);
    }
    if host.contains(':') {
        return is_loopback_ipv6_text(host);
    }
    if let Some(v4) = parse_canonical_ipv4(host) {
        return v4.is_loopback();
    }
    is_localhost_name(host)
}

/// Splits off a scheme when the text clearly has one: a scheme token followed
/// by `:` and then `/` for `unix` and `file`, or `//` for any other scheme.
/// Anything else is treated as a scheme-less `host[:port]` string.
fn split_scheme(endpoint: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = endpoint.split_once(':')?;
    if !is_scheme_token(scheme) {
        return None;
    }
    let wants = if scheme.eq_ignore_ascii_case("unix") || scheme.eq_ignore_ascii_case("file") {
        "/"
    } else {
        "//"
    };
    rest.starts_with(wants).then_some((scheme, rest))
}

/// Whether the text is an RFC 3986 scheme: a letter, then letters, digits,
/// `+`, `-` or `.`.
fn is_scheme_token(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// Splits `authority[/path][?query][#fragment]` at the end of the authority.
fn split_authority(text: &str) -> (&str, &str) {
    let end = text.find(['/', '?', '#']).unwrap_or(text.len());
    text.split_at_checked(end).unwrap_or((text, ""))
}

/// Whether `[userinfo@]host[:port][/path...]` names a local host.
fn is_local_web_rest(text: &str) -> bool {
    let (authority, _) = split_authority(text);
    let host_port = match authority.split_once('@') {
        None => authority,
        Some((_, host_port)) if !host_port.contains('@') => host_port,
        Some(_) => return false,
    };
    is_local_host_port(host_port)
}

/// Whether `host[:port]` has a local host and, if present, a valid port.
fn is_local_host_port(host_port: &str) -> bool {
    if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some((inner, after)) = bracketed.split_once(']') else {
            return false;
        };
        let port_ok = after.is_empty() || after.strip_prefix(':').is_some_and(is_valid_port);
        return port_ok && is_loopback_ipv6_text(inner);
    }
    match host_port.split_once(':') {
        None => is_local_host(host_port),
        Some((host, port)) => is_valid_port(port) && is_local_host(host),
    }
}

/// Whether the text is a non-empty run of ASCII digits whose value is at most
/// 65535. Signs are refused (`str::parse` alone would accept `+80`).
fn is_valid_port(port: &str) -> bool {
    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok()
}

/// Whether the text (without brackets) is an IPv6 literal for a loopback
/// address. The standard library parser refuses zone identifiers.
fn is_loopback_ipv6_text(text: &str) -> bool {
    text.parse::<Ipv6Addr>()
        .is_ok_and(|v6| is_loopback_ip(IpAddr::V6(v6)))
}

/// Parses an IPv4 address written as exactly four decimal parts, each 0 to 255
/// without leading zeros.
fn parse_canonical_ipv4(text: &str) -> Option<Ipv4Addr> {
    let mut parts = text.split('.');
    let a = parse_canonical_octet(parts.next()?)?;
    let b = parse_canonical_octet(parts.next()?)?;
    let c = parse_canonical_octet(parts.next()?)?;
    let d = parse_canonical_octet(parts.next()?)?;
    if parts.next().is_some() {
        return None;
    }
    Some(Ipv4Addr::new(a, b, c, d))
}

/// Parses one decimal IPv4 part: `0`, or 1 to 3 digits not starting with `0`.
fn parse_canonical_octet(part: &str) -> Option<u8> {
    let canonical = !part.is_empty()
        && part.len() <= 3
        && part.bytes().all(|b| b.is_ascii_digit())
        && (part == "0" || !part.starts_with('0'));
    if canonical { part.parse().ok() } else { None }
}

/// Whether the text is `localhost` or a name ending in `.localhost`, in any
/// case, with at most one trailing dot and only non-empty labels of ASCII
/// letters, digits, `-` and `_`.
fn is_localhost_name(host: &str) -> bool {
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.len() > 253 {
        return false;
    }
    let mut labels = name.rsplit('.');
    labels
        .next()
        .is_some_and(|last| last.eq_ignore_ascii_case("localhost"))
        && labels.all(is_name_label)
}

/// Whether the text is a DNS label of 1 to 63 ASCII letters, digits, `-` or `_`.
fn is_name_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// Whether the text after `unix:` is an absolute socket path: it starts with
/// `/` and is not made of slashes only.
fn is_local_unix(rest: &str) -> bool {
    rest.starts_with('/') && rest.bytes().any(|b| b != b'/')
}

/// Whether the text after `file:` names a file on this machine: an absolute
/// path, or `//` followed by an empty or local host (no userinfo, no port) and
/// an absolute path that does not start with `//` (a UNC path on Windows).
fn is_local_file(rest: &str) -> bool {
    let Some(after_slashes) = rest.strip_prefix("//") else {
        return rest.starts_with('/');
    };
    let (host, path) = split_authority(after_slashes);
    let host_ok =
        host.is_empty() || ((host.starts_with('[') || !host.contains(':')) && is_local_host(host));
    host_ok && path.starts_with('/') && !path.starts_with("//")
}

#[cfg(test)]
mod tests;
