//! Where the configuration comes from: the process environment and the
//! file.
//!
//! Rules: the file must be a regular file (checked on the opened handle,
//! opened without blocking, so `--config /dev/zero` or a FIFO is refused
//! at once) of at most [`MAX_CONFIG_BYTES`], counted while reading, and
//! UTF-8 text. It holds credentials and the commands `[mcp.servers]`
//! starts, so it is read with `oscova_core::fs::read_trusted`, ssh's rule:
//! the file, and every directory on its way from `/` (a link's and its
//! target's), must be owned by this user or root and writable by nobody
//! else (a sticky directory such as `/tmp` excepted); otherwise the
//! command stops with exit status 2 naming the file or directory and
//! `chmod go-w`. The environment is read with [`std::env::vars_os`], never
//! [`std::env::vars`], which panics on the first variable that is not
//! UTF-8 and so would take every command down with it. Such a variable is
//! skipped with a warning on stderr that names it and never shows its
//! value (the value may be a secret, and it is not text anyway); no
//! `OSCOVA_*` setting can be read from bytes that are not text.

use std::ffi::OsString;
use std::io;
use std::path::Path;

use crate::output::warn;

/// The largest config file read, in bytes: far more than any real one.
pub(super) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The config file's text.
pub(super) fn read_config(path: &Path) -> io::Result<String> {
    let bytes = oscova_core::fs::read_trusted(path, MAX_CONFIG_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// The process environment as text, without the variables whose name or
/// value is not UTF-8 (each one warned about by name).
pub(super) fn process_env() -> Vec<(String, String)> {
    utf8_vars(std::env::vars_os(), |name| {
        warn(&format!(
            "warning: ignoring the environment variable {name}: its value is not UTF-8"
        ));
    })
}

/// `vars` as text; `skipped` is called with the (lossily shown) name of
/// each variable left out.
fn utf8_vars(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    mut skipped: impl FnMut(&str),
) -> Vec<(String, String)> {
    vars.into_iter()
        .filter_map(|(name, value)| match (name.into_string(), value) {
            (Ok(name), value) => match value.into_string() {
                Ok(value) => Some((name, value)),
                Err(_) => {
                    skipped(&name);
                    None
                }
            },
            (Err(name), _) => {
                skipped(&name.to_string_lossy());
                None
            }
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn variables_that_are_not_text_are_skipped_by_name() {
        let vars = [
            (OsString::from("GOOD"), OsString::from("yes")),
            (
                OsString::from("BADVAR"),
                OsString::from_vec(b"s3cr\xffet".to_vec()),
            ),
            (
                OsString::from_vec(b"BAD\xffNAME".to_vec()),
                OsString::from("v"),
            ),
        ];
        let mut skipped = Vec::new();
        let kept = utf8_vars(vars, |name| skipped.push(name.to_owned()));
        assert_eq!(kept, [("GOOD".to_owned(), "yes".to_owned())]);
        assert_eq!(skipped, ["BADVAR", "BAD\u{fffd}NAME"]);
    }
}
