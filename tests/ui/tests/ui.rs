//! Compile-time behaviour of `#[toolset]`, `#[plugin]` and the builder's
//! factories: what compiles, and the exact diagnostics for what does not.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p
//! oscova-ui-tests --test ui`, then read every one: each error must point at
//! the smallest offending token with a message in the attribute's syntax.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/toolset/pass/*.rs");
    t.compile_fail("tests/ui/toolset/fail/*.rs");
    t.pass("tests/ui/plugin/pass/*.rs");
    t.compile_fail("tests/ui/plugin/fail/*.rs");
    t.compile_fail("tests/ui/factory/fail/*.rs");
}
