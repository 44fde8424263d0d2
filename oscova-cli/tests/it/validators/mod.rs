//! Each exported entry checked against its model API's documented rules
//! (the shape and name of the tool declaration, then every schema node),
//! as written out in `oscova_test_support::schema_rules`.

#![allow(unreachable_pub)]

use oscova_agent::profile::SchemaProfile;
use oscova_test_support::schema_rules;
use serde_json::Value;

/// Panics with every broken rule of `profile` in `entry`.
pub fn assert_entry(profile: SchemaProfile, entry: &Value) {
    let problems = match profile {
        SchemaProfile::OpenAi => schema_rules::openai_entry_problems(entry),
        SchemaProfile::Gemini => schema_rules::gemini_entry_problems(entry),
        SchemaProfile::Anthropic => schema_rules::anthropic_entry_problems(entry),
        _ => schema_rules::raw_entry_problems(entry),
    };
    assert!(
        problems.is_empty(),
        "{profile} entry breaks its rules: {problems:#?}\n{}",
        serde_json::to_string_pretty(entry).unwrap_or_default()
    );
}
