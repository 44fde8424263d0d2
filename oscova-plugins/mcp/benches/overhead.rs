//! The cost of calling an MCP server's tool through the `oscova.mcp`
//! plugin (a user scope's invoke: lookup, schema check, hooks, approval,
//! redaction, progress routing) against calling the same server directly
//! with rmcp's client, in the same run. Both talk to their own process of
//! the rmcp test server over stdio, with the same tool and arguments.
//!
//! Run with: `cargo bench -p oscova-plugin-mcp --bench overhead`

#![allow(missing_docs)] // bench fixtures

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_core::prelude::*;
use oscova_plugin_mcp::{McpPlugin, ServerConfig};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// The rmcp test server, built in this bench's profile.
fn server_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("bench binary");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    oscova_test_support::build_example("rmcp_test_server", dir)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = server_binary();
    let (host, direct) = rt.block_on(async {
        let mcp = McpPlugin::builder()
            .server(
                "notes",
                ServerConfig::command(server.display().to_string())
                    .approval(ToolApprovalMode::NotRequired),
            )
            .start()
            .await;
        assert!(
            mcp.start_diagnostics().is_empty(),
            "{:?}",
            mcp.start_diagnostics()
        );
        let host = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(mcp)
            .build()
            .expect("host");
        let cmd = tokio::process::Command::new(&server);
        let direct = ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("client");
        (host, direct)
    });
    let scope = host.user_scope(UserInfo::new("bench"));
    let args = json!({"text": "hello"});
    let object_args: JsonObject = match args.clone() {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };

    let mut group = c.benchmark_group("mcp_call");
    group.bench_function("direct_rmcp_client", |b| {
        b.to_async(&rt).iter(|| async {
            let params =
                CallToolRequestParams::new("Shout-Text").with_arguments(object_args.clone());
            let result = direct.call_tool(params).await.expect("call");
            assert_ne!(result.is_error, Some(true));
        })
    });
    group.bench_function("through_plugin", |b| {
        b.to_async(&rt).iter(|| async {
            let result = scope
                .invoke("oscova_mcp__notes__shout_text", args.clone())
                .await;
            assert_eq!(result.content, "HELLO");
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
