//! Concurrent throughput: 1,000 users, each with their own scope, invoking
//! a small async tool at once on a multi-threaded runtime. Criterion
//! reports calls per second (elements/s).
//!
//! Run with: `cargo bench -p oscova-core --bench throughput`

#![allow(missing_docs)] // bench fixtures

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oscova_core::prelude::*;
use serde_json::json;

pub struct AsyncToolset;

#[toolset]
impl AsyncToolset {
    /// Greets after yielding once to the scheduler.
    pub async fn greet(name: String) -> String {
        tokio::task::yield_now().await;
        format!("Hello, {name}!")
    }
}

#[plugin(id = "bench.async")]
pub struct AsyncPlugin;

impl AgentPlugin for AsyncPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| AsyncToolset);
    }
}

const USERS: usize = 1_000;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![AsyncPlugin])
        .build()
        .expect("host");
    let scopes: Vec<_> = (0..USERS)
        .map(|i| host.user_scope(UserInfo::new(format!("user{i}"))))
        .collect();

    let mut group = c.benchmark_group("concurrent");
    group.throughput(Throughput::Elements(USERS as u64));
    group.bench_function("1000_users_async_tool", |b| {
        b.to_async(&rt).iter(|| async {
            let tasks: Vec<_> = scopes
                .iter()
                .map(|scope| {
                    let scope = scope.clone();
                    tokio::spawn(async move {
                        scope
                            .invoke("bench_async__async__greet", json!({"name": "Ada"}))
                            .await
                    })
                })
                .collect();
            for task in tasks {
                let result = task.await.expect("task");
                assert!(!result.is_error);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
