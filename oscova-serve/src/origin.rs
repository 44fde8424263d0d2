//! Which browser origins and `Host` names a port accepts, checked in front
//! of everything it serves.
//!
//! Rules: those [`OriginPolicy`] states (on the type, so its public docs
//! carry them), enforced by the [`Listener`](crate::Listener) on every
//! request before any handler.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, HeaderValue, Uri, header};

/// The Origin and Host policy of one bound server.
///
/// The policy belongs to the [`Listener`](crate::Listener), which
/// checks every request with [`check`](Self::check) before any front end's
/// handler sees it (MCP, A2A, the follow-up route, whatever is added later
/// to the port), and answers a refusal itself: 403, a text body saying
/// which header was refused, `Connection: close`.
///
/// - `Origin`: absent (a client that is not a browser, or a browser's
///   same-origin `GET`) passes. Present, it must be one value matching a
///   loopback origin (`http` and `https` on `localhost`, `127.0.0.1` and
///   `[::1]`, any port) or one the operator added as
///   `scheme://host[:port]`: `:*` for any port, no port for the scheme's
///   default (80, 443), as RFC 6454 compares origins; `null` only when
///   added as `null`. Anything else, unreadable values included, is
///   refused.
/// - `Host` (and the authority of an absolute-form request target), checked
///   only when the server is bound to a loopback address, where DNS
///   rebinding is the threat: a page whose name was rebound to 127.0.0.1
///   is same-origin with the server, so its requests may carry no `Origin`
///   at all, but they carry its name as `Host`. It must be one value
///   naming this machine: `localhost` or a loopback IP literal (an IP
///   literal involves no DNS, so no rebinding), any port; or a name the
///   operator added ([`allow_hosts`](Self::allow_hosts), as `host` for
///   any port or `host:port`: the public name a reverse proxy on this
///   machine passes on). A missing `Host` is refused there too. Bound to any other
///   address the server is reached by names only its operator knows
///   (behind a load balancer the `Host` is the public name), so `Host` is
///   not checked: a server reachable from the network is not protected by
///   its address but by its tokens, and only the `Origin` rule applies.
///
/// ```
/// use http::{HeaderMap, HeaderValue, Uri};
/// use oscova_serve::origin::OriginPolicy;
///
/// let policy = OriginPolicy::new("127.0.0.1:8080".parse()?, ["https://app.example"]);
/// assert!(policy.origins().contains(&"http://localhost:*".to_owned()));
/// assert!(policy.origins().contains(&"https://app.example".to_owned()));
/// assert!(policy.checks_host());
/// assert!(!OriginPolicy::new("0.0.0.0:8080".parse()?, [""; 0]).checks_host());
///
/// let uri = Uri::from_static("/tasks");
/// let mut headers = HeaderMap::new();
/// headers.insert("host", HeaderValue::from_static("127.0.0.1:8080"));
/// assert!(policy.check(&uri, &headers).is_ok());
/// headers.insert("host", HeaderValue::from_static("evil.example:8080"));
/// assert!(policy.check(&uri, &headers).is_err(), "DNS rebinding");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPolicy {
    origins: Vec<String>,
    /// `origins`, parsed (an entry that does not parse matches nothing).
    patterns: Vec<OriginPattern>,
    hosts: Vec<String>,
    /// `hosts`, parsed.
    host_patterns: Vec<(String, Option<u16>)>,
    check_host: bool,
}

/// Why [`OriginPolicy::check`] refused a request; its `Display` is the
/// body of the 403.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OriginRefusal {
    /// The `Host` (or the request target's authority) does not name this
    /// machine, is missing, sent twice or unreadable.
    #[error(
        "Forbidden: the Host header does not name this server; bound to a loopback address, \
         it answers only requests addressed to localhost or a loopback IP address \
         (DNS rebinding protection)"
    )]
    Host,
    /// The `Origin` is neither a loopback origin nor an allowed one, is
    /// sent twice or unreadable.
    #[error(
        "Forbidden: the Origin header is not an allowed origin; only loopback origins \
         and the configured allowed_origins are"
    )]
    Origin,
}

/// An allowed origin, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OriginPattern {
    Null,
    Tuple {
        scheme: String,
        host: String,
        /// None: any port.
        port: Option<u16>,
    },
}

/// A request's origin, parsed.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// A host as compared: lowercase, IPv6 without its brackets.
fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// `scheme://host[:port]` with nothing else (no user, path or query), as
/// browsers serialize an origin; the port is explicit or `None`.
fn parse_tuple(text: &str) -> Option<(String, String, Option<u16>)> {
    let uri: Uri = text.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if authority.as_str().contains('@')
        || !matches!(uri.path(), "" | "/")
        || uri.query().is_some()
        || authority.host().is_empty()
    {
        return None;
    }
    Some((
        scheme,
        normalize_host(authority.host()),
        authority.port_u16(),
    ))
}

impl OriginPattern {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        if let Some(base) = text.strip_suffix(":*") {
            let (scheme, host, None) = parse_tuple(base)? else {
                return None;
            };
            return Some(Self::Tuple {
                scheme,
                host,
                port: None,
            });
        }
        let (scheme, host, port) = parse_tuple(text)?;
        let port = port.or_else(|| default_port(&scheme))?;
        Some(Self::Tuple {
            scheme,
            host,
            port: Some(port),
        })
    }

    fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (Self::Null, Origin::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => scheme == s && host == h && port.is_none_or(|port| port == *p),
            _ => false,
        }
    }
}

impl Origin {
    fn parse(value: &HeaderValue) -> Option<Self> {
        let text = value.to_str().ok()?.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let (scheme, host, port) = parse_tuple(text)?;
        let port = port.or_else(|| default_port(&scheme))?;
        Some(Self::Tuple { scheme, host, port })
    }
}

/// The one value of header `name`: `Ok(None)` when absent, `Err` when
/// sent more than once.
fn single<'a>(
    headers: &'a HeaderMap,
    name: &header::HeaderName,
) -> Result<Option<&'a HeaderValue>, ()> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (first, None) => Ok(first),
        (Some(_), Some(_)) | (None, Some(_)) => Err(()),
    }
}

impl OriginPolicy {
    /// The policy of a server bound to `addr` that accepts `extra` origins
    /// beside loopback ones.
    pub fn new(addr: SocketAddr, extra: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
            .collect();
        let policy = Self {
            patterns: Vec::new(),
            origins: Vec::new(),
            hosts: Vec::new(),
            host_patterns: Vec::new(),
            check_host: addr.ip().is_loopback(),
        };
        policy.allow_origins(origins).allow_origins(extra)
    }

    /// Accepts `origins` too, as `scheme://host[:port]` (`:*` for any
    /// port; without a port, the scheme's default) or `null`. An entry
    /// that is none of these matches nothing (a warning says so).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        for origin in origins {
            let origin = origin.into();
            match OriginPattern::parse(&origin) {
                Some(pattern) => self.patterns.push(pattern),
                None => tracing::warn!(
                    origin = origin.as_str(),
                    "an allowed origin that is not scheme://host[:port], scheme://host:* or null matches nothing"
                ),
            }
            self.origins.push(origin);
        }
        self
    }

    /// Accepts `hosts` as `Host` beside loopback names when the `Host` is
    /// checked: `host` (any port) or `host:port`, such as the public name
    /// a reverse proxy on this machine passes on. An entry that is not
    /// one matches nothing (a warning says so).
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        for host in hosts {
            let host = host.into();
            match host.trim().parse::<http::uri::Authority>() {
                Ok(authority) if !authority.as_str().contains('@') => self
                    .host_patterns
                    .push((normalize_host(authority.host()), authority.port_u16())),
                _ => tracing::warn!(
                    host = host.as_str(),
                    "an allowed host that is not host or host:port matches nothing"
                ),
            }
            self.hosts.push(host);
        }
        self
    }

    /// The origins accepted, as `scheme://host[:port]` patterns.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// The `Host` names accepted beside loopback ones, when checked.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Whether the `Host` header must name this machine.
    pub fn checks_host(&self) -> bool {
        self.check_host
    }

    /// Whether a request to `uri` with `headers` is accepted, by the rules
    /// of [`OriginPolicy`].
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), OriginRefusal> {
        if self.check_host {
            let host = single(headers, &header::HOST).map_err(|()| OriginRefusal::Host)?;
            let target = uri.authority();
            if host.is_none() && target.is_none() {
                return Err(OriginRefusal::Host);
            }
            if let Some(host) = host {
                let authority = host
                    .to_str()
                    .ok()
                    .and_then(|h| h.parse::<http::uri::Authority>().ok())
                    .ok_or(OriginRefusal::Host)?;
                if !self.names_this_machine(&authority) {
                    return Err(OriginRefusal::Host);
                }
            }
            if let Some(target) = target
                && !self.names_this_machine(target)
            {
                return Err(OriginRefusal::Host);
            }
        }
        match single(headers, &header::ORIGIN) {
            Ok(None) => Ok(()),
            Ok(Some(value)) => match Origin::parse(value) {
                Some(origin) if self.patterns.iter().any(|p| p.matches(&origin)) => Ok(()),
                _ => Err(OriginRefusal::Origin),
            },
            Err(()) => Err(OriginRefusal::Origin),
        }
    }

    /// Whether `authority` is `localhost`, a loopback IP literal or an
    /// allowed host.
    fn names_this_machine(&self, authority: &http::uri::Authority) -> bool {
        if authority.as_str().contains('@') {
            return false;
        }
        let host = authority.host();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if bare.eq_ignore_ascii_case("localhost")
            || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        {
            return true;
        }
        let host = normalize_host(host);
        let port = authority.port_u16();
        self.host_patterns
            .iter()
            .any(|(name, p)| *name == host && p.is_none_or(|p| Some(p) == port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn loopback() -> OriginPolicy {
        OriginPolicy::new(
            "127.0.0.1:8080".parse().unwrap(),
            [
                "https://app.example.com",
                "http://dev.example:*",
                "https://x.example:8443",
            ],
        )
    }

    #[test]
    fn origins_are_compared_as_rfc_6454_says() {
        let policy = loopback();
        let uri = Uri::from_static("/");
        let check = |origin: &'static str| {
            policy.check(
                &uri,
                &headers(&[("host", "localhost:8080"), ("origin", origin)]),
            )
        };
        for accepted in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:9",
            "HTTP://LOCALHOST:1",
            "https://app.example.com",
            "https://app.example.com:443",
            "http://dev.example:8000",
            "https://x.example:8443",
        ] {
            assert_eq!(check(accepted), Ok(()), "{accepted}");
        }
        for refused in [
            "http://evil.example",
            "null",
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://x.example",
            "http://localhost.evil.example",
            "http://user@localhost:1",
            "http://localhost:1/path",
            "not an origin",
            "",
        ] {
            assert_eq!(check(refused), Err(OriginRefusal::Origin), "{refused}");
        }
        let twice = headers(&[
            ("host", "localhost"),
            ("origin", "http://localhost"),
            ("origin", "http://localhost"),
        ]);
        assert_eq!(policy.check(&uri, &twice), Err(OriginRefusal::Origin));
        let mut unreadable = headers(&[("host", "localhost")]);
        unreadable.insert("origin", HeaderValue::from_bytes(b"http://\xff").unwrap());
        assert_eq!(policy.check(&uri, &unreadable), Err(OriginRefusal::Origin));
        let null = OriginPolicy::new("127.0.0.1:1".parse().unwrap(), ["null"]);
        assert_eq!(
            null.check(&uri, &headers(&[("host", "localhost"), ("origin", "null")])),
            Ok(())
        );
    }

    #[test]
    fn on_loopback_the_host_must_name_this_machine() {
        let policy = loopback().allow_hosts(["agents.example.com", "proxy.example:8443"]);
        let uri = Uri::from_static("/tasks");
        for accepted in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "127.0.0.2:1",
            "localhost",
            "LocalHost:80",
            "[::1]:8080",
            "agents.example.com",
            "agents.example.com:443",
            "proxy.example:8443",
        ] {
            assert_eq!(
                policy.check(&uri, &headers(&[("host", accepted)])),
                Ok(()),
                "{accepted}"
            );
        }
        for refused in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "10.0.0.1:8080",
            "proxy.example:8080",
            "user@localhost",
            "",
            "bad host",
        ] {
            assert_eq!(
                policy.check(&uri, &headers(&[("host", refused)])),
                Err(OriginRefusal::Host),
                "{refused}"
            );
        }
        assert_eq!(
            policy.check(&uri, &HeaderMap::new()),
            Err(OriginRefusal::Host),
            "no Host"
        );
        let twice = headers(&[("host", "localhost"), ("host", "evil.example")]);
        assert_eq!(policy.check(&uri, &twice), Err(OriginRefusal::Host));
        // An absolute-form target names the host too.
        let absolute = Uri::from_static("http://evil.example/tasks");
        assert_eq!(
            policy.check(&absolute, &headers(&[("host", "localhost")])),
            Err(OriginRefusal::Host)
        );
        let absolute = Uri::from_static("http://127.0.0.1:8080/tasks");
        assert_eq!(policy.check(&absolute, &HeaderMap::new()), Ok(()));
    }

    #[test]
    fn elsewhere_the_host_is_not_checked_but_the_origin_is() {
        let policy =
            OriginPolicy::new("0.0.0.0:8080".parse().unwrap(), ["https://app.example.com"]);
        let uri = Uri::from_static("/");
        assert_eq!(
            policy.check(&uri, &headers(&[("host", "agents.example.com")])),
            Ok(())
        );
        assert_eq!(policy.check(&uri, &HeaderMap::new()), Ok(()));
        assert_eq!(
            policy.check(
                &uri,
                &headers(&[
                    ("host", "agents.example.com"),
                    ("origin", "https://app.example.com")
                ])
            ),
            Ok(())
        );
        assert_eq!(
            policy.check(
                &uri,
                &headers(&[
                    ("host", "agents.example.com"),
                    ("origin", "http://evil.example")
                ])
            ),
            Err(OriginRefusal::Origin)
        );
    }
}
