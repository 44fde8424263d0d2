//! The HTTP client of `url` servers, and the TLS it speaks to `https://`
//! ones.
//!
//! Rules: TLS is rustls on `ring` (no aws-lc, no OpenSSL), TLS 1.2 and
//! 1.3 with rustls's safe defaults, certificates checked by webpki against
//! a root store of this machine's trusted roots (`rustls-native-certs`:
//! the operator's trust store, so a CA the system trusts, or stops
//! trusting, is trusted here the same way) plus, for a server with
//! `ca_file`, the certificates in that PEM file. The system's roots are
//! loaded once per process. A `ca_file` that cannot be read or holds no
//! certificate is an error when connecting, never a silent fall-back to
//! the system's roots alone; a server whose certificate no root vouches
//! for is refused during the handshake, before any request is sent. No
//! proxy from the environment is used, and redirects are not followed
//! (an MCP endpoint that moves is refused, not chased).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// Why a url server's client could not be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    /// `ca_file` could not be read, or held no PEM certificate.
    #[error("`ca_file` {path}: {reason}")]
    CaFile { path: String, reason: String },
    /// rustls or reqwest refused the configuration.
    #[error("the TLS client could not be built: {0}")]
    Build(String),
}

/// The system's trusted roots, loaded once. Certificates the system store
/// holds but webpki cannot parse are skipped, as rustls's own loaders do.
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::debug!(%error, "a system root certificate could not be loaded");
        }
        roots.add_parsable_certificates(found.certs);
        roots
    })
}

/// The certificates of the PEM file at `path`.
fn ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let fail = |reason: String| TlsError::CaFile {
        path: path.display().to_string(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| fail(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("no PEM certificate in it".to_owned()));
    }
    Ok(certs)
}

/// The rustls configuration: `ring`, the system's roots and `ca_file`'s.
fn config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = system_roots().clone();
    if let Some(path) = ca_file {
        for cert in ca_certificates(path)? {
            roots.add(cert).map_err(|e| TlsError::CaFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Build(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // rmcp's reqwest is built without HTTP/2.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The HTTP client of one url server's connection.
pub(crate) fn client(ca_file: Option<&Path>) -> Result<reqwest_rmcp::Client, TlsError> {
    reqwest_rmcp::Client::builder()
        .tls_backend_preconfigured(config(ca_file)?)
        .no_proxy()
        .redirect(reqwest_rmcp::redirect::Policy::none())
        .build()
        .map_err(|e| TlsError::Build(e.to_string()))
}

/// `error` and every cause beneath it, joined: reqwest's "error sending
/// request" says nothing on its own, the certificate check it wraps does.
pub(crate) fn reason(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = inner.source();
    }
    text
}

/// Why a streamable HTTP handshake failed, with the causes rmcp's own
/// message leaves out (the refused certificate under "error sending
/// request").
pub(crate) fn handshake_reason(error: &rmcp::service::ClientInitializeError) -> String {
    // The token flow's own words (`oauth`), not rmcp's wrapping of them.
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = error
        && let Some(oauth) = crate::oauth::OAuthError::find(error)
    {
        return oauth.to_string();
    }
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            use rmcp::transport::streamable_http_client::StreamableHttpError;
            // rmcp's message stops at reqwest's; its causes are reqwest's.
            match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest_rmcp::Error>>()
            {
                Some(StreamableHttpError::Client(e)) => {
                    let reason = reason(e);
                    let hint = if reason.contains("invalid peer certificate") {
                        "; no trusted root vouches for the server's certificate (trust its CA with the server's `ca_file`)"
                    } else {
                        ""
                    };
                    format!("{reason}, when {context}{hint}")
                }
                _ => format!("{}, when {context}", reason(error)),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = client(Some(&empty)).unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
        let missing = dir.path().join("missing.pem");
        let err = client(Some(&missing)).unwrap_err().to_string();
        assert!(err.contains("missing.pem"), "{err}");
        assert!(client(None).is_ok(), "the system's roots alone build");
    }
}
