//! One request as the server read it, and the reading.
//!
//! A request is a request line, header lines and a `Content-Length` body.
//! Anything else a client sends is a mistake the test hears about, never a
//! guess: a head that is not UTF-8 or not `name: value` lines, a chunked
//! body, a connection closed inside a request, or bytes past the body sent
//! before the answer (an HTTP/1.1 client without pipelining never does).

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// A request head larger than this is a mistake, not a wait for more.
const MAX_HEAD: usize = 64 * 1024;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target as sent: the path and any query.
    pub path: String,
    /// `HTTP/1.1`, as sent.
    pub version: String,
    /// Names in lowercase, values trimmed, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The `Content-Length` body.
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case), if it was sent.
    ///
    /// # Panics
    ///
    /// If it was sent more than once.
    ///
    /// ```
    /// # use oscova_test_kit::http::Request;
    /// let request = Request {
    ///     method: "GET".into(),
    ///     path: "/".into(),
    ///     version: "HTTP/1.1".into(),
    ///     headers: vec![("authorization".into(), "Bearer k".into())],
    ///     body: Vec::new(),
    /// };
    /// assert_eq!(request.header("Authorization"), Some("Bearer k"));
    /// assert_eq!(request.header("accept"), None);
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut values = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name));
        let value = values.next().map(|(_, v)| v.as_str());
        assert!(values.next().is_none(), "header {name} sent twice");
        value
    }

    /// The body parsed as JSON.
    ///
    /// # Panics
    ///
    /// If it is not JSON.
    ///
    /// ```
    /// # use oscova_test_kit::http::Request;
    /// # let request = Request {
    /// #     method: "POST".into(),
    /// #     path: "/".into(),
    /// #     version: "HTTP/1.1".into(),
    /// #     headers: Vec::new(),
    /// #     body: br#"{"model": "m"}"#.to_vec(),
    /// # };
    /// assert_eq!(request.json()["model"], "m");
    /// ```
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// What reading the next request on a connection came to.
pub(super) enum Read {
    Request(Request),
    /// Closed (or reset) between requests.
    Closed,
    /// A mistake, described; the connection is given up.
    Broken(String),
}

/// Reads the next request; `buf` holds what was read past the last one.
pub(super) async fn read(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Read {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Read::Broken(format!("a request head over {MAX_HEAD} bytes"));
        }
        match fill(stream, buf).await {
            Ok(()) => {}
            Err(_) if buf.is_empty() => return Read::Closed,
            Err(why) => return Read::Broken(format!("{why} inside the request head")),
        }
    };
    let request = match parse_head(&buf[..head_end]) {
        Ok(request) => request,
        Err(mistake) => return Read::Broken(mistake),
    };
    if request.header_named("transfer-encoding").is_some() {
        return Read::Broken(format!(
            "expected a Content-Length body, got {:?}",
            request.headers
        ));
    }
    let length = match request.header_named("content-length").map(str::parse) {
        None => 0,
        Some(Ok(length)) => length,
        Some(Err(_)) => {
            return Read::Broken(format!("a bad Content-Length: {:?}", request.headers));
        }
    };
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if let Err(why) = fill(stream, buf).await {
            return Read::Broken(format!("{why} inside the body"));
        }
    }
    let rest = buf.split_off(body_start + length);
    let body = buf.split_off(body_start);
    *buf = rest;
    if !buf.is_empty() {
        return Read::Broken(format!(
            "more body bytes than Content-Length ({length}): {} more",
            buf.len()
        ));
    }
    Read::Request(Request { body, ..request })
}

/// Reads once more into `buf`; the error says why nothing came.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), String> {
    let mut scratch = [0u8; 16 * 1024];
    match stream.read(&mut scratch).await {
        Ok(0) => Err("connection closed".to_owned()),
        Ok(n) => {
            buf.extend_from_slice(&scratch[..n]);
            Ok(())
        }
        Err(e) => Err(format!("read failed ({e})")),
    }
}

/// The request line and headers; the body is left empty.
fn parse_head(head: &[u8]) -> Result<Request, String> {
    let head =
        std::str::from_utf8(head).map_err(|e| format!("a request head that is not UTF-8: {e}"))?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("a bad request line: {request_line:?}"));
    };
    let headers = lines
        .map(|line| {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("a header line without a colon: {line:?}"))?;
            Ok((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect::<Result<_, String>>()?;
    Ok(Request {
        method: method.to_owned(),
        path: path.to_owned(),
        version: version.to_owned(),
        headers,
        body: Vec::new(),
    })
}

impl Request {
    /// The first value of `name`, without [`Request::header`]'s check for
    /// repeats: the reader must not panic inside the server.
    fn header_named(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}
