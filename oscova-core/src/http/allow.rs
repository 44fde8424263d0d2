//! The destinations a host allows beyond a scope's own rule
//! ([`AllowList`]), each written `host[:port]` ([`Destination`]).
//!
//! Rules: an entry is a dotted-decimal IPv4 address, an IPv6 address (in
//! brackets when a port follows) or a DNS name, compared lower case and
//! without a trailing dot; the spellings a URL parser would turn into an
//! address (`127.1`, `0x7f000001`, `2130706433`) are refused, so an entry
//! means what it says. An IPv4-mapped IPv6 address is the IPv4 address it
//! carries. An entry matches a URL whose host is written that way, on its
//! port or, without one, on any.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use reqwest::Url;

/// A destination a host allows beyond its scope's own rule: a host (an IP
/// address or a DNS name) and, optionally, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Destination {
    pub(super) host: AllowedHost,
    pub(super) port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AllowedHost {
    Ip(IpAddr),
    /// Lower case, without a trailing dot.
    Name(String),
}

impl Destination {
    /// Parses `host[:port]`: a dotted-decimal IPv4 address, an IPv6 address
    /// in brackets (brackets may be left out when no port follows), or a
    /// DNS name. An error says what is wrong with the text.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("it is empty".into());
        }
        if text.contains("://") || text.contains(['/', '@', '?', '#']) {
            return Err("write `host` or `host:port`, not a URL".into());
        }
        let (host, port) = split_port(text)?;
        if let Ok(v6) = host.parse::<Ipv6Addr>() {
            return Ok(Self::ip(IpAddr::V6(v6), port));
        }
        if let Ok(v4) = host.parse::<Ipv4Addr>() {
            return Ok(Self::ip(IpAddr::V4(v4), port));
        }
        let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        let labels_ok = name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        });
        if !labels_ok || name.len() > 253 {
            return Err(format!("`{host}` is neither an IP address nor a DNS name"));
        }
        // URL parsers read a name whose last label is a number as an IPv4
        // address (`127.1`, `0x7f000001`), so such an entry could never
        // match the name it seems to allow.
        let last = name.rsplit('.').next().unwrap_or_default();
        if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
            return Err(format!(
                "`{host}` looks like an IPv4 address; write it as four decimal numbers"
            ));
        }
        Ok(Self {
            host: AllowedHost::Name(name),
            port,
        })
    }

    /// Exactly the host and port `url` names, when it names a host.
    ///
    /// The URL parser has already decided which hosts are addresses and
    /// serialised them canonically (IPv6 in brackets), so parsing its text
    /// again gives the address it will connect to; a name never parses as
    /// an address here, since the parser would have made it one.
    pub(crate) fn of_url(url: &Url) -> Option<Self> {
        let port = url.port_or_known_default();
        let text = url.host_str()?;
        let host = if let Some(v6) = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|t| t.parse::<Ipv6Addr>().ok())
        {
            AllowedHost::Ip(canonical_ip(IpAddr::V6(v6)))
        } else if let Ok(v4) = text.parse::<Ipv4Addr>() {
            AllowedHost::Ip(IpAddr::V4(v4))
        } else {
            AllowedHost::Name(normal_name(text))
        };
        Some(Self { host, port })
    }

    fn ip(ip: IpAddr, port: Option<u16>) -> Self {
        Self {
            host: AllowedHost::Ip(canonical_ip(ip)),
            port,
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.host, self.port) {
            (AllowedHost::Ip(IpAddr::V6(v6)), Some(port)) => write!(f, "[{v6}]:{port}"),
            (AllowedHost::Ip(ip), Some(port)) => write!(f, "{ip}:{port}"),
            (AllowedHost::Ip(ip), None) => write!(f, "{ip}"),
            (AllowedHost::Name(name), Some(port)) => write!(f, "{name}:{port}"),
            (AllowedHost::Name(name), None) => write!(f, "{name}"),
        }
    }
}

/// Splits `host[:port]`, with `[v6]:port` and a bare IPv6 address.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| "an IPv6 address in `[` has no `]`".to_owned())?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("unexpected `{after}` after `]`")),
            },
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            // Several colons and no brackets: a bare IPv6 address.
            _ => (text, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) => Some(
            Some(p)
                .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u16>().ok())
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("`{p}` is not a port (1 to 65535)"))?,
        ),
    };
    Ok((host, port))
}

/// IPv4-mapped IPv6 addresses compare as the IPv4 address they carry.
pub(super) fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn normal_name(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// The destinations a host allows beyond a scope's own rule.
#[derive(Debug, Clone, Default)]
pub(crate) struct AllowList(Vec<Destination>);

impl AllowList {
    pub(crate) fn new(entries: Vec<Destination>) -> Self {
        Self(entries)
    }

    pub(super) fn permits(&self, target: &Destination) -> Listed {
        let mut listed_elsewhere = Vec::new();
        for entry in &self.0 {
            if entry.host == target.host {
                match entry.port {
                    None => return Listed::Yes,
                    Some(port) if Some(port) == target.port => return Listed::Yes,
                    Some(port) => listed_elsewhere.push(port),
                }
            }
        }
        if listed_elsewhere.is_empty() {
            Listed::No
        } else {
            Listed::OtherPorts(listed_elsewhere)
        }
    }

    pub(super) fn lists_name(&self, name: &str) -> bool {
        let name = normal_name(name);
        self.0
            .iter()
            .any(|e| matches!(&e.host, AllowedHost::Name(n) if *n == name))
    }
}

/// Whether an allow list names a destination: yes, no, or its host on
/// other ports only.
pub(super) enum Listed {
    Yes,
    No,
    OtherPorts(Vec<u16>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse() {
        let ok: &[(&str, &str)] = &[
            ("10.0.0.5:8080", "10.0.0.5:8080"),
            ("10.0.0.5", "10.0.0.5"),
            (" intranet.example ", "intranet.example"),
            ("Intranet.Example.:443", "intranet.example:443"),
            ("[fd00:ec2::254]:80", "[fd00:ec2::254]:80"),
            ("fd00:ec2::254", "fd00:ec2::254"),
            ("[::ffff:10.0.0.5]:1", "10.0.0.5:1"),
            ("localhost:11434", "localhost:11434"),
            ("my_host-1.corp", "my_host-1.corp"),
        ];
        for (text, shown) in ok {
            match Destination::parse(text) {
                Ok(d) => assert_eq!(d.to_string(), *shown, "{text}"),
                Err(e) => panic!("{text}: {e}"),
            }
        }
        let bad = [
            "",
            "http://10.0.0.5",
            "10.0.0.5/x",
            "user@10.0.0.5",
            "10.0.0.5:",
            "10.0.0.5:0",
            "10.0.0.5:65536",
            "10.0.0.5:+80",
            "[::1",
            "[::1]x",
            "127.1",
            "0x7f000001",
            "2130706433",
            "a..b",
            "bad host",
            "exa*mple.com",
        ];
        for text in bad {
            assert!(Destination::parse(text).is_err(), "{text:?} parsed");
        }
    }
}
