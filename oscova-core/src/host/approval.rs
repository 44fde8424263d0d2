//! Approval: who decides whether a tool may run.
//!
//! `Required` tools always go through the host's handler; `Default` tools
//! follow [`DefaultApproval`]; `NotRequired` tools run unasked. Without a
//! handler, anything that needs approval is denied: failing closed is the
//! only safe answer when nobody can be asked.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::context::UserInfo;
use crate::provider::BoxFuture;
use crate::tool::{ToolApprovalMode, ToolInfo};

/// What `ToolApprovalMode::Default` means on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultApproval {
    /// `Default` tools run unasked (the usual policy).
    #[default]
    NotRequired,
    /// `Default` tools need approval too.
    Required,
}

/// A tool call awaiting a decision.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The wire name.
    pub wire_name: &'a str,
    /// The tool's description.
    pub description: &'a str,
    /// The tool's declared mode.
    pub mode: ToolApprovalMode,
    /// The user making the call.
    pub user: &'a UserInfo,
    /// The arguments, as they will be passed.
    pub arguments: &'a Value,
}

/// The handler's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the tool.
    Approve,
    /// Do not run it; the reason goes to the model.
    Deny(Option<String>),
}

impl From<bool> for ApprovalDecision {
    fn from(approved: bool) -> Self {
        if approved {
            Self::Approve
        } else {
            Self::Deny(None)
        }
    }
}

/// Decides whether a call may run. Closures
/// `Fn(&ApprovalRequest) -> impl Into<ApprovalDecision>` implement it.
pub trait ApprovalHandler: Send + Sync + 'static {
    /// Decides on one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision>;
}

impl<F, D> ApprovalHandler for F
where
    F: Fn(&ApprovalRequest<'_>) -> D + Send + Sync + 'static,
    D: Into<ApprovalDecision>,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        let decision = self(request).into();
        Box::pin(std::future::ready(decision))
    }
}

pub(crate) struct ApprovalPolicy {
    pub(crate) handler: Option<Arc<dyn ApprovalHandler>>,
    pub(crate) default: DefaultApproval,
    /// Whether `Default` tools annotated `read_only` run unasked even when
    /// `default` is `Required`.
    pub(crate) read_only_unasked: bool,
}

impl ApprovalPolicy {
    pub(crate) fn needs_approval(&self, info: &ToolInfo) -> bool {
        match info.approval() {
            ToolApprovalMode::Required => true,
            ToolApprovalMode::NotRequired => false,
            ToolApprovalMode::Default => {
                self.default == DefaultApproval::Required
                    && !(self.read_only_unasked && info.annotations().read_only() == Some(true))
            }
        }
    }
}

impl fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("handler", &self.handler.is_some())
            .field("default", &self.default)
            .field("read_only_unasked", &self.read_only_unasked)
            .finish()
    }
}
