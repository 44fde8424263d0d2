//! A tracing layer that records the spans it sees, for tests of the spans
//! the host and the chat loop open.
//!
//! Rules: one subscriber is installed as the process's global default the
//! first time a recorder records, and routes each span created while a
//! recorder is current on the thread to that recorder (with what is later
//! recorded on it, its events and its closing, on any thread). A global
//! subscriber rather than a per-thread one because tracing caches each
//! call site's interest process-wide: a site first reached by another
//! test's thread with no subscriber could be cached as disabled and then
//! record nothing here, now and then.
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

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};

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

thread_local! {
    /// The recorder spans created on this thread go to.
    static CURRENT: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

static ROUTER: Once = Once::new();

/// Puts the thread's previous recorder back, on panic too.
struct Restore(Option<Recorder>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

impl Recorder {
    /// Runs `f` with this recorder receiving the spans the thread creates.
    ///
    /// # Panics
    ///
    /// When the process already has another global tracing subscriber.
    pub fn record<T>(&self, f: impl FnOnce() -> T) -> T {
        ROUTER.call_once(|| {
            let subscriber = tracing_subscriber::registry().with(Router);
            tracing::subscriber::set_global_default(subscriber)
                .expect("the span recorder needs to be the process's global tracing subscriber");
        });
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        let _restore = Restore(previous);
        f()
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

/// Which recorder a span went to, and where.
struct Seen {
    recorder: Recorder,
    index: usize,
}

impl Seen {
    fn update(&self, f: impl FnOnce(&mut SeenSpan)) {
        if let Some(span) = self.recorder.0.lock().unwrap().get_mut(self.index) {
            f(span);
        }
    }
}

/// The global layer: sends each span to the recorder current where it
/// was created.
struct Router;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Router {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(recorder) = CURRENT.with(|c| c.borrow().clone()) else {
            return;
        };
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut seen = SeenSpan {
            name: attrs.metadata().name().to_owned(),
            parent: span.parent().map(|p| p.name().to_owned()),
            ..SeenSpan::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        let index = {
            let mut spans = recorder.0.lock().unwrap();
            spans.push(seen);
            spans.len() - 1
        };
        span.extensions_mut().insert(Seen { recorder, index });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(seen) = span.extensions().get::<Seen>()
        {
            seen.update(|s| values.record(&mut Fields(&mut s.fields)));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.event_span(event)
            && let Some(seen) = span.extensions().get::<Seen>()
        {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            let message = fields.remove("message").unwrap_or_default();
            seen.update(|s| s.events.push(message));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(seen) = span.extensions().get::<Seen>()
        {
            seen.update(|s| s.closed = true);
        }
    }
}
