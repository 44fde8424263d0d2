//! The test kit for Oscova plugins and toolsets.
//!
//! It runs your code the way a host does, with a real
//! [`PluginHost`](oscova_core::PluginHost): wire names, argument parsing,
//! approval, redaction and network scopes all apply, so what passes here
//! behaves the same in `oscova` or any other host. It is a dev-dependency;
//! like any test helper it panics, with a message, when something the
//! test relied on is wrong.
//!
//! # A host in a line
//!
//! - [`TestHost::for_toolset`]: one toolset, under the kit's own plugin
//!   (id [`KIT_PLUGIN_ID`], `test`);
//! - [`TestHost::for_plugin`] / [`TestHost::for_plugin_instance`]: one
//!   plugin, created with `Default` or configured by the test;
//! - [`TestHost::builder`] for more: several plugins, a toolset next to
//!   them, fake providers, host services, any other host setting
//!   ([`TestHostBuilder::host`]).
//!
//! Only what the test names is loaded, never every linked plugin, and a
//! publication error (a duplicate wire name, a name too long) fails the
//! build unless [`TestHostBuilder::lenient`] says otherwise.
//!
//! # Users
//!
//! A [`TestUser`] has an id, a time zone, credentials (handed to toolsets
//! through `ctx.credentials()` and redacted from results, as a host does)
//! and a files root: a temporary one that lives as long as the scope, or a
//! directory the test owns.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_test_kit::{TestHost, TestUser};
//!
//! /// Tools that need an API key.
//! pub struct KeyToolset { key: Option<SecretString> }
//!
//! #[toolset]
//! impl KeyToolset {
//!     /// Says whether the user has a key; echoes it, which the host redacts.
//!     pub fn key_status(&self) -> String {
//!         match &self.key {
//!             Some(key) => format!("key {}", key.expose_secret()),
//!             None => "no key".into(),
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let kit = TestHost::for_toolset(|ctx: &AgentPluginContext| KeyToolset {
//!     key: ctx.credentials().get("acme.api_key"),
//! });
//! // The default user has no credentials.
//! assert_eq!(kit.call("key_status", json!({})).await.text(), "no key");
//!
//! let bob = kit.scope_for(
//!     TestUser::new("bob").with_credential("acme.api_key", "sk-bob").with_temp_files(),
//! );
//! assert_eq!(bob.call("key_status", json!({})).await.text(), "key [REDACTED]");
//! assert!(bob.files_root().unwrap().is_dir());
//! # });
//! ```
//!
//! # Calls
//!
//! [`TestScope::call`] takes a wire name or a short one (`echo`, or
//! `example__echo`: the unique tool whose wire name ends with it) and
//! returns a [`Call`]: the [`ToolResult`](oscova_core::ToolResult), the
//! progress the tool reported, and the approvals the host asked for with
//! the answers given. Approvals are answered yes unless the test queued
//! other answers ([`TestHost::answer_approvals`]) or built the host with
//! [`TestHostBuilder::deny_approvals_by_default`].
//! [`TestScope::try_call`] keeps the host's refusals (bad arguments, a
//! denial) apart from the tool's own results. A name that matches no tool,
//! or several, panics at the test's own line, listing the user's tools.
//!
//! # Cancelling a running call
//!
//! [`TestScope::start`] runs a call on a task of its own and hands back a
//! [`RunningCall`]: wait for the tool's progress with
//! [`RunningCall::next_progress`], [`cancel`](RunningCall::cancel) it,
//! and [`finish`](RunningCall::finish) it. The body sees its
//! invocation's cancellation token fire and has a grace period
//! ([`CANCELLATION_GRACE`], or [`TestHostBuilder::cancellation_grace`]) to
//! clean up and answer, so the test sees the tool's own cleanup (its
//! result, its logs, what it undid); a body that ignores the token ends
//! cancelled once the grace period is over.
//!
//! # Fake providers
//!
//! [`FakeModel`], [`FakeRecognizer`] and [`FakeSynthesizer`] answer from a
//! script and record what they were asked; give them to
//! [`TestHostBuilder::model_provider`] and the speech forms, and toolsets
//! find them through `ctx.providers::<dyn ModelProvider>()` like any
//! provider.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ChatMessage, ChatRequest, ModelProvider, ModelProviderConfig};
//! use oscova_test_kit::{FakeModel, TestHost};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let model = FakeModel::new("fake").reply_text("Paris.");
//! let kit = TestHost::builder().model_provider(model.clone()).build();
//!
//! let provider = &kit.host().providers::<dyn ModelProvider>()[0];
//! let config = ModelProviderConfig::new("fake");
//! let messages = [ChatMessage::user("Capital of France?")];
//! let request = ChatRequest {
//!     config: &config,
//!     api_key: None,
//!     model: "any",
//!     messages: &messages,
//!     tools: &[],
//!     stream: None,
//!     cancel: CancellationToken::new(),
//! };
//! let answer = provider.provider().chat(request).await?;
//! assert_eq!(answer.message.content, "Paris.");
//! assert_eq!(model.requests()[0].messages[0].content, "Capital of France?");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # A server to call
//!
//! [`http::TestServer`] is a real HTTP/1.1 server on 127.0.0.1 with a port
//! the system picks; it records every request and answers with what the
//! test's handler returns. `Local` tools reach it; `Internet` tools are
//! refused loopback, as in production, unless the test allows that server
//! with [`TestHostBuilder::allow_internal`] (the kit's `http` feature, on
//! by default), as a host allows a named internal destination.
//!
//! ```
//! use oscova_test_kit::http::{Reply, TestServer};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = TestServer::start(|_| Reply::json(200, json!({"ok": true}))).await;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! # });
//! ```
//!
//! # Logs and questions
//!
//! Every [`Call`] also records the tool's log messages ([`Call::logs`]) and
//! the questions it asked the person ([`Call::questions`]); answers come
//! from [`TestHost::answer_questions`], in order, and a question with no
//! answer left is declined. [`accept`] makes an accepted answer from a
//! JSON object of fields: `accept(json!({"city": "Paris"}))`.

mod call;
mod host;
pub mod http;
mod providers;
mod running;
mod scope;
mod user;

pub use call::{AskedApproval, AskedQuestion, Call, accept};
pub use host::{DEFAULT_USER, KIT_PLUGIN_ID, TestHost, TestHostBuilder};
pub use providers::{FakeModel, FakeRecognizer, FakeSynthesizer, SeenChat};
pub use running::{CANCELLATION_GRACE, RunningCall};
pub use scope::TestScope;
pub use user::TestUser;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
