//! Run with: `cargo run --release -p example-mcp-load --bin rmcp-anchor -- --listen 127.0.0.1:0`
//!
//! The anchor of the load benchmark: a minimal rmcp streamable HTTP server
//! (rmcp's defaults, the same hyper HTTP/1.1 connections as Oscova's
//! server) with one tool named, described and answering like the seed
//! plugin's echo tool that `oscova mcp --listen` serves. Prints
//! `rmcp-anchor: serving http://ADDR/mcp` on stderr once bound.

use std::convert::Infallible;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

const TOOL: &str = "acme_search__example__example_echo";

#[derive(Clone)]
struct Echo {
    tools: Arc<[Tool]>,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("text"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("`text` is required", None))?
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (Some("--listen"), Some(addr)) => addr,
        _ => "127.0.0.1:0".to_owned(),
    };
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to return."}},
        "required": ["text"],
    });
    let Value::Object(schema) = schema else {
        return Err("the schema is an object".into());
    };
    let tool = Tool::new(
        TOOL,
        "Returns the supplied text unchanged.",
        Arc::new(schema),
    );
    let echo = Echo {
        tools: Arc::from(vec![tool]),
    };
    let service = StreamableHttpService::new(
        move || Ok(echo.clone()),
        Arc::new(LocalSessionManager::default()),
        Default::default(),
    );
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("rmcp-anchor: serving http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let serve = hyper::service::service_fn(move |request| {
                let service = service.clone();
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), serve)
                .await;
        });
    }
}
