//! User scopes: one user's toolset instances over the host's catalog.
//!
//! Rules: a scope owns only its toolset instances; the catalog, metadata,
//! providers and services are the host's, shared by every user. Building
//! one calls every toolset factory exactly once, in load order, with that
//! user's context; a factory that fails or panics drops that toolset for
//! this user only, with a diagnostic. The pipeline lives in `invoke/`,
//! which builds on this module; `UserScope::invoke` is only its entry.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::HostInner;
use super::invoke::{Arguments, Invoke};
use super::publish::PublishedTool;
use crate::context::{AgentPluginContext, Credentials, ScopeParts, UserInfo};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::redact::Redactor;
use crate::tool::{CallBase, Toolset};

/// One user's tools.
#[derive(Clone)]
pub struct UserScope {
    pub(in crate::host) inner: Arc<ScopeInner>,
}

pub(in crate::host) struct ScopeInner {
    pub(in crate::host) host: Arc<HostInner>,
    pub(in crate::host) user: Arc<UserInfo>,
    pub(in crate::host) calls: CallBase,
    pub(in crate::host) toolsets: Box<[Option<Arc<dyn Toolset>>]>,
    pub(in crate::host) redactor: Redactor,
    diagnostics: Vec<Diagnostic>,
}

impl fmt::Debug for UserScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserScope")
            .field("user", &self.inner.user.id())
            .field(
                "toolsets",
                &self.inner.toolsets.iter().filter(|t| t.is_some()).count(),
            )
            .finish_non_exhaustive()
    }
}

impl UserScope {
    pub(super) fn build(host: Arc<HostInner>, mut user: UserInfo) -> Self {
        if let Some(roots) = &host.env.files_roots
            && user.files_root().is_none()
            && let Some(root) = roots(&user)
        {
            user = user.with_files_root(root);
        }
        let user = Arc::new(user);
        let redactor = Redactor::new();
        let mut diagnostics = Vec::new();
        let catalog = &host.catalog;
        let mut toolsets: Vec<Option<Arc<dyn Toolset>>> = Vec::with_capacity(catalog.slots.len());
        let parts = Arc::new(ScopeParts {
            user: user.clone(),
            credentials: Credentials::new(
                host.env.credentials.clone(),
                user.clone(),
                redactor.clone(),
            ),
            http: host.env.http.clone(),
            spawn: host.env.spawn.clone(),
            provisions: host.provisions.clone(),
        });
        for plugin in &catalog.plugins {
            if plugin.slots == 0 {
                continue;
            }
            let ctx = AgentPluginContext::new(plugin.manifest.id, parts.clone());
            let slots = catalog
                .slots
                .get(plugin.first_slot..plugin.first_slot + plugin.slots)
                .unwrap_or_default();
            for slot in slots {
                let outcome = catch_unwind(AssertUnwindSafe(|| (slot.registration.factory)(&ctx)));
                let reason = match outcome {
                    Ok(Ok(toolset)) => {
                        toolsets.push(Some(toolset));
                        continue;
                    }
                    Ok(Err(e)) => format!("failed: {e}"),
                    Err(payload) => format!("panicked: {}", panic_message(&*payload)),
                };
                // A factory's error may quote a credential it resolved: the
                // diagnostic is logged as it is made, so redact it first.
                let reason = host
                    .policy
                    .redactor
                    .redact(&redactor.redact(&reason))
                    .into_owned();
                toolsets.push(None);
                diagnostics.push(Diagnostic::new(
                    Severity::Warning,
                    DiagnosticKind::ToolsetFailed,
                    Some(plugin.manifest.id),
                    format!(
                        "toolset `{}` of plugin `{}` skipped for user `{}`: its factory {reason}",
                        slot.registration.type_name(),
                        plugin.manifest.id,
                        user.id()
                    ),
                ));
            }
        }
        let calls = CallBase {
            user: user.clone(),
            spawn: Some(host.env.spawn.clone()),
            redactors: [redactor.clone(), host.policy.redactor.clone()],
        };
        Self {
            inner: Arc::new(ScopeInner {
                host,
                user,
                calls,
                toolsets: toolsets.into_boxed_slice(),
                redactor,
                diagnostics,
            }),
        }
    }

    /// Calls the tool `wire_name` with `args` (a JSON value, or
    /// [`Arguments::json`] text); set options on the returned [`Invoke`],
    /// then await it. The pipeline behind it is
    /// [`invoke`](crate::host::invoke)'s.
    #[inline]
    pub fn invoke<'a>(&'a self, wire_name: &'a str, args: impl Into<Arguments<'a>>) -> Invoke<'a> {
        Invoke::new(self, wire_name, args.into(), ())
    }

    /// The user this scope is for.
    pub fn user(&self) -> &UserInfo {
        &self.inner.user
    }

    /// Toolsets that failed to build for this user, with reasons.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.inner.diagnostics
    }

    /// The secrets this scope redacts: every credential its toolsets
    /// resolved, in their factories or while running. The host's
    /// [`PluginHost::redactor`](super::PluginHost::redactor) applies on top,
    /// in every scope.
    ///
    /// Redactors are per scope on purpose: a value user A resolved is not
    /// redacted in user B's scope unless B resolved it too. One redactor for
    /// all users would tell B, through a `[REDACTED]` in an echo, that a
    /// string is someone else's secret. Values every scope must hide (API
    /// keys the host gives providers) belong in the host's redactor.
    pub fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// `text` with every secret this scope hides replaced by
    /// [`REDACTED`](crate::redact::REDACTED): the ones its toolsets
    /// resolved and the host's. For text a host builds itself around a
    /// call (an error naming what the client sent, say).
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match self.inner.redactor.redact(text) {
            std::borrow::Cow::Borrowed(text) => self.inner.host.policy.redactor.redact(text),
            std::borrow::Cow::Owned(clean) => {
                std::borrow::Cow::Owned(self.inner.host.policy.redactor.redact(&clean).into_owned())
            }
        }
    }

    /// Every string (and object key) inside `value` redacted in place as
    /// [`redact`](Self::redact) does, with this scope's secrets and the
    /// host's; whether anything changed.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> bool {
        let mine = self.inner.redactor.redact_json(value);
        self.inner.host.policy.redactor.redact_json(value) | mine
    }

    /// The tools this user can call, in publication order.
    pub fn tools(&self) -> impl Iterator<Item = &PublishedTool> + '_ {
        self.inner
            .host
            .catalog
            .tools
            .iter()
            .filter(|t| matches!(self.inner.toolsets.get(t.slot), Some(Some(_))))
    }

    /// A tool this user can call, by wire name.
    pub fn tool(&self, wire_name: &str) -> Option<&PublishedTool> {
        let tool = self.inner.host.catalog.tool(wire_name)?;
        matches!(self.inner.toolsets.get(tool.slot), Some(Some(_))).then_some(tool)
    }
}

impl crate::redact::Redact for UserScope {
    fn redact_text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.redact(text)
    }
}
