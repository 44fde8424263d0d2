//! The host-managed HTTP client and the network scope it enforces.
//!
//! The host sets the running tool's [`NetworkScope`] in a task-local around
//! every call. A toolset's [`HttpClient`] reads it when a request is sent:
//!
//! - `None` refuses before anything is built;
//! - `Local` reaches this machine only: loopback addresses, and `localhost`
//!   and `*.localhost` when every address they resolve to is loopback;
//! - `Internet` reaches the public Internet only. A destination whose
//!   address is loopback, unspecified, private (10/8, 172.16/12,
//!   192.168/16), shared (100.64/10), link-local (169.254/16, fe80::/10),
//!   unique-local (fc00::/7), multicast, broadcast, reserved, a
//!   documentation or benchmarking range, an IPv4-mapped, compatible,
//!   NAT64 or 6to4 form of one of these, or a cloud metadata address
//!   (169.254.169.254, fd00:ec2::254, 100.100.100.200) is refused, unless
//!   the host allowed it by name ([`HttpClientBuilder::allow_internal`]).
//!
//! These are decided from the addresses a connection would use, never
//! from the URL text: the target of the request and of every redirect hop
//! is checked after URL parsing (which turns `2130706433`, `0x7f000001`,
//! `0177.0.0.1`, `127.1` or `[::ffff:127.0.0.1]` into the address they
//! mean, and separates userinfo from the host), and a name is checked on
//! every address its resolution returns, in the resolver `reqwest`
//! connects with, so a name that resolves to a private address is refused
//! and what was checked is what is dialled. A refusal is an
//! [`HttpError::ScopeDenied`] that names the destination and the reason,
//! and it comes before any connection is made. Scoped requests never go
//! through a proxy from the environment: through a proxy the destination's
//! address cannot be checked.
//!
//! The scope is read when a request is sent, not when it is built, so a
//! request built earlier (in a factory, say) is checked against the tool
//! that sends it. It lives in a task-local: outside a tool call, and in a
//! task a tool spawns (`tokio::spawn` does not carry task-locals), a
//! toolset's client acts as `None` and refuses everything.
//!
//! Providers and the host are not tools. They use an
//! [`unrestricted`](HttpClient::unrestricted) client, and reach the
//! endpoint an operator configured through
//! [`for_endpoint`](HttpClient::for_endpoint): an endpoint whose text
//! names this machine is reached under the `Local` rule, so a
//! `*.localhost` name (or `localhost.`) that resolves to another machine
//! is refused before connecting, and an offline check that passed on the
//! text is thereby also a check of the resolved addresses. This is the one
//! mechanism model, speech and download providers share.
//!
//! # What this does not stop
//!
//! The scope guards the client the host hands out; it is not a sandbox. A
//! tool is not stopped when it:
//!
//! - opens sockets or resolves names itself (`std::net::TcpStream`,
//!   `tokio::net`, its own `reqwest::Client` or another HTTP library);
//! - starts a process (`curl`, a helper program): the spawn policy decides
//!   a child's environment, not its network;
//! - calls [`HttpClient::with_fixed_scope`] or
//!   [`HttpClient::unrestricted`] on its client, which replace the running
//!   tool's scope; providers need them, and nothing keeps a tool from
//!   doing the same;
//! - reaches the network through something unscoped the host gave it: a
//!   provider, or the host's own client ([`crate::PluginHost::http_client`]);
//! - talks to an allowed destination, or a public server, or a loopback
//!   service (under `Local`) that itself forwards requests elsewhere (a
//!   proxy, a tunnel, a server-side redirect it follows itself).
//!
//! Allowed names are trusted whatever they resolve to: naming one is the
//! host's decision that it may be reached.
//!
//! [`backend`] is what model and speech back ends build on over this
//! client: sending under cancellation, bounded reads, streamed lines and
//! errors with the API key scrubbed.

#[cfg(feature = "http")]
mod address;
#[cfg(feature = "http")]
mod allow;
#[cfg(feature = "http")]
pub mod backend;
#[cfg(feature = "http")]
mod client;
#[cfg(feature = "http")]
mod policy;
#[cfg(feature = "http")]
mod pools;

use std::future::Future;

use crate::tool::NetworkScope;

#[cfg(feature = "http")]
pub use client::{HttpClient, HttpClientBuilder, HttpError, HttpRequestBuilder};

/// Without the `http` feature there is no client to hand out; contexts keep
/// this empty stand-in in its place so their layout is the same either way.
#[cfg(not(feature = "http"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpClient;

#[cfg(not(feature = "http"))]
impl HttpClient {
    pub(crate) fn shared_default() -> Self {
        Self
    }

    pub(crate) fn unrestricted(&self) -> Self {
        Self
    }
}

tokio::task_local! {
    static TOOL_SCOPE: NetworkScope;
}

/// Runs `fut` as a tool with network scope `scope`.
pub(crate) async fn scoped<F: Future>(scope: NetworkScope, fut: F) -> F::Output {
    TOOL_SCOPE.scope(scope, fut).await
}

/// Runs `f` as a tool with network scope `scope`.
pub(crate) fn scoped_sync<R>(scope: NetworkScope, f: impl FnOnce() -> R) -> R {
    TOOL_SCOPE.sync_scope(scope, f)
}

/// The network scope of the tool running on this task, if any.
#[inline]
pub fn current_network_scope() -> Option<NetworkScope> {
    TOOL_SCOPE.try_with(|s| *s).ok()
}
