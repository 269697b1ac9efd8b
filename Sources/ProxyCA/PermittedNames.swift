import Foundation

/// The hosts the CA may sign for: DNS names (exact host; RFC 5280 dNSName constraints also admit
/// subdomains, that's accepted) and IP addresses (v4/v6, each a /32 or /128).
public struct PermittedNames: Sendable, Equatable, Codable {
    /// DNS names, lower-cased, without a trailing dot, sorted, unique.
    public var dnsNames: [String]
    /// IP addresses in canonical text (`127.0.0.1`, `::1`), sorted, unique.
    public var ipAddresses: [String]

    /// Splits names from IP literals (`[::1]` loses its brackets) and normalizes both. A leading
    /// `*.` or `.` is dropped (the name admits its subdomains anyway); a host that is neither a
    /// DNS name nor an IP literal is left out (`ProxyCA.uncovered` then names it).
    public init(hosts: [String]) {
        self.init(hosts.compactMap { raw -> HostName? in
            var text = Substring(raw.trimmingCharacters(in: .whitespaces))
            if text.hasPrefix("*.") { text = text.dropFirst(2) } else if text.hasPrefix(".") { text = text.dropFirst() }
            return HostName(String(text))
        })
    }

    init(_ names: [HostName]) {
        var dns = Set<String>()
        var ips = Set<IPAddress>()
        for name in names {
            switch name {
            case .dns(let host): dns.insert(host)
            case .ip(let address): ips.insert(address)
            }
        }
        dnsNames = dns.sorted()
        ipAddresses = ips.sorted {
            $0.bytes.count != $1.bytes.count ? $0.bytes.count < $1.bytes.count : $0.bytes.lexicographicallyPrecedes($1.bytes)
        }.map(\.text)
    }

    /// True when no host at all is permitted.
    public var isEmpty: Bool { dnsNames.isEmpty && ipAddresses.isEmpty }

    /// Every permitted host, names first: for messages.
    public var hosts: [String] { dnsNames + ipAddresses }

    /// Whether a certificate for `host` passes the constraints: a DNS name equal to a permitted one
    /// or a subdomain of it; an IP address equal to a permitted one.
    public func covers(_ host: String) -> Bool {
        guard let name = HostName(host) else { return false }
        return covers(name)
    }

    func covers(_ name: HostName) -> Bool {
        switch name {
        case .dns(let host):
            return dnsNames.contains { host == $0 || host.hasSuffix("." + $0) }
        case .ip(let address):
            return ipAddresses.contains { IPAddress(literal: $0) == address }
        }
    }
}
