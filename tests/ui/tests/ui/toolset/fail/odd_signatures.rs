// Signatures a tool cannot have, each reported on the token at fault.
use oscova_core::prelude::*;

pub struct OddToolset;

#[toolset]
impl OddToolset {
    /// Unsafe.
    pub unsafe fn a() {}

    /// Foreign ABI.
    pub extern "C" fn b() {}

    /// A pattern instead of a name.
    pub fn c((x, y): (u32, u32)) -> u32 {
        x + y
    }

    /// A by-reference binding.
    pub fn d(ref name: String) -> String {
        name.clone()
    }

    /// A reserved name.
    pub fn e(__oscova_index: u32) -> u32 {
        __oscova_index
    }

    /// The invocation by value.
    pub fn f(invocation: ToolInvocation) -> String {
        invocation.user_id().to_owned()
    }

    /// The invocation, mutably.
    pub fn g(invocation: &mut ToolInvocation) -> String {
        invocation.user_id().to_owned()
    }

    /// A boxed receiver.
    pub fn h(self: Box<Self>) {}
}

#[allow(non_camel_case_types)]
pub struct __;

#[toolset]
impl __ {
    /// The owner normalises to nothing.
    pub fn ping() {}
}

fn main() {}
