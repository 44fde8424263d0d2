//! The approval handler the CLI installs on its host.
//!
//! Rules: the host only asks for tools that need approval (`Required`, and
//! `Default` when the policy says so). A call is approved when any of these
//! says yes, in this order: the command's flag (`--yes`,
//! `--allow-approval-required`), the embedding host's own handler (see
//! [`Launcher::approval_handler`](crate::Launcher::approval_handler)), and,
//! for `tools call` only, the person at the terminal. Otherwise it is denied
//! with a reason that says how to approve it; nothing waits for an answer
//! that cannot come.

use std::sync::Arc;

use oscova_core::provider::BoxFuture;
use oscova_core::{ApprovalDecision, ApprovalRequest, host::ApprovalHandler};

/// Where the CLI is running, which decides who can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asker {
    /// `tools call`: a person may be at a terminal; `--yes` approves.
    Terminal {
        /// `--yes` was given.
        yes: bool,
    },
    /// `mcp`: stdin is the protocol, so nobody can be asked.
    Mcp {
        /// `--allow-approval-required` was given.
        allow: bool,
    },
}

/// The CLI's approval handler.
pub(crate) struct CliApproval {
    asker: Asker,
    host: Option<Arc<dyn ApprovalHandler>>,
}

impl CliApproval {
    pub(crate) fn new(asker: Asker, host: Option<Arc<dyn ApprovalHandler>>) -> Self {
        Self { asker, host }
    }
}

impl ApprovalHandler for CliApproval {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if matches!(
                self.asker,
                Asker::Terminal { yes: true } | Asker::Mcp { allow: true }
            ) {
                return ApprovalDecision::Approve;
            }
            if let Some(host) = &self.host
                && host.approve(request).await == ApprovalDecision::Approve
            {
                return ApprovalDecision::Approve;
            }
            match self.asker {
                Asker::Terminal { .. } => ask_terminal(request).await,
                Asker::Mcp { .. } => ApprovalDecision::Deny(Some(
                    "the tool requires approval, and this MCP server was started without \
                     --allow-approval-required"
                        .to_owned(),
                )),
            }
        })
    }
}

async fn ask_terminal(request: &ApprovalRequest<'_>) -> ApprovalDecision {
    let question = format!(
        "Run `{}` for user `{}` with arguments {}?",
        request.wire_name,
        request.user.id(),
        request.arguments
    );
    let answer = tokio::task::spawn_blocking(move || crate::term::ask(&question)).await;
    match answer {
        Ok(Some(true)) => ApprovalDecision::Approve,
        Ok(Some(false)) => ApprovalDecision::Deny(Some("the user said no".to_owned())),
        Ok(None) | Err(_) => ApprovalDecision::Deny(Some(
            "the tool requires approval and there is no terminal to ask on; pass --yes to approve it"
                .to_owned(),
        )),
    }
}
