// Every way to misspell #[toolset] and #[tool] that is not covered by a
// file of its own.
use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset(strict)]
impl SearchToolset {
    /// A key without a value.
    #[tool(name)]
    pub fn a() {}

    /// A name that is not a string.
    #[tool(name = search)]
    pub fn b() {}

    /// The same key twice.
    #[tool(description = "one", description = "two")]
    pub fn c() {}

    /// The name-value form.
    #[tool = "d"]
    pub fn d() {}

    /// A variant of the wrong enum.
    #[tool(approval = NetworkScope::Internet)]
    pub fn e() {}

    /// A string where a variant goes.
    #[tool(approval = "not_required")]
    pub fn f() {}

    /// Not public, so not a tool.
    #[tool(name = "helper")]
    fn g() {}

    /// Visible in the crate only, so not a tool.
    #[tool]
    pub(crate) fn h() {}

    /// Not a method at all.
    #[tool]
    pub const LIMIT: u32 = 10;

    /// A missing comma.
    #[tool(name = "i" approval = Required)]
    pub fn i() {}
}

fn main() {}
