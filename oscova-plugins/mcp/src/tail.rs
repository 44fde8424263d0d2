//! The tail of a stdio server's stderr: what diagnostics and status
//! events show of it.
//!
//! Rules: stderr is read a fixed-size chunk at a time into a tail of the
//! last [`TAIL_BYTES`] bytes (lines play no part, so a server that never
//! writes a newline is held to the same bound), redacted before anyone
//! sees it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use oscova_core::redact::Redactor;
use tokio::io::AsyncReadExt;

/// How much of a server's stderr is kept.
pub const TAIL_BYTES: usize = 4096;

/// The last bytes a process wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    /// Keeps `chunk`'s bytes, dropping the oldest past [`TAIL_BYTES`]. Lines
    /// play no part: a process that never writes a newline is held to the
    /// same bound as one that does.
    fn push(&mut self, chunk: &[u8]) {
        let chunk = chunk
            .get(chunk.len().saturating_sub(TAIL_BYTES)..)
            .unwrap_or(chunk);
        let over = (self.bytes.len() + chunk.len()).saturating_sub(TAIL_BYTES);
        self.bytes.drain(..over.min(self.bytes.len()));
        self.bytes.extend(chunk);
    }

    /// How many bytes are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The tail as text, redacted.
    pub(crate) fn text(&self, redactor: &Redactor) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut raw = Vec::with_capacity(a.len() + b.len());
        raw.extend_from_slice(a);
        raw.extend_from_slice(b);
        let text = String::from_utf8_lossy(&raw);
        redactor.redact(text.trim()).into_owned()
    }
}

/// Reads `from` to its end into `tail`, a fixed-size chunk at a time, so
/// what the host holds of a process's stderr never exceeds the chunk plus
/// [`TAIL_BYTES`], however much it writes and whether or not it writes
/// newlines.
pub(crate) async fn keep_tail(mut from: impl tokio::io::AsyncRead + Unpin, tail: Arc<Mutex<Tail>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let (Ok(mut tail), Some(read)) = (tail.lock(), chunk.get(..n)) {
                    tail.push(read);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};
    use tokio::io::ReadBuf;

    /// `LIMIT` bytes of `x` and never a newline; then nothing more, the
    /// stream still open (as a server that keeps writing would leave it).
    struct Flood {
        read: usize,
        waiting: Arc<AtomicUsize>,
    }

    const LIMIT: usize = 16 << 20;

    impl tokio::io::AsyncRead for Flood {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = buf.remaining().min(LIMIT - self.read);
            if n == 0 {
                self.waiting.store(1, Ordering::SeqCst);
                return Poll::Pending;
            }
            buf.put_slice(&vec![b'x'; n]);
            self.read += n;
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stderr_without_newlines_is_held_to_the_tail_while_it_is_written() {
        let waiting = Arc::new(AtomicUsize::new(0));
        let tail = Arc::new(Mutex::new(Tail::default()));
        let flood = Flood {
            read: 0,
            waiting: waiting.clone(),
        };
        let reader = tokio::spawn(keep_tail(flood, tail.clone()));
        // 16 MiB read and no newline yet: a line reader would hold all of
        // it and show none of it.
        while waiting.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let held = tail.lock().unwrap().len();
        reader.abort();
        assert_eq!(held, TAIL_BYTES, "the tail holds exactly the bound");
        let text = tail.lock().unwrap().text(&Redactor::new());
        assert_eq!(text, "x".repeat(TAIL_BYTES));
    }

    #[test]
    fn the_tail_keeps_the_last_bytes_across_chunks() {
        let mut tail = Tail::default();
        tail.push(b"first line\nsecond");
        tail.push(b" part\n");
        assert_eq!(tail.text(&Redactor::new()), "first line\nsecond part");
        tail.push(&vec![b'a'; TAIL_BYTES - 3]);
        tail.push(b"end");
        assert_eq!(tail.len(), TAIL_BYTES);
        assert_eq!(
            tail.text(&Redactor::new()),
            format!("{}end", "a".repeat(TAIL_BYTES - 3))
        );
        tail.push(&vec![b'b'; 3 * TAIL_BYTES]);
        assert_eq!(tail.text(&Redactor::new()), "b".repeat(TAIL_BYTES));
    }
}
