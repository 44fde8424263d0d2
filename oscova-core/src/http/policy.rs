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
//! decision that it may be reached. The allow list's entries and how they
//! are written are in `allow.rs`.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect;

use super::address::non_public;
use super::allow::{AllowList, AllowedHost, Destination, Listed, canonical_ip};
use crate::locality::{is_local_host, is_loopback_ip};
use crate::tool::NetworkScope;

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
