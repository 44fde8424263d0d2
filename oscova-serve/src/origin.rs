//! Which browser origins and `Host` names a front end accepts.
//!
//! Rules: loopback origins (`http` and `https` on `localhost`, `127.0.0.1`
//! and `[::1]`, any port) are always accepted, and the ones the operator
//! adds as `scheme://host[:port]` (`:*` for any port) beside them. The
//! `Host` header is checked (a loopback name only) when the server is bound
//! to a loopback address, where DNS rebinding is the threat; behind a load
//! balancer the `Host` is the public name, so it is not checked there.
//! This module decides the policy; the protocol server enforces it (for
//! MCP, `rmcp`'s streamable HTTP server, answering 403).

use std::net::SocketAddr;

/// The Origin and Host policy of one bound server.
///
/// ```
/// use oscova_serve::OriginPolicy;
///
/// let policy = OriginPolicy::new("127.0.0.1:8080".parse()?, ["https://app.example"]);
/// assert!(policy.origins().contains(&"http://localhost:*".to_owned()));
/// assert!(policy.origins().contains(&"https://app.example".to_owned()));
/// assert!(policy.checks_host());
/// assert!(!OriginPolicy::new("0.0.0.0:8080".parse()?, [""; 0]).checks_host());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPolicy {
    origins: Vec<String>,
    check_host: bool,
}

impl OriginPolicy {
    /// The policy of a server bound to `addr` that accepts `extra` origins
    /// beside loopback ones.
    pub fn new(addr: SocketAddr, extra: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
            .collect();
        origins.extend(extra.into_iter().map(Into::into));
        Self {
            origins,
            check_host: addr.ip().is_loopback(),
        }
    }

    /// The origins accepted, as `scheme://host[:port]` patterns.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether the `Host` header must name this machine.
    pub fn checks_host(&self) -> bool {
        self.check_host
    }
}
