//! The fixture the files plugin's test files share: a host with the files
//! plugin over a temporary base directory, and a scope for `alice`.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use oscova_core::prelude::*;
use oscova_plugin_files::FilesPlugin;
use oscova_test_kit::{TestHost, TestUser};
use serde_json::Value;
use tempfile::TempDir;

/// A host whose files plugin roots every user under a temporary base.
pub(crate) struct Fixture {
    pub(crate) base: TempDir,
    /// The host, calling as `alice`; approvals are answered yes.
    pub(crate) scope: TestHost,
}

impl Fixture {
    /// One root per user under the base, default limits.
    pub(crate) fn new() -> Self {
        Self::with_plugin(|base| FilesPlugin::per_user(base))
    }

    /// The plugin `make` builds over the base directory.
    pub(crate) fn with_plugin(make: impl FnOnce(&Path) -> FilesPlugin) -> Self {
        let base = tempfile::tempdir().unwrap();
        let scope = TestHost::builder()
            .plugin_instance(make(base.path()))
            .user(TestUser::new("alice"))
            .build();
        Self { base, scope }
    }

    /// Alice's root, created.
    pub(crate) fn root(&self) -> PathBuf {
        let root = self.base.path().join("alice");
        fs::create_dir_all(&root).unwrap();
        root
    }

    /// Alice's root, created, with links in the temporary path resolved.
    pub(crate) fn canonical_root(&self) -> PathBuf {
        self.root().canonicalize().unwrap()
    }

    /// Calls the files tool `tool`.
    pub(crate) async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.scope.call(tool, args).await.result
    }

    /// [`call`](Self::call), which must succeed.
    pub(crate) async fn ok(&self, tool: &str, args: Value) -> ToolResult {
        let r = self.call(tool, args).await;
        assert!(!r.is_error, "{tool}: {}", r.content);
        r
    }

    /// [`call`](Self::call), which must be refused with `needle` in the
    /// message and nothing of the outside secret.
    pub(crate) async fn refused(&self, tool: &str, args: Value, needle: &str) -> ToolResult {
        let r = self.call(tool, args).await;
        assert!(r.is_error, "{tool} should fail: {}", r.content);
        assert!(
            r.content.contains(needle),
            "{tool}: {:?} lacks {needle:?}",
            r.content
        );
        assert!(!r.content.contains("TOPSECRET"), "{}", r.content);
        r
    }
}
