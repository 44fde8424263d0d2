//! The `llamacpp` provider against the real default model
//! (Qwen2.5-Coder-0.5B-Instruct), installed by
//! `scripts/ensure-llamacpp-model.sh` (`scripts/test.sh` runs it). Every
//! prompt here is bounded (a few dozen tokens out, greedy decoding), so
//! the answers are the model's own and the same on every run.

mod agent;
mod calls;
mod engine;
mod support;
