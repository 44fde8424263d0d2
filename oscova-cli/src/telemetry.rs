//! Traces over OTLP/HTTP (feature `otel`, on in the `oscova` binary).
//!
//! Nothing happens unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: then the CLI installs a
//! tracing subscriber whose OpenTelemetry layer turns Oscova's spans into
//! OTLP spans and exports them in batches to `{endpoint}/v1/traces`. The
//! exporter reads the standard variables itself: `OTEL_EXPORTER_OTLP_PROTOCOL`
//! (`http/protobuf`, the default, or `http/json`), `..._HEADERS`,
//! `..._TIMEOUT`; `OTEL_SERVICE_NAME` names the service (default `oscova`).
//!
//! The spans follow OpenTelemetry's GenAI and MCP conventions: one
//! `execute_tool {name}` per tool call (from `oscova-core`), one
//! `chat {model}` per model call (from `oscova-agent`'s chat loop), one per
//! MCP request; an MCP request's `_meta.traceparent` continues the client's
//! trace, through the W3C trace-context propagator installed here.
//!
//! **Redaction is fixed here, at the exporter.** [`RedactingExporter`]
//! passes every text a span carries through the host's redactor before
//! any byte leaves the process: its name, attribute keys and string
//! values (arrays included), event names and attributes, each link's
//! attributes and trace state, its own trace state (which a client's
//! `_meta.tracestate` sets, and every child span inherits), the status
//! message, and the resource's attributes. So a secret the host knows
//! cannot reach the collector, whatever a client, tool or library put
//! into a span. A trace-state member whose key held a secret is dropped
//! (a key cannot carry `[REDACTED]`); one whose value did keeps the
//! redacted value; a trace state still showing a secret after that is
//! dropped whole. What is left of a span is ids, times, kinds, flags and
//! numbers.

use std::borrow::Cow;
use std::time::Duration;

use opentelemetry::trace::{SpanContext, Status, TraceState, TracerProvider as _};
use opentelemetry::{Key, KeyValue, StringValue, Value};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use oscova_core::redact::Redactor;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The variables that switch the exporter on.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// How long one export may take, response included, unless
/// `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise (the exporter's own limit
/// applies on top).
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// Exports traces while alive; dropping it flushes what is buffered and
/// shuts the exporter down.
pub(crate) struct Telemetry {
    provider: SdkTracerProvider,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("oscova: could not flush traces: {e}");
        }
    }
}

/// Installs the exporter when an OTLP endpoint is configured.
///
/// Must run outside any tokio runtime: the exporter's blocking HTTP client
/// lives on the batch processor's own thread. A bad configuration is one
/// line on stderr, never a failed command.
pub(crate) fn init(redactor: &Redactor) -> Option<Telemetry> {
    let configured = ENDPOINT_VARS
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !configured {
        return None;
    }
    match build(redactor) {
        Ok(telemetry) => Some(telemetry),
        Err(e) => {
            eprintln!("oscova: traces are not exported: {e}");
            None
        }
    }
}

fn build(redactor: &Redactor) -> Result<Telemetry, Box<dyn std::error::Error>> {
    use opentelemetry_otlp::WithHttpConfig as _;

    let http = reqwest::blocking::Client::builder()
        .timeout(HTTP_TIMEOUT)
        .build()?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(BlockingHttp(http))
        .build()?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("oscova");
    }
    let provider = SdkTracerProvider::builder()
        .with_resource(resource.build())
        .with_batch_exporter(RedactingExporter {
            inner: exporter,
            redactor: redactor.clone(),
        })
        .build();
    let tracer = provider.tracer("oscova");
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer))
        .with(oscova_spans())
        .try_init()?;
    Ok(Telemetry { provider })
}

/// The spans and events worth exporting: Oscova's own crates and the
/// plugins' (whose spans and logs the host opens), at `info` and above;
/// not every HTTP library's internal spans.
fn oscova_spans() -> tracing_subscriber::filter::FilterFn {
    tracing_subscriber::filter::filter_fn(|meta| {
        *meta.level() <= tracing::Level::INFO
            && (meta.target().starts_with("oscova") || meta.target().starts_with("example_"))
    })
}

/// An OTLP HTTP client on reqwest's blocking client, the one the rest of
/// the workspace builds (version, TLS stack), run on the batch processor's
/// thread.
#[derive(Debug)]
struct BlockingHttp(reqwest::blocking::Client);

#[async_trait::async_trait]
impl HttpClient for BlockingHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let mut outgoing = self
            .0
            .request(parts.method, parts.uri.to_string())
            .body(body.to_vec());
        for (name, value) in &parts.headers {
            outgoing = outgoing.header(name, value);
        }
        let reply = outgoing.send()?;
        let mut response = Response::builder().status(reply.status());
        for (name, value) in reply.headers() {
            response = response.header(name, value);
        }
        Ok(response.body(reply.bytes()?)?)
    }
}

/// A span exporter that redacts every text a span carries, then hands the
/// batch to `inner`.
#[derive(Debug)]
pub(crate) struct RedactingExporter<E> {
    inner: E,
    redactor: Redactor,
}

impl<E: SpanExporter> SpanExporter for RedactingExporter<E> {
    fn export(
        &self,
        mut batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        for span in &mut batch {
            redact_span(&self.redactor, span);
        }
        self.inner.export(batch)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        let mut attributes: Vec<KeyValue> = resource
            .iter()
            .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
            .collect();
        if self.redactor.is_empty() || !redact_attributes(&self.redactor, &mut attributes) {
            self.inner.set_resource(resource);
            return;
        }
        let builder = Resource::builder_empty();
        let clean = match resource.schema_url() {
            Some(url) => builder.with_schema_url(attributes, url.to_owned()),
            None => builder.with_attributes(attributes),
        };
        self.inner.set_resource(&clean.build());
    }
}

fn redact_span(redactor: &Redactor, span: &mut SpanData) {
    if redactor.is_empty() {
        return;
    }
    if let Cow::Owned(clean) = redactor.redact(&span.name) {
        span.name = Cow::Owned(clean);
    }
    redact_attributes(redactor, &mut span.attributes);
    for event in span.events.events.iter_mut() {
        if let Cow::Owned(clean) = redactor.redact(&event.name) {
            event.name = Cow::Owned(clean);
        }
        redact_attributes(redactor, &mut event.attributes);
    }
    for link in span.links.links.iter_mut() {
        redact_attributes(redactor, &mut link.attributes);
        redact_context(redactor, &mut link.span_context);
    }
    redact_context(redactor, &mut span.span_context);
    if let Status::Error { description } = &mut span.status
        && let Cow::Owned(clean) = redactor.redact(description)
    {
        *description = Cow::Owned(clean);
    }
}

/// Redacts a span context's trace state (see the module docs).
fn redact_context(redactor: &Redactor, context: &mut SpanContext) {
    let header = context.trace_state().header();
    if matches!(redactor.redact(&header), Cow::Borrowed(_)) {
        return;
    }
    let members = header.split(',').filter_map(|member| {
        let (key, value) = member.split_once('=')?;
        let Cow::Borrowed(key) = redactor.redact(key) else {
            return None;
        };
        Some((key.to_owned(), redactor.redact(value).into_owned()))
    });
    let state = TraceState::from_key_value(members)
        .ok()
        .filter(|state| matches!(redactor.redact(&state.header()), Cow::Borrowed(_)))
        .unwrap_or(TraceState::NONE);
    *context = SpanContext::new(
        context.trace_id(),
        context.span_id(),
        context.trace_flags(),
        context.is_remote(),
        state,
    );
}

/// Redacts keys and string values; says whether anything changed.
fn redact_attributes(redactor: &Redactor, attributes: &mut [KeyValue]) -> bool {
    let mut changed = false;
    for attribute in attributes {
        if let Cow::Owned(clean) = redactor.redact(attribute.key.as_str()) {
            attribute.key = Key::from(clean);
            changed = true;
        }
        let clean = match &attribute.value {
            Value::String(text) => match redactor.redact(text.as_str()) {
                Cow::Owned(clean) => Value::String(StringValue::from(clean)),
                Cow::Borrowed(_) => continue,
            },
            Value::Array(opentelemetry::Array::String(items)) => {
                if items
                    .iter()
                    .all(|item| matches!(redactor.redact(item.as_str()), Cow::Borrowed(_)))
                {
                    continue;
                }
                let items = items
                    .iter()
                    .map(|item| StringValue::from(redactor.redact(item.as_str()).into_owned()))
                    .collect();
                Value::Array(opentelemetry::Array::String(items))
            }
            _ => continue,
        };
        attribute.value = clean;
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use opentelemetry::trace::{Span as _, TraceContextExt as _, Tracer as _};

    use super::*;

    const SECRET: &str = "sk-live-0123456789";

    /// Keeps every span it is given.
    #[derive(Debug, Clone, Default)]
    struct Recording(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Recording {
        fn export(
            &self,
            batch: Vec<SpanData>,
        ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
            self.0.lock().unwrap().extend(batch);
            std::future::ready(Ok(()))
        }
    }

    #[test]
    fn no_secret_the_host_knows_leaves_in_a_span() {
        let redactor = Redactor::new();
        redactor.add(SECRET);
        let recording = Recording::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(RedactingExporter {
                inner: recording.clone(),
                redactor,
            })
            .build();
        let tracer = provider.tracer("test");
        // A client's trace state, as a remote parent every span inherits.
        let remote = SpanContext::new(
            opentelemetry::trace::TraceId::from(7_u128),
            opentelemetry::trace::SpanId::from(9_u64),
            opentelemetry::trace::TraceFlags::SAMPLED,
            true,
            format!("vendor={SECRET},{SECRET}=x,other=kept")
                .parse()
                .unwrap_or_else(|_| format!("vendor={SECRET},other=kept").parse().unwrap()),
        );
        let parent = opentelemetry::Context::new().with_remote_span_context(remote.clone());
        let mut span = tracer.start_with_context(format!("execute_tool {SECRET}"), &parent);
        span.add_link(remote, vec![KeyValue::new(format!("why {SECRET}"), SECRET)]);
        span.set_attribute(KeyValue::new("note", format!("token={SECRET}")));
        span.set_attribute(KeyValue::new("count", 3_i64));
        span.set_attribute(KeyValue::new(
            "list",
            Value::Array(vec![StringValue::from(SECRET.to_owned())].into()),
        ));
        span.add_event(
            format!("log {SECRET}"),
            vec![KeyValue::new("message", format!("saw {SECRET}"))],
        );
        span.set_status(Status::error(format!("failed with {SECRET}")));
        span.end();
        provider.shutdown().unwrap();

        let spans = recording.0.lock().unwrap();
        let [span] = &spans[..] else {
            panic!("{spans:?}")
        };
        let everything = format!("{span:?}");
        assert!(!everything.contains(SECRET), "{everything}");
        assert_eq!(span.name, "execute_tool [REDACTED]");
        assert!(
            span.attributes
                .contains(&KeyValue::new("note", "token=[REDACTED]"))
        );
        assert!(span.attributes.contains(&KeyValue::new("count", 3_i64)));
        assert_eq!(span.events.events[0].name, "log [REDACTED]");
        assert_eq!(
            span.events.events[0].attributes,
            [KeyValue::new("message", "saw [REDACTED]")]
        );
        assert_eq!(span.status, Status::error("failed with [REDACTED]"));
        assert_eq!(
            span.span_context.trace_state().header(),
            "vendor=[REDACTED],other=kept"
        );
        let link = &span.links.links[0];
        assert_eq!(
            link.span_context.trace_state().header(),
            "vendor=[REDACTED],other=kept"
        );
        assert_eq!(
            link.attributes,
            [KeyValue::new("why [REDACTED]", "[REDACTED]")]
        );
    }
}
