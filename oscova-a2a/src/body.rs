//! The body of every response the server sends (a leaf: the bindings and
//! the streams both name it, and it names nothing of theirs).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;

/// A response body of the A2A server.
pub type A2aBody = BoxBody<Bytes, Infallible>;
