//! Nothing but a home for the UI tests in `tests/ui.rs`: what compiles
//! with `#[toolset]`, `#[plugin]` and the builder's factories, and the
//! exact diagnostics for what does not.
