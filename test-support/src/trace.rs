//! A tracing layer that records the spans it sees, for tests of the spans
//! the host and the chat loop open.
//!
//! ```
//! use oscova_test_support::trace::Recorder;
//! let recorder = Recorder::default();
//! recorder.record(|| {
//!     let span = tracing::info_span!("execute_tool", gen_ai.tool.name = "demo");
//!     span.in_scope(|| tracing::info!("inside"));
//! });
//! let [span] = &recorder.spans_named("execute_tool")[..] else { panic!() };
//! assert_eq!(span.fields["gen_ai.tool.name"], "demo");
//! assert_eq!(span.events, ["inside"]);
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// A span as the recorder saw it.
#[derive(Debug, Clone, Default)]
pub struct SeenSpan {
    /// The span's name (its metadata name, not `otel.name`).
    pub name: String,
    /// Every field given or recorded, as text (strings without quotes).
    pub fields: BTreeMap<String, String>,
    /// The `message` of each event recorded inside it.
    pub events: Vec<String>,
    /// The name of its parent span, if any.
    pub parent: Option<String>,
    /// Whether it has closed.
    pub closed: bool,
}

/// Records spans while installed (see [`record`](Self::record)).
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<SeenSpan>>>);

impl Recorder {
    /// Runs `f` with this recorder as the thread's subscriber.
    pub fn record<T>(&self, f: impl FnOnce() -> T) -> T {
        let subscriber = tracing_subscriber::registry().with(self.clone());
        tracing::subscriber::with_default(subscriber, f)
    }

    /// Every span named `name` seen so far, in creation order.
    pub fn spans_named(&self, name: &str) -> Vec<SeenSpan> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.name == name)
            .cloned()
            .collect()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        self.0
            .insert(field.name().to_owned(), text.trim_matches('"').to_owned());
    }
}

struct Index(usize);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let mut seen = SeenSpan {
            name: attrs.metadata().name().to_owned(),
            parent: span.parent().map(|p| p.name().to_owned()),
            ..SeenSpan::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        let mut spans = self.0.lock().unwrap();
        spans.push(seen);
        span.extensions_mut().insert(Index(spans.len() - 1));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let index = ctx.span(id).unwrap().extensions().get::<Index>().unwrap().0;
        values.record(&mut Fields(&mut self.0.lock().unwrap()[index].fields));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let index = span.extensions().get::<Index>().unwrap().0;
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        self.0.lock().unwrap()[index].events.push(message);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let index = ctx
            .span(&id)
            .unwrap()
            .extensions()
            .get::<Index>()
            .unwrap()
            .0;
        self.0.lock().unwrap()[index].closed = true;
    }
}
