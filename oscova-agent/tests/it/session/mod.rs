//! Sessions: the conformance suite against every store, the context as pi
//! builds it, and two real processes writing one session.

mod compaction;
mod conformance;
mod group_commit;
mod pi_interop;
mod private;
mod processes;
mod stores;
mod view;
