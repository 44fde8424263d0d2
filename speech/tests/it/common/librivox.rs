//! The read-speech clips of Debian's `pocketsphinx-testdata` and the
//! word-error scoring the WER tests use: `oscova_test_support::librivox`,
//! shared with the plugin's and the CLI's tests.

pub use oscova_test_support::librivox::{Clip, clips, joined, normalised, score};
