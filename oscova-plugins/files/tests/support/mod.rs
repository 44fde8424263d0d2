//! The fixture the files plugin's test files share: a host with the files
//! plugin over a temporary base directory, and a scope for `alice`.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use oscova_core::prelude::*;
use oscova_core::{ApprovalRequest, UserScope};
use oscova_plugin_files::FilesPlugin;
use serde_json::Value;
use tempfile::TempDir;

/// A host whose files plugin roots every user under a temporary base.
pub(crate) struct Fixture {
    pub(crate) base: TempDir,
    pub(crate) scope: UserScope,
}

impl Fixture {
    /// One root per user under the base, default limits.
    pub(crate) fn new() -> Self {
        Self::with_plugin(|base| FilesPlugin::per_user(base))
    }

    /// The plugin `make` builds over the base directory.
    pub(crate) fn with_plugin(make: impl FnOnce(&Path) -> FilesPlugin) -> Self {
        let base = tempfile::tempdir().unwrap();
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![FilesPlugin])
            .plugin_instance(make(base.path()))
            .approval_handler(|_: &ApprovalRequest<'_>| true)
            .strict(true)
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("alice"));
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
        self.scope
            .invoke(&format!("oscova_files__files__{tool}"), args)
            .await
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
