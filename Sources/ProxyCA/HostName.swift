import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A host as a certificate names it: a DNS name (lower-cased, no trailing dot) or an IP address.
enum HostName: Hashable, Sendable {
    case dns(String)
    case ip(IPAddress)

    /// Reads `raw`: an IPv4 or IPv6 literal (IPv6 with or without `[]`), else a DNS name of
    /// letters, digits, `-` and `_` in dot-separated labels; nil for anything else.
    init?(_ raw: String) {
        var text = raw.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let address = IPAddress(literal: text) {
            self = .ip(address)
            return
        }
        if text.hasSuffix(".") { text.removeLast() }
        let name = text.lowercased()
        guard Self.isDNSName(name) else { return nil }
        self = .dns(name)
    }

    /// The host as written in a certificate and in messages.
    var text: String {
        switch self {
        case .dns(let name): name
        case .ip(let address): address.text
        }
    }

    private static func isDNSName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count)
                && label.utf8.allSatisfy { byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                }
        }
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address.
struct IPAddress: Hashable, Sendable {
    let bytes: [UInt8]

    /// Reads a textual IPv4 (dotted quad) or IPv6 address; nil for anything else.
    init?(literal: String) {
        if let bytes = Self.parse(literal, family: AF_INET, count: 4) ?? Self.parse(literal, family: AF_INET6, count: 16) {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// Takes 4 or 16 bytes; nil for any other count.
    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The canonical text: dotted quad, or IPv6 lower-case with the longest run of zeros shortened.
    var text: String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parse(_ text: String, family: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBytes { raw in inet_pton(family, text, raw.baseAddress) }
        return result == 1 ? bytes : nil
    }
}
