//! `search`: files by glob, lines by text, or both.
//!
//! Rules: a glob with a `/` is matched against the path relative to the
//! search directory (`*` stays within one directory, `**` crosses them);
//! a glob without one is matched against the file name, so `*.md` finds
//! Markdown files at any depth. Globs are [`crate::glob`]'s, whose matching
//! costs at most the pattern's length times the path's. The call's
//! cancellation token is checked between entries and, inside a file,
//! every [`CHECK_EVERY_LINES`] lines. Text is matched per line, case-insensitive
//! unless asked otherwise. Files over the per-file cap, binary files and
//! files with more than one hard link are skipped and counted (a file's
//! size is checked while it is read, not only as the directory reports
//! it), links are not followed, and the walk stops at the result cap or
//! the file cap with `truncated` set. Files are opened from the handle of
//! the directory being walked, never by path.

use oscova_core::CancellationToken;
use oscova_core::ToolResult;
use oscova_core::fs::{RootDir, RootPathError, UserRoot};
use oscova_core::serde_json::json;
use serde::Serialize;

use crate::FileLimits;
use crate::error::FilesError;
use crate::glob::Glob;
use crate::text::{clip, escaped, looks_binary};
use crate::walk::{Entry, Flow, Kind, walk};

/// The longest line excerpt a text match shows.
const EXCERPT_CHARS: usize = 200;

/// How many lines of a file are scanned between two looks at the
/// cancellation token.
const CHECK_EVERY_LINES: usize = 4096;

/// What to search for.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub(crate) path: String,
    pub(crate) pattern: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) case_sensitive: bool,
    pub(crate) max_results: usize,
}

#[derive(Debug, Serialize)]
struct Hit {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

struct Matcher {
    glob: Option<(Glob, bool)>,
    needle: Option<String>,
    case_sensitive: bool,
}

impl Matcher {
    fn new(query: &Query) -> Result<Self, FilesError> {
        let glob = match query
            .pattern
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            None => None,
            Some(p) => {
                let compiled = Glob::new(p).map_err(|reason| FilesError::BadPattern {
                    pattern: p.to_owned(),
                    reason,
                })?;
                Some((compiled, p.contains('/')))
            }
        };
        let needle = query.text.as_deref().filter(|t| !t.is_empty()).map(|t| {
            if query.case_sensitive {
                t.to_owned()
            } else {
                t.to_lowercase()
            }
        });
        if glob.is_none() && needle.is_none() {
            return Err(FilesError::NothingToSearch);
        }
        Ok(Self {
            glob,
            needle,
            case_sensitive: query.case_sensitive,
        })
    }

    fn path_matches(&self, rel_to_base: &str) -> bool {
        let Some((glob, with_dirs)) = &self.glob else {
            return true;
        };
        if *with_dirs {
            glob.matches(rel_to_base)
        } else {
            let name = rel_to_base.rsplit('/').next().unwrap_or(rel_to_base);
            glob.matches(name)
        }
    }

    fn line_matches(&self, line: &str) -> bool {
        match &self.needle {
            None => true,
            Some(n) if self.case_sensitive => line.contains(n.as_str()),
            Some(n) => line.to_lowercase().contains(n.as_str()),
        }
    }
}

/// Runs a search (blocking).
pub(crate) fn run(
    root: &UserRoot,
    limits: &FileLimits,
    query: &Query,
    cancel: &CancellationToken,
) -> Result<ToolResult, FilesError> {
    let matcher = Matcher::new(query)?;
    let base = root.open_dir(&query.path)?;
    let base_rel = base.rel().to_owned();
    let max_results = query.max_results.clamp(1, limits.max_search_results);
    let mut hits = Vec::new();
    let (mut files_seen, mut skipped_large, mut skipped_binary) = (0usize, 0usize, 0usize);
    let mut skipped_linked = 0usize;
    let (mut results_capped, mut files_capped, mut cancelled) = (false, false, false);
    let walked = walk(base, true, cancel, |entry, dir| {
        if entry.kind != Kind::File {
            return Flow::Continue;
        }
        files_seen += 1;
        if files_seen > limits.max_search_files {
            files_capped = true;
            return Flow::Stop;
        }
        if !matcher.path_matches(&entry.below) {
            return Flow::Continue;
        }
        if matcher.needle.is_none() {
            hits.push(Hit {
                path: entry.rel.clone(),
                line: None,
                text: None,
                size: entry.size,
            });
        } else if entry.size.unwrap_or(0) > limits.max_search_file_bytes {
            skipped_large += 1;
        } else {
            let room = max_results - hits.len();
            match search_file(
                dir,
                entry,
                &matcher,
                room,
                limits.max_search_file_bytes,
                cancel,
            ) {
                FileOutcome::Cancelled => {
                    cancelled = true;
                    return Flow::Stop;
                }
                FileOutcome::Binary => skipped_binary += 1,
                FileOutcome::Large => skipped_large += 1,
                FileOutcome::Linked => skipped_linked += 1,
                FileOutcome::Lines(lines) => {
                    hits.extend(lines.into_iter().map(|(line, text)| Hit {
                        path: entry.rel.clone(),
                        line: Some(line),
                        text: Some(text),
                        size: None,
                    }));
                }
            }
        }
        if hits.len() >= max_results {
            results_capped = true;
            Flow::Stop
        } else {
            Flow::Continue
        }
    })?;
    if cancelled {
        return Err(FilesError::Cancelled);
    }
    let stopped = match (walked.stopped, results_capped, files_capped) {
        (true, true, _) => Some(format!(
            "stopped at {max_results} results; there may be more: narrow the search or raise max_results"
        )),
        (true, _, true) => Some(format!(
            "stopped after scanning {} files; search a smaller directory with `path`",
            limits.max_search_files
        )),
        _ => None,
    };
    let skipped = Skipped {
        large: skipped_large,
        binary: skipped_binary,
        hard_linked: skipped_linked,
        unreadable_dirs: walked.unreadable,
    };
    Ok(render(query, &base_rel, &hits, stopped, &skipped))
}

enum FileOutcome {
    Cancelled,
    Binary,
    Large,
    Linked,
    Lines(Vec<(usize, String)>),
}

/// Looks for the matcher's text in the file `entry` of `dir`, reading at
/// most `cap` bytes of it.
fn search_file(
    dir: &RootDir,
    entry: &Entry,
    matcher: &Matcher,
    room: usize,
    cap: u64,
    cancel: &CancellationToken,
) -> FileOutcome {
    let bytes = match dir.open_file(&entry.name).and_then(|f| f.read_capped(cap)) {
        Ok(bytes) => bytes,
        Err(RootPathError::TooLarge { .. }) => return FileOutcome::Large,
        Err(RootPathError::HardLinked { .. }) => return FileOutcome::Linked,
        // Gone, swapped for something else, unreadable: nothing to find.
        Err(_) => return FileOutcome::Lines(Vec::new()),
    };
    if looks_binary(&bytes) {
        return FileOutcome::Binary;
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i % CHECK_EVERY_LINES == 0 && cancel.is_cancelled() {
            return FileOutcome::Cancelled;
        }
        if found.len() >= room {
            break;
        }
        if matcher.line_matches(line) {
            found.push((i + 1, clip(line, EXCERPT_CHARS)));
        }
    }
    FileOutcome::Lines(found)
}

#[derive(Debug, Serialize)]
struct Skipped {
    large: usize,
    binary: usize,
    hard_linked: usize,
    unreadable_dirs: usize,
}

fn render(
    query: &Query,
    base: &str,
    hits: &[Hit],
    stopped: Option<String>,
    skipped: &Skipped,
) -> ToolResult {
    let what = match (&query.pattern, &query.text) {
        (Some(p), Some(t)) => format!("files matching `{p}` containing {t:?}"),
        (Some(p), None) => format!("files matching `{p}`"),
        (None, Some(t)) => format!("lines containing {t:?}"),
        (None, None) => "files".to_owned(),
    };
    let under = if base.is_empty() {
        ".".to_owned()
    } else {
        escaped(base).into_owned()
    };
    let mut content = if hits.is_empty() {
        format!("No {what} under `{under}`.")
    } else {
        format!("{} result(s) for {what} under `{under}`:", hits.len())
    };
    for hit in hits {
        content.push('\n');
        match (&hit.line, &hit.text) {
            (Some(line), Some(text)) => {
                content.push_str(&format!("{}:{line}: {text}", escaped(&hit.path)));
            }
            _ => content.push_str(&escaped(&hit.path)),
        }
    }
    if let Some(stopped) = &stopped {
        content.push_str(&format!("\n[{stopped}]"));
    }
    if skipped.large + skipped.binary > 0 {
        content.push_str(&format!(
            "\n[skipped {} file(s) over the size cap and {} binary file(s)]",
            skipped.large, skipped.binary
        ));
    }
    if skipped.hard_linked > 0 {
        content.push_str(&format!(
            "\n[skipped {} file(s) with more than one hard link]",
            skipped.hard_linked
        ));
    }
    ToolResult::text(content).with_details(json!({
        "path": base,
        "results": hits,
        "truncated": stopped.is_some(),
        "skipped": skipped,
    }))
}

#[cfg(test)]
mod tests {
    use oscova_core::fs::UserRoot;

    use super::*;

    fn query(text: &str) -> Query {
        Query {
            path: String::new(),
            pattern: None,
            text: Some(text.to_owned()),
            case_sensitive: false,
            max_results: 10,
        }
    }

    /// A cancelled call stops inside a file, not only between entries.
    #[test]
    fn a_file_scan_watches_the_cancellation_token() {
        let base = tempfile::tempdir().unwrap();
        std::fs::write(base.path().join("big.txt"), "no match\n".repeat(100_000)).unwrap();
        let dir = UserRoot::new(base.path()).open_dir("").unwrap();
        let entries = dir
            .entries()
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let entry = Entry {
            name: entries[0].name().to_owned(),
            rel: "big.txt".into(),
            below: "big.txt".into(),
            kind: Kind::File,
            size: Some(entries[0].size()),
        };
        let matcher = Matcher::new(&query("needle")).unwrap();
        let cancel = CancellationToken::new();
        let outcome = search_file(&dir, &entry, &matcher, 10, 1 << 20, &cancel);
        assert!(matches!(outcome, FileOutcome::Lines(ref l) if l.is_empty()));
        cancel.cancel();
        let outcome = search_file(&dir, &entry, &matcher, 10, 1 << 20, &cancel);
        assert!(matches!(outcome, FileOutcome::Cancelled));
        let err = run(
            &UserRoot::new(base.path()),
            &FileLimits::default(),
            &query("x"),
            &cancel,
        );
        assert!(matches!(err, Err(FilesError::Cancelled)));
    }
}
