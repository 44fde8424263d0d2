//! Static metadata `#[toolset]` emits: input schemas, descriptions, owner
//! and tool segments, and that the macros and the runtime normalise names
//! alike.

use crate::support;

use oscova_core::prelude::*;
use oscova_core::wire::{normalize_segment, owner_segment};
use serde_json::json;
use support::{SearchToolset, info, scope, wire};

#[test]
fn input_schemas_are_closed_objects() {
    let (_, search) = info("search_records");
    let schema = search.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["query"]), "Options are optional");
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<_> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["filters", "limit", "query"]);
    assert_eq!(props["query"]["type"], "string");
    assert_eq!(props["query"]["description"], "Words to look for.");
    assert_eq!(props["limit"]["description"], "At most this many rows.");
    assert_eq!(props["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(
        props["filters"]["description"],
        "Conditions every row must meet."
    );
    // Nested types land in `$defs`, with their own doc comments.
    let filter = &schema["$defs"]["Filter"];
    assert_eq!(filter["type"], "object");
    assert_eq!(filter["required"], json!(["field", "min"]));
    assert_eq!(
        filter["properties"]["field"]["description"],
        "The field to look at."
    );
    assert_eq!(
        props["filters"]["items"]["$ref"], "#/$defs/Filter",
        "{}",
        props["filters"]
    );

    // Injected parameters are not part of the schema.
    let (_, progress) = info("progress");
    assert_eq!(progress.input_schema()["required"], json!(["steps"]));
    let (_, cancel) = info("cancel_own");
    assert_eq!(cancel.input_schema()["properties"], json!({}));
    assert_eq!(cancel.input_schema()["required"], json!([]));

    // The host publishes the same cached schema.
    let (host, _, _) = scope("schemas");
    let published = host.tool(&wire("search_records")).unwrap();
    assert!(std::ptr::eq(published.input_schema(), schema));
}

#[test]
fn descriptions_come_from_the_attribute_or_the_doc_comment() {
    assert_eq!(
        info("search_records").1.description(),
        "Searches the records index."
    );
    assert_eq!(
        info("described").1.description(),
        "Described by the attribute."
    );
    let (_, search) = info("search_records");
    assert_eq!(search.display_name(), "search_records");
    assert_eq!(search.method(), "search");
    assert_eq!(search.approval(), ToolApprovalMode::Default);
    assert_eq!(search.network_scope(), NetworkScope::None);
}

/// Owner normalisation: the type name less one trailing `Toolset`.
pub mod owners {
    use oscova_core::toolset;

    /// An acronym before `Toolset`.
    pub struct HTTPServerToolset;
    #[toolset]
    impl HTTPServerToolset {
        /// A tool.
        pub fn ping() {}
    }

    /// Nothing would be left without `Toolset`, so it is kept.
    pub struct Toolset;
    #[toolset]
    impl Toolset {
        /// A tool.
        pub fn ping() {}
    }

    /// Only one trailing `Toolset` goes.
    pub struct XMLToolsetToolset;
    #[toolset]
    impl XMLToolsetToolset {
        /// A tool.
        pub fn ping() {}
    }

    /// No `Toolset` suffix at all.
    pub struct Weather;
    #[toolset]
    impl Weather {
        /// A tool.
        pub fn ping() {}
    }
}

#[test]
fn owners_are_normalised_type_names() {
    use oscova_core::Toolset as _;
    let cases = [
        (owners::HTTPServerToolset::toolset_info(), "http_server"),
        (
            <owners::Toolset as oscova_core::Toolset>::toolset_info(),
            "toolset",
        ),
        (owners::XMLToolsetToolset::toolset_info(), "xml_toolset"),
        (owners::Weather::toolset_info(), "weather"),
        (SearchToolset::toolset_info(), "search"),
    ];
    for (info, owner) in cases {
        assert_eq!(info.owner(), owner, "{}", info.type_name());
        assert_eq!(info.owner(), owner_segment(info.type_name()));
    }
}

/// Tricky display names; the macro normalises them at compile time.
pub struct NamesToolset;

#[toolset]
impl NamesToolset {
    /// A tool.
    #[tool(name = "HTTPServer")]
    pub fn t0() {}
    /// A tool.
    #[tool(name = "getURLForID")]
    pub fn t1() {}
    /// A tool.
    #[tool(name = "search-records")]
    pub fn t2() {}
    /// A tool.
    #[tool(name = "Search Records v2")]
    pub fn t3() {}
    /// A tool.
    #[tool(name = "  padded   name  ")]
    pub fn t4() {}
    /// A tool.
    #[tool(name = "dots.and..dots")]
    pub fn t5() {}
    /// A tool.
    #[tool(name = "ÜberTool")]
    pub fn t6() {}
    /// A tool.
    #[tool(name = "naïve café")]
    pub fn t7() {}
    /// A tool.
    #[tool(name = "名前 lookup")]
    pub fn t8() {}
    /// A tool.
    #[tool(name = "ABC123Def")]
    pub fn t9() {}
    /// A tool.
    #[tool(name = "x__y")]
    pub fn t10() {}
    /// A tool.
    #[tool(name = "__private__")]
    pub fn t11() {}
    /// A tool.
    #[tool(name = "9lives")]
    pub fn t12() {}
    /// A tool.
    #[tool(name = "tab\there")]
    pub fn t13() {}
    /// A tool.
    #[tool(name = "emoji🙂face")]
    pub fn t14() {}
    /// A tool.
    #[tool(name = "already_snake_case")]
    pub fn t15() {}
    /// A tool.
    #[tool(name = "a1B2c3")]
    pub fn t16() {}
    /// A tool.
    #[tool(name = "MixedUP-case_and.Stuff")]
    pub fn t17() {}
    /// A tool.
    #[tool(name = "X")]
    pub fn t18() {}
    /// A tool.
    pub fn r#type() {}
    /// A tool.
    #[allow(non_snake_case)]
    pub fn CamelMethod() {}
}

#[test]
fn macro_and_runtime_normalisation_agree() {
    let tools = NamesToolset::toolset_info().tools();
    assert_eq!(tools.len(), 21);
    for tool in tools {
        assert_eq!(
            tool.name(),
            normalize_segment(tool.display_name()),
            "display name {:?}",
            tool.display_name()
        );
        assert!(!tool.name().is_empty());
    }
    let names: Vec<_> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names[0], "http_server");
    assert_eq!(names[1], "get_url_for_id");
    assert_eq!(names[3], "search_records_v2");
    assert_eq!(names[4], "padded_name");
    assert_eq!(names[5], "dots_and_dots");
    assert_eq!(names[10], "x_y");
    assert_eq!(names[11], "private");
    assert_eq!(names[19], "type");
    assert_eq!(names[20], "camel_method");
}
