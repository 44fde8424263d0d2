//! Start-up and per-user costs: building a user scope over 100 toolsets
//! (time, and heap beyond the toolset instances, counted by an
//! instrumented global allocator) and publishing 10,000 tools with every
//! check. Budgets (DESIGN.md): a scope in at most 20 microseconds and 4 KiB;
//! publication in at most 10 ms.
//!
//! Run with: `cargo bench -p oscova-core --bench startup`

#![allow(missing_docs)] // bench fixtures

use std::alloc::System;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_core::prelude::*;
use oscova_core::{plugin::PluginManifest, plugin::PluginRegistration};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One small toolset; 100 plugins each register it once.
pub struct SmallToolset;

#[toolset]
impl SmallToolset {
    /// Echoes.
    pub fn echo(text: String) -> String {
        text
    }
}

macro_rules! big_toolset {
    ($($name:ident)*) => {
        /// A toolset with 100 tools; 100 plugins give 10,000 tools.
        pub struct BigToolset;

        #[toolset]
        impl BigToolset {
            $(
                /// A tool.
                pub fn $name(a: u32, b: Option<String>) -> u32 {
                    let _ = b;
                    a
                }
            )*
        }
    };
}

big_toolset!(t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t21 t22 t23 t24 t25 t26 t27 t28 t29 t30 t31 t32 t33 t34 t35 t36 t37 t38 t39 t40 t41 t42 t43 t44 t45 t46 t47 t48 t49 t50 t51 t52 t53 t54 t55 t56 t57 t58 t59 t60 t61 t62 t63 t64 t65 t66 t67 t68 t69 t70 t71 t72 t73 t74 t75 t76 t77 t78 t79 t80 t81 t82 t83 t84 t85 t86 t87 t88 t89 t90 t91 t92 t93 t94 t95 t96 t97 t98 t99);

struct Small;
impl AgentPlugin for Small {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| SmallToolset);
    }
}

struct Big;
impl AgentPlugin for Big {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| BigToolset);
    }
}

/// `count` plugins with distinct ids, all creating the same plugin type.
fn plugins(
    count: usize,
    prefix: &str,
    create: fn() -> Box<dyn AgentPlugin>,
) -> Vec<PluginRegistration> {
    (0..count)
        .map(|i| {
            let id: &'static str = Box::leak(format!("{prefix}{i}").into_boxed_str());
            let manifest: &'static PluginManifest = Box::leak(Box::new(PluginManifest::new(id)));
            PluginRegistration::new(manifest, "bench", create)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let small = plugins(100, "small.p", || Box::new(Small));
    let host = PluginHost::builder().plugins(small).build().expect("host");
    assert_eq!(host.tools().len(), 100);
    assert!(host.diagnostics().is_empty());

    // Heap of one scope, beyond the 100 toolset instances (an `Arc` of a
    // zero-sized toolset is its two counters: 16 bytes each).
    let user = UserInfo::new("alice").with_time_zone("Europe/Berlin");
    let region = Region::new(GLOBAL);
    let scope = host.user_scope(user.clone());
    let stats = region.change();
    let instances = 100 * std::mem::size_of::<[usize; 2]>();
    println!(
        "user_scope over 100 toolsets: {} allocations, {} bytes; beyond the instances: {} bytes",
        stats.allocations,
        stats.bytes_allocated,
        stats.bytes_allocated.saturating_sub(instances)
    );
    assert_eq!(scope.tools().count(), 100);
    drop(scope);

    c.bench_function("user_scope_100_toolsets", |b| {
        b.iter(|| host.user_scope(black_box(user.clone())))
    });

    let big = plugins(100, "big.p", || Box::new(Big));
    let host = PluginHost::builder()
        .plugins(big.clone())
        .build()
        .expect("host");
    assert_eq!(host.tools().len(), 10_000);
    assert!(host.diagnostics().is_empty());
    let mut group = c.benchmark_group("publish");
    group.sample_size(30);
    group.bench_function("10000_tools", |b| {
        b.iter(|| {
            PluginHost::builder()
                .plugins(black_box(big.clone()))
                .build()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
