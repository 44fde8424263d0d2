// `#[tool]` in all its forms, raw identifiers, and registration.
use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Marked but not configured.
    #[tool]
    pub fn bare(r#type: String) -> String {
        r#type
    }

    /// This doc comment is replaced by the description.
    #[tool(
        name = "Search Records",
        description = "Searches the records index.",
        approval = ToolApprovalMode::Required,
        network = NetworkScope::Internet,
    )]
    pub fn search(query: String) -> String {
        query
    }

    /// Short forms.
    #[tool(approval = NotRequired, network = Local)]
    pub fn r#loop() {}
}

pub struct SearchPlugin;

impl AgentPlugin for SearchPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| SearchToolset);
    }
}

fn main() {
    let tools = SearchToolset::toolset_info().tools();
    assert_eq!(tools[0].name(), "bare");
    assert!(tools[0].input_schema()["properties"]["type"].is_object());
    assert_eq!(tools[1].name(), "search_records");
    assert_eq!(tools[1].display_name(), "Search Records");
    assert_eq!(tools[1].description(), "Searches the records index.");
    assert_eq!(tools[1].approval(), ToolApprovalMode::Required);
    assert_eq!(tools[1].network_scope(), NetworkScope::Internet);
    assert_eq!(tools[2].name(), "loop");
    assert_eq!(tools[2].approval(), ToolApprovalMode::NotRequired);
    assert_eq!(tools[2].network_scope(), NetworkScope::Local);
    let mut builder = AgentPluginBuilder::new();
    SearchPlugin.configure(&mut builder);
    assert_eq!(builder.toolsets().len(), 1);
}
