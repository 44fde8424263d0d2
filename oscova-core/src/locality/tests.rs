use super::*;

/// (endpoint, expected, reason)
const CASES: &[(&str, bool, &str)] = &[
    // Local: names.
    ("http://localhost", true, "plain localhost"),
    ("http://localhost:8080", true, "localhost with port"),
    ("https://localhost/", true, "https with path"),
    ("ws://localhost:3000/socket", true, "ws scheme"),
    ("wss://LOCALHOST:443", true, "wss, upper-case host"),
    ("HTTP://LocalHost", true, "scheme and host in mixed case"),
    ("http://LOCALHOST.", true, "single trailing dot"),
    ("http://localhost.:8080/x", true, "trailing dot and port"),
    ("http://app.localhost", true, "*.localhost"),
    (
        "http://my-app.dev_1.localhost:5173",
        true,
        "nested *.localhost",
    ),
    ("http://localhost:65535", true, "highest port"),
    ("http://localhost:0", true, "port zero is still this host"),
    // Local: IP literals.
    ("http://127.0.0.1", true, "IPv4 loopback"),
    (
        "http://127.0.0.1:8080/path?q=1#frag",
        true,
        "port, path, query, fragment",
    ),
    ("http://127.255.255.254", true, "anywhere in 127/8"),
    ("http://127.0.0.2:11434", true, "other 127/8 address"),
    ("http://[::1]", true, "IPv6 loopback"),
    ("http://[::1]:8080/v1", true, "IPv6 loopback with port"),
    ("http://[0:0:0:0:0:0:0:1]", true, "long IPv6 spelling"),
    (
        "http://[0000:0000:0000:0000:0000:0000:0000:0001]:80",
        true,
        "zero-padded IPv6",
    ),
    ("http://[::ffff:127.0.0.1]", true, "IPv4-mapped loopback"),
    (
        "http://[::FFFF:7f00:1]",
        true,
        "IPv4-mapped loopback in hex",
    ),
    // Local: scheme-less.
    ("localhost", true, "bare localhost"),
    ("localhost:11434", true, "bare host:port"),
    ("localhost/api", true, "bare host with path"),
    ("127.0.0.1:8080", true, "bare IPv4 with port"),
    ("[::1]:8080", true, "bare IPv6 with port"),
    // Local: userinfo on a local host, and @ outside the authority.
    (
        "http://user:pw@127.0.0.1",
        true,
        "userinfo; the host is 127.0.0.1",
    ),
    ("http://user@localhost:8080", true, "userinfo with port"),
    (
        "http://example.com@[::1]",
        true,
        "userinfo; the host is ::1",
    ),
    ("http://127.0.0.1/@evil.com", true, "@ in the path"),
    ("http://127.0.0.1?x=@evil.com", true, "@ in the query"),
    ("http://localhost#@evil.com", true, "@ in the fragment"),
    // Local: unix and file.
    ("unix:/run/tts.sock", true, "unix socket"),
    ("unix:///run/tts.sock", true, "unix socket, URL form"),
    ("UNIX:/run/x.sock", true, "unix scheme in upper case"),
    ("file:///tmp/x", true, "file URL, empty host"),
    ("file:/tmp/x", true, "file URL without authority"),
    ("file://localhost/tmp/x", true, "file URL, localhost"),
    (
        "file:///C:/models/x.bin",
        true,
        "file URL with a drive letter",
    ),
    // Not local: look-alike names.
    (
        "http://127.0.0.1.example.com",
        false,
        "DNS name starting with 127.0.0.1",
    ),
    (
        "http://localhost.example.com",
        false,
        "DNS name starting with localhost",
    ),
    ("http://localhost..", false, "two trailing dots"),
    ("http://.localhost", false, "empty label"),
    ("http://foo..localhost", false, "empty inner label"),
    ("http://%6c%6fcalhost", false, "percent-encoded host"),
    ("http://localhost%2e", false, "percent-encoded dot"),
    (
        "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}",
        false,
        "fullwidth letters",
    ),
    ("http://localhost\u{3002}", false, "ideographic full stop"),
    ("http://l\u{43e}calhost", false, "Cyrillic o"),
    ("https://api.openai.com", false, "remote host"),
    // Not local: userinfo tricks.
    (
        "http://127.0.0.1@example.com",
        false,
        "userinfo; the host is example.com",
    ),
    (
        "http://localhost@evil.com",
        false,
        "userinfo; the host is evil.com",
    ),
    ("http://a@b@127.0.0.1", false, "two @: parsers disagree"),
    (
        "localhost:8080@evil.com",
        false,
        "scheme-less with userinfo; host evil.com",
    ),
    (
        "http://example.com#@127.0.0.1",
        false,
        "@ in the fragment; host example.com",
    ),
    (
        "http://example.com?@127.0.0.1",
        false,
        "@ in the query; host example.com",
    ),
    // Not local: backslashes.
    (
        "http://example.com\\@127.0.0.1",
        false,
        "WHATWG reads \\ as /",
    ),
    (
        "http://127.0.0.1\\@example.com",
        false,
        "RFC 3986 parsers may see example.com",
    ),
    ("http:\\\\localhost", false, "backslash slashes"),
    // Not local: non-loopback or non-canonical IPv4.
    ("http://0.0.0.0", false, "unspecified IPv4"),
    ("http://10.0.0.5", false, "private IPv4"),
    ("http://192.168.1.2", false, "private IPv4"),
    (
        "http://169.254.169.254",
        false,
        "link-local metadata address",
    ),
    ("http://2130706433", false, "decimal integer IPv4"),
    ("http://0x7f.1", false, "hex short IPv4"),
    ("http://0x7f000001", false, "hex integer IPv4"),
    ("http://0177.0.0.1", false, "octal IPv4"),
    ("http://127.000.000.001", false, "zero-padded IPv4"),
    ("http://127.1", false, "short IPv4"),
    ("http://127.0.1", false, "three-part IPv4"),
    ("http://127.0.0.1.", false, "trailing dot on an IP literal"),
    ("http://127.0.0.256", false, "octet out of range"),
    // Not local: IPv6.
    ("http://[::]", false, "unspecified IPv6"),
    (
        "http://[::127.0.0.1]",
        false,
        "IPv4-compatible, not loopback",
    ),
    ("http://[::1%25lo]", false, "zone identifier"),
    ("http://[fe80::1]", false, "link-local IPv6"),
    ("http://[127.0.0.1]", false, "IPv4 in brackets"),
    ("http://::1", false, "unbracketed IPv6"),
    ("http://[::1", false, "broken bracket"),
    ("http://[::1]x", false, "text after bracket"),
    ("http://[::1]:", false, "empty port after bracket"),
    // Not local: ports.
    ("http://localhost:99999", false, "port out of range"),
    ("http://localhost:65536", false, "port just out of range"),
    ("http://localhost:", false, "empty port"),
    ("http://localhost:+80", false, "signed port"),
    ("http://localhost:80:80", false, "two ports"),
    ("http://localhost:8o", false, "non-digit port"),
    // Not local: empty, whitespace, garbage.
    ("", false, "empty"),
    (" ", false, "space"),
    ("\t\n", false, "whitespace"),
    (" http://localhost", false, "leading space"),
    ("http://localhost ", false, "trailing space"),
    ("http://local\thost", false, "tab inside the host"),
    ("http://localhost\0", false, "NUL byte"),
    ("not a url", false, "garbage"),
    ("http://", false, "no host"),
    ("http://@", false, "empty host after userinfo"),
    // Not local: schemes and slashes.
    ("ftp://127.0.0.1", false, "unsupported scheme"),
    ("gopher://localhost", false, "unsupported scheme"),
    ("http+unix://%2Frun%2Fx.sock/", false, "unsupported scheme"),
    ("javascript:alert(1)", false, "not an endpoint"),
    ("http:localhost", false, "web scheme without //"),
    ("http:///localhost", false, "three slashes"),
    ("//localhost", false, "scheme-relative"),
    // Not local: unix and file edge cases.
    ("unix:", false, "unix without path"),
    ("unix://", false, "unix with slashes only"),
    ("unix:relative.sock", false, "relative unix path"),
    ("file:80", false, "reads as host 'file' port 80"),
    ("file://server/share", false, "remote file share"),
    ("file:////server/share", false, "UNC path on Windows"),
    ("file://localhost", false, "file URL without path"),
    ("file://localhost:80/x", false, "file URL with port"),
    ("file://u@localhost/x", false, "file URL with userinfo"),
    ("file://::1/x", false, "file URL with unbracketed IPv6"),
];

#[test]
fn endpoint_table() {
    assert!(CASES.len() >= 45);
    let failures: Vec<String> = CASES
        .iter()
        .filter(|(endpoint, expected, _)| is_local_endpoint(endpoint) != *expected)
        .map(|(endpoint, expected, reason)| format!("{endpoint:?}: expected {expected} ({reason})"))
        .collect();
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn loopback_ip() {
    let cases: &[(&str, bool)] = &[
        ("127.0.0.1", true),
        ("127.0.0.0", true),
        ("127.255.255.255", true),
        ("126.255.255.255", false),
        ("128.0.0.1", false),
        ("0.0.0.0", false),
        ("10.0.0.1", false),
        ("169.254.169.254", false),
        ("::1", true),
        ("0:0:0:0:0:0:0:1", true),
        ("::ffff:127.0.0.1", true),
        ("::ffff:127.1.2.3", true),
        ("::ffff:7f00:1", true),
        ("::ffff:10.0.0.1", false),
        ("::127.0.0.1", false),
        ("::", false),
        ("::2", false),
        ("fe80::1", false),
        ("2001:db8::1", false),
    ];
    for (text, expected) in cases {
        let ip: IpAddr = match text.parse() {
            Ok(ip) => ip,
            Err(err) => panic!("test address {text:?} does not parse: {err}"),
        };
        assert_eq!(is_loopback_ip(ip), *expected, "{text}");
    }
}

#[test]
fn local_host() {
    let cases: &[(&str, bool)] = &[
        ("localhost", true),
        ("LOCALHOST.", true),
        ("LocalHost", true),
        ("a.localhost", true),
        ("a-b.c_d.localhost.", true),
        ("127.0.0.1", true),
        ("127.1.2.3", true),
        ("::1", true),
        ("[::1]", true),
        ("[0:0:0:0:0:0:0:1]", true),
        ("::ffff:127.0.0.1", true),
        ("[::ffff:127.0.0.1]", true),
        ("", false),
        (".", false),
        (" localhost", false),
        ("localhost:80", false),
        ("localhost..", false),
        (".localhost", false),
        ("a..localhost", false),
        ("a b.localhost", false),
        ("localhost.example.com", false),
        ("example.com", false),
        ("127.0.0.1.", false),
        ("127.0.0.1.example.com", false),
        ("[127.0.0.1]", false),
        ("[::1", false),
        ("::1]", false),
        ("[::1]:80", false),
        ("::", false),
        ("[::]", false),
        ("0.0.0.0", false),
        ("2130706433", false),
        ("0x7f.1", false),
        ("0177.0.0.1", false),
        ("127.1", false),
        ("%6c%6fcalhost", false),
        ("l\u{43e}calhost", false),
    ];
    for (host, expected) in cases {
        assert_eq!(is_local_host(host), *expected, "{host:?}");
    }
}

#[test]
fn long_names() {
    let label = "a".repeat(63);
    assert!(is_local_host(&format!("{label}.localhost")));
    assert!(!is_local_host(&format!("{label}a.localhost")));
    let many = format!("{}localhost", "a.".repeat(130));
    assert!(!is_local_host(&many));
}

/// Deterministic garbage from a linear congruential generator over an
/// alphabet rich in URL delimiters, alone and after common prefixes.
#[test]
fn garbage_never_panics() {
    const ALPHABET: &[u8] = b"@:/[]#?\\.%lochst127x0f:1 \tHTu\xc3\xa9";
    const PREFIXES: &[&str] = &[
        "",
        "http://",
        "https://",
        "ws://",
        "unix:",
        "file:",
        "file://",
        "http://[",
        "http://localhost",
        "http://127.0.0.1",
        "localhost:",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut locals = 0usize;
    for round in 0..4000u64 {
        let len = usize::try_from(next() % 24).unwrap_or(0);
        let bytes: Vec<u8> = (0..len)
            .filter_map(|_| {
                let pick = usize::try_from(next()).unwrap_or(0) % ALPHABET.len();
                ALPHABET.get(pick).copied()
            })
            .collect();
        // Possibly invalid UTF-8 slices are made valid lossily.
        let tail = String::from_utf8_lossy(&bytes);
        let prefix_index = usize::try_from(round).unwrap_or(0) % PREFIXES.len();
        let prefix = PREFIXES.get(prefix_index).copied().unwrap_or("");
        let endpoint = format!("{prefix}{tail}");
        let local = is_local_endpoint(&endpoint);
        let _ = is_local_host(&endpoint);
        let _ = is_local_host(&tail);
        if local {
            locals += 1;
            assert!(
                endpoint.bytes().all(|b| b.is_ascii_graphic()) && !endpoint.contains('\\'),
                "{endpoint:?} judged local"
            );
        }
    }
    // The generator does reach some local endpoints, so the check above runs.
    assert!(locals > 0);
}
