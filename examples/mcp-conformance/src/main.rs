//! Run with: `cargo run -p example-mcp-conformance -- --listen 127.0.0.1:PORT`
//!
//! The conformance plugin's tools under their short names, with the
//! fixture prompts and resources, at `http://127.0.0.1:PORT/mcp`, served by `oscova_mcp::http` (the
//! server `oscova mcp --listen` runs) until SIGTERM or Ctrl-C. Port 0 picks
//! a free port; the line `mcp-conformance: serving http://ADDR/mcp` on
//! stderr says which.

use std::net::SocketAddr;
use std::process::ExitCode;

use example_mcp_conformance::ConformancePlugin;
use example_mcp_conformance::offer::{FixtureResources, prompts};
use oscova_core::{PluginHost, linked_plugins};
use oscova_mcp::ToolNames;
use oscova_mcp::http::McpHttpServer;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let addr: Option<SocketAddr> = match (args.next().as_deref(), args.next()) {
        (Some("--listen"), Some(addr)) => addr.parse().ok(),
        _ => None,
    };
    let Some(addr) = addr else {
        eprintln!("usage: mcp-conformance --listen ADDR:PORT");
        return ExitCode::from(2);
    };
    let host = match PluginHost::builder()
        .plugins(linked_plugins![ConformancePlugin])
        .build()
    {
        Ok(host) => host,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = match McpHttpServer::new(host.clone()).tool_names(ToolNames::Short) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            return ExitCode::from(2);
        }
    };
    let prompts = match prompts() {
        Ok(prompts) => prompts,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = server
        .prompts(prompts)
        .resources(FixtureResources)
        .server_info("oscova-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .bind(addr)
        .await;
    let server = match server {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "mcp-conformance: serving http://{}/mcp",
        server.local_addr()
    );
    let outcome = server.serve_until(terminated()).await;
    host.shutdown().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-conformance: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C.
async fn terminated() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = term.recv() => {}
            () = ctrl_c => {}
        }
        return;
    }
    ctrl_c.await;
}
