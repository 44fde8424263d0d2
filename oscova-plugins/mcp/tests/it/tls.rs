//! `https://` url servers: an rmcp streamable HTTP server behind a rustls
//! acceptor on loopback, with a certificate from a test CA this module
//! makes (rcgen, on `ring`). Trusted through the server's `ca_file`; a
//! server no root vouches for is refused during the handshake, before it
//! receives a single request.

use crate::support;

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hyper_util::rt::TokioIo;
use oscova_core::prelude::*;
use oscova_plugin_mcp::{McpPlugin, ServerConfig};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use support::{host, plugin, tool};
use tokio_rustls::rustls;

/// A server with one tool, `echo`, that answers its `text` upper-cased.
#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let serde_json::Value::Object(schema) = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }) else {
            return Err(ErrorData::internal_error("schema", None));
        };
        let tool = Tool::new("echo", "Upper-cases the text.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("text"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_uppercase();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// A CA (its PEM) and a certificate it issued for 127.0.0.1 and
/// `localhost` (DER, with its PKCS#8 key).
pub(crate) struct Pki {
    pub(crate) ca_pem: String,
    pub(crate) cert: rustls::pki_types::CertificateDer<'static>,
    pub(crate) key: Vec<u8>,
}

pub(crate) fn pki(ca_name: &str) -> Pki {
    let ca_key = rcgen::KeyPair::generate().expect("a CA key");
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().expect("a server key");
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("server params");
    params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress([127, 0, 0, 1].into()));
    let cert = params
        .signed_by(&key, &issuer)
        .expect("the server certificate");
    Pki {
        ca_pem: ca_cert.pem(),
        cert: cert.der().clone(),
        key: key.serialize_der(),
    }
}

/// The echo server over TLS with `pki`'s certificate on a free loopback
/// port: its URL, and the count of HTTP requests it has received.
async fn tls_server(pki: &Pki) -> (String, Arc<AtomicUsize>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(pki.key.clone());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![pki.cert.clone()], key.into())
        .expect("the server certificate");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let service = StreamableHttpService::new(
        || Ok(Echo),
        Arc::new(LocalSessionManager::default()),
        Default::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!(
        "https://{}/mcp",
        listener.local_addr().expect("its address")
    );
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, service, counted) = (acceptor.clone(), service.clone(), counted.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends here.
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let serve = hyper::service::service_fn(move |request| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), serve)
                    .await;
            });
        }
    });
    (url, requests)
}

pub(crate) fn write_ca(dir: &Path, pki: &Pki) -> std::path::PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, &pki.ca_pem).expect("the CA file");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_is_trusted_through_its_ca_file_and_called() {
    let pki = pki("Oscova test CA");
    let (url, requests) = tls_server(&pki).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = ServerConfig::url(url)
        .network(NetworkScope::Local)
        .ca_file(write_ca(dir.path(), &pki));
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope
        .invoke(&tool("echo"), json!({"text": "over tls"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "OVER TLS");
    assert!(
        requests.load(Ordering::SeqCst) >= 3,
        "initialize, list, call"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_no_root_vouches_for_is_refused_before_any_request() {
    let pki = pki("Oscova test CA");
    let (url, requests) = tls_server(&pki).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    // The system's roots alone, and the system's roots plus another CA
    // (one with the same name, a different key): neither vouches for it.
    let other = write_ca(dir.path(), &self::pki("Oscova test CA"));
    for (case, config) in [
        ("system roots", ServerConfig::url(url.clone())),
        ("another CA", ServerConfig::url(url.clone()).ca_file(other)),
    ] {
        let config = config
            .network(NetworkScope::Local)
            .timeout(std::time::Duration::from_secs(10));
        let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
        let diagnostics = mcp.start_diagnostics().join("\n");
        // webpki's words: an unknown issuer, or a same-named CA whose
        // signature does not verify.
        let why = if case == "system roots" {
            "invalid peer certificate: UnknownIssuer"
        } else {
            "invalid peer certificate: BadSignature"
        };
        assert!(
            diagnostics.contains("MCP server `notes` was not loaded")
                && diagnostics.contains(why)
                && diagnostics.contains("`ca_file`"),
            "{case}: the refusal names the certificate check: {diagnostics}"
        );
        assert_eq!(
            requests.load(Ordering::SeqCst),
            0,
            "{case}: nothing was sent"
        );
    }
    // A `ca_file` that is not a certificate is refused, not ignored.
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "-----BEGIN NOTHING-----\n").expect("a file");
    let config = ServerConfig::url(url)
        .network(NetworkScope::Local)
        .ca_file(&junk);
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    let diagnostics = mcp.start_diagnostics().join("\n");
    assert!(
        diagnostics.contains("`ca_file`") && diagnostics.contains("junk.pem"),
        "{diagnostics}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0);
}
