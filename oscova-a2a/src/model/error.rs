//! The protocol's errors ([`A2aError`], each with its JSON-RPC code and
//! the reason an HTTP+JSON answer names).
//!
//! Rules: codes and reasons are the specification's (a2a-sdk 1.3.0's
//! `JSON_RPC_ERROR_CODE_MAP` and `A2A_ERROR_MAPPING`); an error's `data`
//! is the `google.rpc.ErrorInfo` detail the SDK reads, domain
//! `a2a-protocol.org`. A task of another user is [`A2aError::TaskNotFound`]
//! with the same text as a missing one.

use serde_json::{Value, json};

/// An error the protocol names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// No such task (or another user's).
    #[error("Task not found")]
    TaskNotFound,
    /// The task is in a terminal state.
    #[error("Task cannot be canceled: it is {0}")]
    TaskNotCancelable(String),
    /// Push notifications are not supported here.
    #[error("Push Notification is not supported")]
    PushNotificationNotSupported,
    /// The operation is not supported.
    #[error("This operation is not supported: {0}")]
    UnsupportedOperation(String),
    /// No extended card is configured.
    #[error("Authenticated Extended Card is not configured")]
    ExtendedAgentCardNotConfigured,
    /// The `A2A-Version` asked for is not served.
    #[error("A2A version '{0}' is not supported; this server speaks 1.0")]
    VersionNotSupported(String),
    /// The params are not valid.
    #[error("Invalid params: {0}")]
    InvalidParams(String),
    /// The request is not a valid JSON-RPC request.
    #[error("Invalid Request: {0}")]
    InvalidRequest(String),
    /// No such method.
    #[error("Method not found: {0}")]
    MethodNotFound(String),
    /// The body is not JSON.
    #[error("Invalid JSON payload: {0}")]
    Parse(String),
    /// The server failed.
    #[error("Internal error: {0}")]
    Internal(String),
}

impl A2aError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable(_) => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation(_) => -32004,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::VersionNotSupported(_) => -32009,
            Self::InvalidParams(_) => -32602,
            Self::InvalidRequest(_) => -32600,
            Self::MethodNotFound(_) => -32601,
            Self::Parse(_) => -32700,
            Self::Internal(_) => -32603,
        }
    }

    /// The reason (`TASK_NOT_FOUND`) an `ErrorInfo` carries.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable(_) => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::VersionNotSupported(_) => "VERSION_NOT_SUPPORTED",
            Self::InvalidParams(_) => "INVALID_PARAMS",
            Self::InvalidRequest(_) | Self::Parse(_) => "INVALID_REQUEST",
            Self::MethodNotFound(_) => "METHOD_NOT_FOUND",
            Self::Internal(_) => "INTERNAL_ERROR",
        }
    }

    /// The HTTP status of an HTTP+JSON answer with this error.
    pub fn http_status(&self) -> u16 {
        match self {
            Self::TaskNotFound | Self::MethodNotFound(_) => 404,
            Self::Internal(_) => 500,
            _ => 400,
        }
    }

    /// The status an HTTP+JSON error names (`NOT_FOUND`).
    pub fn grpc_status(&self) -> &'static str {
        match self {
            Self::TaskNotFound | Self::MethodNotFound(_) => "NOT_FOUND",
            Self::Internal(_) => "INTERNAL",
            Self::InvalidParams(_) | Self::InvalidRequest(_) | Self::Parse(_) => "INVALID_ARGUMENT",
            _ => "FAILED_PRECONDITION",
        }
    }

    /// The HTTP+JSON error body.
    pub fn to_rest(&self) -> Value {
        json!({"error": {
            "code": self.http_status(),
            "status": self.grpc_status(),
            "message": self.to_string(),
            "details": [self.error_info()],
        }})
    }

    /// The JSON-RPC `error` object.
    pub fn to_jsonrpc(&self) -> Value {
        json!({
            "code": self.code(),
            "message": self.to_string(),
            "data": [self.error_info()],
        })
    }

    fn error_info(&self) -> Value {
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason(),
            "domain": "a2a-protocol.org",
            "metadata": {},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_reasons_are_the_specifications() {
        assert_eq!(A2aError::TaskNotFound.code(), -32001);
        assert_eq!(A2aError::VersionNotSupported("0.3".into()).code(), -32009);
        let rpc = A2aError::TaskNotCancelable("completed".into()).to_jsonrpc();
        assert_eq!(rpc["code"], -32002);
        assert_eq!(rpc["data"][0]["reason"], "TASK_NOT_CANCELABLE");
        assert_eq!(A2aError::TaskNotFound.http_status(), 404);
    }
}
