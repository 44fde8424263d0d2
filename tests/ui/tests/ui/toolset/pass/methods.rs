// Sync and async tools, with and without `&self`, optional and documented
// parameters, and the two injected parameters (`&ToolInvocation` with or
// without its lifetime spelled out).
use oscova_core::prelude::*;

pub struct WeatherToolset {
    unit: String,
}

#[toolset]
impl WeatherToolset {
    /// Adds two numbers.
    pub fn add(a: i64, b: i64) -> i64 {
        a + b
    }

    /// Today's forecast for a city.
    pub fn forecast(
        &self,
        /// The city to look up.
        city: String,
        /// How many days ahead; today when left out.
        days: Option<u8>,
    ) -> String {
        format!("{city} +{}d in {}", days.unwrap_or(0), self.unit)
    }

    /// Waits a little, reporting progress.
    pub async fn slow(&self, invocation: &ToolInvocation, cancel: CancellationToken) -> bool {
        invocation.report(ToolProgress::message("waiting"));
        cancel.is_cancelled()
    }

    /// The handle written out in full, lifetime and path: both accepted.
    pub async fn who(invocation: &oscova_core::ToolInvocation<'_>) -> String {
        invocation.user_id().to_owned()
    }

    /// A synchronous tool taking the handle.
    pub fn call_id(invocation: &ToolInvocation) -> u64 {
        invocation.call_id().get()
    }

    /// An async associated function.
    pub async fn ping(
        /// Anything.
        payload: Option<Vec<String>>,
    ) -> usize {
        payload.map_or(0, |p| p.len())
    }

    fn helper(&self) -> usize {
        self.unit.len()
    }
}

fn main() {
    let info = WeatherToolset::toolset_info();
    assert_eq!(info.owner(), "weather");
    let names: Vec<_> = info.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["add", "forecast", "slow", "who", "call_id", "ping"]);
    let asynchronous: Vec<_> = info.tools().iter().map(|t| t.is_async()).collect();
    assert_eq!(asynchronous, [false, false, true, true, false, true]);
    let forecast = info.tools()[1].input_schema();
    assert_eq!(forecast["required"], oscova_core::serde_json::json!(["city"]));
    assert_eq!(
        forecast["properties"]["city"]["description"],
        "The city to look up."
    );
    let slow = info.tools()[2].input_schema();
    assert_eq!(slow["properties"], oscova_core::serde_json::json!({}));
    let _ = WeatherToolset { unit: "C".into() }.helper();
}
