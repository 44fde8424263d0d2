//! Which IP addresses are on the public Internet, for the `Internet` scope.
//!
//! Rules: an address is public unless it falls in a range that is not
//! globally reachable or that names this machine, its links or its
//! operator's networks. Every range is listed in [`non_public`] with the
//! reason a refusal gives. IPv4 addresses carried inside IPv6 (mapped
//! `::ffff:a.b.c.d`, the deprecated compatible `::a.b.c.d`, NAT64
//! `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::`) are judged by the IPv4
//! address they carry, since that is where a connection may end up; the
//! compatible form and the local-use NAT64 prefix are refused outright.
//! Outside these, only global unicast (`2000::/3`) is public in IPv6:
//! everything else there is reserved, local or multicast. The list errs on
//! the side of refusing: a range that is merely unusual (benchmarking,
//! documentation, the IETF's special-purpose blocks) is refused too, since
//! no public service lives there.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not an address on the public Internet, or `None` when it is.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

/// `(first octets as a 32-bit prefix, prefix length, reason)`, checked in
/// order; the cloud metadata addresses come before the ranges holding them
/// so the refusal says "metadata".
const V4_RANGES: &[(u32, u8, &str)] = &[
    (0xa9fe_a9fe, 32, "a cloud metadata address"), // 169.254.169.254
    (0xa9fe_aa02, 32, "a cloud metadata address"), // 169.254.170.2 (containers)
    (0x6464_64c8, 32, "a cloud metadata address"), // 100.100.100.200
    (
        0x0000_0000,
        8,
        "in 0.0.0.0/8 (this network; the unspecified address)",
    ),
    (0x0a00_0000, 8, "a private address (10.0.0.0/8)"),
    (
        0x6440_0000,
        10,
        "a shared address (100.64.0.0/10, carrier-grade NAT)",
    ),
    (0x7f00_0000, 8, "a loopback address (127.0.0.0/8)"),
    (0xa9fe_0000, 16, "a link-local address (169.254.0.0/16)"),
    (0xac10_0000, 12, "a private address (172.16.0.0/12)"),
    (0xc000_0000, 24, "an IETF protocol address (192.0.0.0/24)"),
    (0xc000_0200, 24, "a documentation address (192.0.2.0/24)"),
    (
        0xc058_6300,
        24,
        "a deprecated relay address (192.88.99.0/24)",
    ),
    (0xc0a8_0000, 16, "a private address (192.168.0.0/16)"),
    (0xc612_0000, 15, "a benchmarking address (198.18.0.0/15)"),
    (0xc633_6400, 24, "a documentation address (198.51.100.0/24)"),
    (0xcb00_7100, 24, "a documentation address (203.0.113.0/24)"),
    (0xe000_0000, 4, "a multicast address (224.0.0.0/4)"),
    (0xffff_ffff, 32, "the broadcast address"),
    (0xf000_0000, 4, "a reserved address (240.0.0.0/4)"),
];

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_RANGES
        .iter()
        .find(|(prefix, len, _)| in_prefix(bits, *prefix, *len))
        .map(|(_, _, why)| *why)
}

fn in_prefix(bits: u32, prefix: u32, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    bits & mask == prefix & mask
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("the unspecified address (::)");
    }
    if ip.is_loopback() {
        return Some("a loopback address (::1)");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4).map(|_| "an IPv4-mapped form of an address that is not public");
    }
    if s[..6] == [0; 6] {
        return Some("an IPv4-compatible address (::/96, deprecated)");
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
        return non_public_v4(v4).map(|_| "a NAT64 form of an address that is not public");
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        return Some("a local-use NAT64 address (64:ff9b:1::/48)");
    }
    if s == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] {
        return Some("a cloud metadata address");
    }
    // Only global unicast is public; what lies outside it is link-local
    // (fe80::/10), unique-local (fc00::/7), multicast (ff00::/8), the old
    // site-local block or simply unassigned.
    if s[0] & 0xe000 != 0x2000 {
        return Some(match s[0] {
            0xfe80..=0xfebf => "a link-local address (fe80::/10)",
            0xfc00..=0xfdff => "a unique-local address (fc00::/7)",
            0xff00..=0xffff => "a multicast address (ff00::/8)",
            _ => "outside global unicast (2000::/3)",
        });
    }
    if s[0] == 0x2001 && s[1] == 0x0db8 {
        return Some("a documentation address (2001:db8::/32)");
    }
    if s[0] == 0x2001 && s[1] < 0x0200 {
        return Some("an IETF special-purpose address (2001::/23)");
    }
    if s[0] == 0x3fff && s[1] < 0x1000 {
        return Some("a documentation address (3fff::/20)");
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2]));
        return non_public_v4(v4).map(|_| "a 6to4 form of an address that is not public");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (address, public)
    const CASES: &[(&str, bool)] = &[
        // Public.
        ("1.1.1.1", true),
        ("8.8.8.8", true),
        ("93.184.215.14", true),
        ("100.63.255.255", true),
        ("100.128.0.0", true),
        ("172.15.255.255", true),
        ("172.32.0.0", true),
        ("192.0.1.255", true),
        ("192.169.0.1", true),
        ("198.17.255.255", true),
        ("198.20.0.0", true),
        ("223.255.255.255", true),
        ("2606:4700:4700::1111", true),
        ("2a00:1450:4001:82a::200e", true),
        ("::ffff:8.8.8.8", true),
        ("64:ff9b::808:808", true),
        ("2002:808:808::1", true),
        ("2001:200::1", true),
        // IPv4, not public.
        ("0.0.0.0", false),
        ("0.1.2.3", false),
        ("10.0.0.5", false),
        ("10.255.255.255", false),
        ("100.64.0.1", false),
        ("100.127.255.255", false),
        ("100.100.100.200", false),
        ("127.0.0.1", false),
        ("127.255.255.254", false),
        ("169.254.0.1", false),
        ("169.254.169.254", false),
        ("169.254.170.2", false),
        ("172.16.0.1", false),
        ("172.31.255.255", false),
        ("192.0.0.8", false),
        ("192.0.2.1", false),
        ("192.88.99.1", false),
        ("192.168.1.2", false),
        ("198.18.0.1", false),
        ("198.19.255.255", false),
        ("198.51.100.7", false),
        ("203.0.113.9", false),
        ("224.0.0.1", false),
        ("239.255.255.250", false),
        ("240.0.0.1", false),
        ("255.255.255.255", false),
        // IPv6, not public.
        ("::", false),
        ("::1", false),
        ("::ffff:127.0.0.1", false),
        ("::ffff:10.0.0.5", false),
        ("::ffff:169.254.169.254", false),
        ("::127.0.0.1", false),
        ("::8.8.8.8", false),
        ("64:ff9b::7f00:1", false),
        ("64:ff9b::a9fe:a9fe", false),
        ("64:ff9b:1::808:808", false),
        ("2002:7f00:1::", false),
        ("2002:a00:5::1", false),
        ("fe80::1", false),
        ("febf::1", false),
        ("fec0::1", false),
        ("fc00::1", false),
        ("fd00:ec2::254", false),
        ("fd12:3456::1", false),
        ("ff02::1", false),
        ("100::1", false),
        ("2001:db8::1", false),
        ("2001::1", false),
        ("2001:10::1", false),
        ("3fff::1", false),
        ("4000::1", false),
    ];

    #[test]
    fn address_table() {
        let failures: Vec<String> = CASES
            .iter()
            .filter_map(|(text, public)| {
                let ip: IpAddr = match text.parse() {
                    Ok(ip) => ip,
                    Err(e) => return Some(format!("{text}: does not parse ({e})")),
                };
                let why = non_public(ip);
                (why.is_none() != *public)
                    .then(|| format!("{text}: expected public={public}, got {why:?}"))
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn metadata_addresses_say_so() {
        for text in ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"] {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(non_public(ip), Some("a cloud metadata address"), "{text}");
        }
    }
}
