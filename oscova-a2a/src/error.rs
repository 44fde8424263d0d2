//! Why a server did not start ([`ServeA2aError`]).

/// Why the A2A server did not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeA2aError {
    /// No tokens are configured and the address is not a loopback one.
    #[error(
        "refusing to serve A2A on {addr} without tokens: anyone who can reach a non-loopback \
         address would act as user `{user}`; add tokens or OAuth, or listen on 127.0.0.1"
    )]
    NoTokens {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The user it would have served.
        user: String,
    },
    /// Binding or accepting failed.
    #[error(transparent)]
    Serve(#[from] oscova_serve::ServeError),
    /// The OAuth settings are not usable (a URL, a scope, a range).
    #[error(transparent)]
    OAuth(#[from] oscova_serve::OAuthError),
    /// A setting is outside its range.
    #[error("invalid A2A server setting: {0}")]
    Setting(#[from] oscova_serve::LimitError),
    /// The task store failed at start.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}
