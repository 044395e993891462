//! Which addresses a user-controlled URL may reach: public unicast only. Refused are loopback,
//! private (RFC 1918, IPv6 unique-local), link-local, CGNAT (100.64.0.0/10), cloud metadata
//! (169.254.169.254, fd00:ec2::254), unspecified, multicast, broadcast and the other special
//! ranges of the IANA registries (documentation, benchmarking, reserved, 0.0.0.0/8). IPv6 forms
//! that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused (a word for the message; the address itself is not shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forbidden {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918, fc00::/7.
    Private,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// 100.64.0.0/10 (carrier-grade NAT).
    SharedNat,
    /// 169.254.169.254, fd00:ec2::254 (the cloud instance metadata services).
    Metadata,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 224.0.0.0/4, ff00::/8, 255.255.255.255.
    Multicast,
    /// Documentation, benchmarking, protocol-assignment and reserved ranges.
    Reserved,
}

impl Forbidden {
    /// The kind of address, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Forbidden::Loopback => "a loopback address",
            Forbidden::Private => "a private address",
            Forbidden::LinkLocal => "a link-local address",
            Forbidden::SharedNat => "a carrier-grade NAT address",
            Forbidden::Metadata => "a cloud metadata address",
            Forbidden::Unspecified => "an unspecified address",
            Forbidden::Multicast => "a multicast or broadcast address",
            Forbidden::Reserved => "a reserved address",
        }
    }
}

/// `None` when `ip` is a public unicast address a user's URL may reach, else why not.
pub fn forbidden(ip: IpAddr) -> Option<Forbidden> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<Forbidden> {
    let [a, b, c, _] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        Some(Forbidden::Metadata)
    } else if a == 0 {
        Some(Forbidden::Unspecified)
    } else if ip.is_loopback() {
        Some(Forbidden::Loopback)
    } else if ip.is_private() {
        Some(Forbidden::Private)
    } else if ip.is_link_local() {
        Some(Forbidden::LinkLocal)
    } else if a == 100 && (b & 0xc0) == 64 {
        Some(Forbidden::SharedNat)
    } else if ip.is_multicast() || ip.is_broadcast() {
        Some(Forbidden::Multicast)
    } else if ip.is_documentation()
        // 192.0.0.0/24 protocol assignments, 198.18.0.0/15 benchmarking, 240.0.0.0/4 reserved.
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b & 0xfe) == 18)
        || a >= 240
    {
        Some(Forbidden::Reserved)
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<Forbidden> {
    let s = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        Some(Forbidden::Metadata)
    } else if ip.is_unspecified() {
        Some(Forbidden::Unspecified)
    } else if ip.is_loopback() {
        Some(Forbidden::Loopback)
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Some(Forbidden::Private)
    } else if (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
        // fec0::/10 (deprecated site-local) reaches the local site just the same.
        Some(Forbidden::LinkLocal)
    } else if ip.is_multicast() {
        Some(Forbidden::Multicast)
    } else if (s[0] == 0x2001 && (s[1] == 0x0db8 || s[1] < 0x0200))
        // 2001:db8::/32 documentation, 2001::/23 IETF protocol assignments (Teredo 2001::/32
        // included), 100::/64 discard, 3fff::/20 documentation, and everything outside global
        // unicast 2000::/3.
        || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0)
        || (s[0] & 0xfff0) == 0x3ff0
        || (s[0] & 0xe000) != 0x2000
    {
        Some(Forbidden::Reserved)
    } else {
        None
    }
}

/// The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
/// NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6] == [0; 6] && (s[6] != 0 || s[7] > 1) {
        return Some(tail(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(tail(s[1], s[2]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Option<Forbidden> {
        forbidden(text.parse().unwrap_or_else(|e| panic!("{text}: {e}")))
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(check(ip), None, "{ip}");
        }
    }

    #[test]
    fn local_private_and_special_addresses_are_refused() {
        use Forbidden::*;
        for (ip, why) in [
            ("127.0.0.1", Loopback),
            ("127.255.1.2", Loopback),
            ("::1", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("fd12:3456::1", Private),
            ("fc00::1", Private),
            ("169.254.1.1", LinkLocal),
            ("fe80::1", LinkLocal),
            ("100.64.0.1", SharedNat),
            ("100.127.255.254", SharedNat),
            ("169.254.169.254", Metadata),
            ("fd00:ec2::254", Metadata),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("::", Unspecified),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("255.255.255.255", Multicast),
            ("ff02::1", Multicast),
            ("192.0.2.1", Reserved),
            ("198.18.0.1", Reserved),
            ("240.0.0.1", Reserved),
            ("2001:db8::1", Reserved),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Reserved),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", Metadata),
            ("::ffff:10.0.0.1", Private),
            ("::127.0.0.1", Loopback),
            ("64:ff9b::7f00:1", Loopback),
            ("2002:c0a8:0101::1", Private),
        ] {
            assert_eq!(check(ip), Some(why), "{ip}");
        }
    }
}
