//! What a scoped client may connect to, checked where connections are made.
//!
//! Rules: a [`Policy`] is checked twice for every connection, at the two
//! places `reqwest` decides where to connect. The target of a request and
//! of every redirect hop is checked from the *parsed* URL
//! ([`Policy::check_url`]): an IP literal there is what the connector
//! dials without asking any resolver, and the URL parser has already
//! turned `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1` and
//! `[::ffff:127.0.0.1]` into the addresses they mean, and dropped any
//! userinfo. A name is checked once resolved ([`CheckedResolver`]): every
//! address the resolver answers must pass, or none is used, so a name that
//! resolves to a private address is refused and one that resolves to both
//! is refused too. Either refusal comes before any connection is made.
//!
//! `Loopback` allows loopback addresses, and among names only `localhost`
//! and `*.localhost` (whose answers must then be loopback). `Public`
//! allows addresses on the public Internet ([`super::address`]) and any
//! name whose answers are all public. An [`AllowList`] widens a policy by
//! destinations written as `host[:port]`: an entry matches a URL whose
//! host is written that way (an address entry matches that address
//! literal, a name entry that name), on its port or, without one, on any.
//! A listed name's answers are not checked: naming it is the host's
//! decision that it may be reached.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect;

use super::address::non_public;
use crate::locality::{is_local_host, is_loopback_ip};
use crate::tool::NetworkScope;

/// A destination a host allows beyond its scope's own rule: a host (an IP
/// address or a DNS name) and, optionally, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Destination {
    host: AllowedHost,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum AllowedHost {
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
fn canonical_ip(ip: IpAddr) -> IpAddr {
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

    fn permits(&self, target: &Destination) -> Listed {
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

    fn lists_name(&self, name: &str) -> bool {
        let name = normal_name(name);
        self.0
            .iter()
            .any(|e| matches!(&e.host, AllowedHost::Name(n) if *n == name))
    }
}

enum Listed {
    Yes,
    No,
    OtherPorts(Vec<u16>),
}

/// The base rule of a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// This machine: loopback addresses, `localhost` and `*.localhost`.
    Loopback,
    /// The public Internet.
    Public,
}

/// What a scoped client may connect to.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    /// The scope refusals name.
    pub(crate) scope: NetworkScope,
    reach: Reach,
    allow: AllowList,
}

/// A destination a policy refused, and why; travels through `reqwest`'s
/// error chain when the resolver or the redirect policy refuses.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) scope: NetworkScope,
    pub(crate) target: String,
    pub(crate) reason: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "network scope `{}` does not allow a request to {}: {}",
            self.scope, self.target, self.reason
        )
    }
}

impl std::error::Error for Refusal {}

/// Said after a refusal an allow-list entry could lift.
const ALLOW_HINT: &str = "the host can allow an internal destination by name";

impl Policy {
    pub(crate) fn new(scope: NetworkScope, reach: Reach, allow: AllowList) -> Self {
        Self {
            scope,
            reach,
            allow,
        }
    }

    fn refuse(&self, target: impl fmt::Display, reason: String) -> Refusal {
        Refusal {
            scope: self.scope,
            target: target.to_string(),
            reason,
        }
    }

    /// Checks the target of a request or of a redirect hop, before
    /// anything is sent to it. Names that pass are checked again once
    /// resolved.
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        let Some(target) = Destination::of_url(url) else {
            return Err(self.refuse(url.scheme(), "the URL names no host".into()));
        };
        match self.allow.permits(&target) {
            Listed::Yes => return Ok(()),
            Listed::OtherPorts(ports) => {
                let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
                let reason = format!(
                    "the host allows this destination only on port {}",
                    ports.join(", ")
                );
                return Err(self.refuse(&target, reason));
            }
            Listed::No => {}
        }
        match (&target.host, self.reach) {
            (AllowedHost::Ip(ip), Reach::Loopback) if is_loopback_ip(*ip) => Ok(()),
            (AllowedHost::Ip(ip), Reach::Loopback) => Err(self.refuse(
                &target,
                format!("{ip} is not a loopback address, and only this machine may be reached"),
            )),
            (AllowedHost::Ip(ip), Reach::Public) => match non_public(*ip) {
                None => Ok(()),
                Some(why) => Err(self.refuse(
                    &target,
                    format!("{ip} is {why}, not on the public Internet ({ALLOW_HINT})"),
                )),
            },
            (AllowedHost::Name(name), Reach::Loopback) if is_local_host(name) => Ok(()),
            (AllowedHost::Name(name), Reach::Loopback) => Err(self.refuse(
                &target,
                format!(
                    "`{name}` is not a name for this machine (only loopback addresses, \
                     `localhost` and `*.localhost` are)"
                ),
            )),
            (AllowedHost::Name(_), Reach::Public) => Ok(()),
        }
    }

    /// Checks every address `name` resolved to.
    pub(crate) fn check_resolved(&self, name: &str, addrs: &[SocketAddr]) -> Result<(), Refusal> {
        if self.allow.lists_name(name) {
            return Ok(());
        }
        if addrs.is_empty() {
            return Err(self.refuse(name, "the name resolves to no address".into()));
        }
        for addr in addrs {
            let ip = addr.ip();
            let why = match self.reach {
                Reach::Loopback if is_loopback_ip(ip) => continue,
                Reach::Loopback => format!(
                    "it resolves to {ip}, which is not a loopback address, and only this \
                     machine may be reached"
                ),
                Reach::Public => match non_public(canonical_ip(ip)) {
                    None => continue,
                    Some(why) => format!(
                        "it resolves to {ip}, {why}, not on the public Internet ({ALLOW_HINT})"
                    ),
                },
            };
            return Err(self.refuse(name, why));
        }
        Ok(())
    }

    /// A redirect policy that checks every hop, and stops after 10.
    pub(crate) fn redirects(self: &Arc<Self>) -> redirect::Policy {
        let policy = self.clone();
        redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("too many redirects (more than 10)");
            }
            match policy.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(refusal) => attempt.error(refusal),
            }
        })
    }
}

/// The system resolver, as `getaddrinfo` answers through tokio.
#[derive(Debug, Default)]
pub(crate) struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Resolves with `inner`, then refuses unless every answer passes `policy`.
pub(crate) struct CheckedResolver {
    pub(crate) policy: Arc<Policy>,
    pub(crate) inner: Arc<dyn Resolve>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let policy = self.policy.clone();
        let resolving = self.inner.resolve(name);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = resolving.await?.collect();
            policy
                .check_resolved(&host, &addrs)
                .map_err(|refusal| Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Hands names to a resolver the host supplied, unchecked (the
/// unrestricted lane).
pub(crate) struct Delegate(pub(crate) Arc<dyn Resolve>);

impl Resolve for Delegate {
    fn resolve(&self, name: Name) -> Resolving {
        self.0.resolve(name)
    }
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

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn policy(reach: Reach, allow: &[&str]) -> Policy {
        let entries = allow
            .iter()
            .map(|e| Destination::parse(e).unwrap())
            .collect();
        Policy::new(NetworkScope::Internet, reach, AllowList::new(entries))
    }

    #[test]
    fn public_refuses_every_spelling_of_loopback() {
        let p = policy(Reach::Public, &[]);
        for text in [
            "http://127.0.0.1:8080/",
            "http://[::1]/",
            "http://0.0.0.0/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://example.com@127.0.0.1/",
            "http://user:pw@127.0.0.1:9/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://10.0.0.5/",
            "http://192.168.1.2/",
        ] {
            let refusal = p.check_url(&url(text)).err();
            assert!(refusal.is_some(), "{text} allowed");
        }
        // Names pass here and are judged once resolved.
        assert!(p.check_url(&url("http://localhost/")).is_ok());
        assert!(p.check_url(&url("https://example.com/")).is_ok());
        assert!(p.check_url(&url("http://93.184.215.14/")).is_ok());
    }

    #[test]
    fn refusals_say_what_and_why() {
        let p = policy(Reach::Public, &[]);
        let r = p
            .check_url(&url("http://user:secret@169.254.169.254/latest"))
            .unwrap_err();
        assert_eq!(r.target, "169.254.169.254:80");
        let text = r.to_string();
        assert!(text.contains("network scope `internet`"), "{text}");
        assert!(text.contains("a cloud metadata address"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let addrs = [SocketAddr::from(([10, 0, 0, 5], 0))];
        let r = p.check_resolved("intranet.test", &addrs).unwrap_err();
        assert!(
            r.to_string()
                .contains("intranet.test: it resolves to 10.0.0.5, a private address"),
            "{r}"
        );
    }

    #[test]
    fn allow_entries_match_host_and_port() {
        let p = policy(
            Reach::Public,
            &["10.0.0.5:8080", "intranet.example", "[::1]:9"],
        );
        assert!(p.check_url(&url("http://10.0.0.5:8080/x")).is_ok());
        assert!(p.check_url(&url("http://[::ffff:10.0.0.5]:8080/")).is_ok());
        let r = p.check_url(&url("http://10.0.0.5:22/")).unwrap_err();
        assert!(r.reason.contains("only on port 8080"), "{r}");
        assert!(p.check_url(&url("http://10.0.0.6:8080/")).is_err());
        assert!(p.check_url(&url("http://[::1]:9/")).is_ok());
        assert!(p.check_url(&url("http://127.0.0.1:9/")).is_err());
        assert!(p.check_url(&url("http://INTRANET.example.:81/")).is_ok());
        let private = [SocketAddr::from(([10, 1, 2, 3], 0))];
        assert!(p.check_resolved("intranet.example.", &private).is_ok());
        // An address entry does not cover names that resolve to it.
        let five = [SocketAddr::from(([10, 0, 0, 5], 0))];
        assert!(p.check_resolved("other.example", &five).is_err());
    }

    #[test]
    fn loopback_reach_allows_this_machine_only() {
        let p = policy(Reach::Loopback, &[]);
        for ok in [
            "http://127.0.0.1:1/",
            "http://[::1]/",
            "http://localhost/",
            "http://a.localhost./",
        ] {
            assert!(p.check_url(&url(ok)).is_ok(), "{ok}");
        }
        for refused in ["http://10.0.0.5/", "http://0.0.0.0/", "http://example.com/"] {
            assert!(p.check_url(&url(refused)).is_err(), "{refused}");
        }
        let v4 = [SocketAddr::from(([127, 0, 0, 1], 0))];
        assert!(p.check_resolved("localhost", &v4).is_ok());
        let both = [
            SocketAddr::from(([127, 0, 0, 1], 0)),
            SocketAddr::from(([10, 0, 0, 5], 0)),
        ];
        assert!(p.check_resolved("evil.localhost", &both).is_err());
        assert!(p.check_resolved("evil.localhost", &[]).is_err());
    }
}
