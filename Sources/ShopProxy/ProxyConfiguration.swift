import Foundation
import ProxyWire

/// A host and port, as a CONNECT names them (`staging.example.com:443`, `[::1]:8443`).
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    /// Lower-cased; an IPv6 address without its brackets.
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = Self.bare(host).lowercased()
        self.port = port
    }

    /// `host:port` or `[v6]:port`; nil for anything else (no port, a port out of range, empty host).
    /// Port 0 only `allowingPortZero` (a listen address: the system picks a free port).
    public init?(authority: String, allowingPortZero: Bool = false) {
        let padded = authority.first?.isWhitespace == true || authority.last?.isWhitespace == true
        let text = padded ? authority.trimmingCharacters(in: .whitespaces) : authority
        let host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, !port.isEmpty, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), port.count <= 5,
              let number = Int(port), ((allowingPortZero ? 0 : 1)...65_535).contains(number),
              host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" && $0 != "@" && $0 != "?" && $0 != "#" })
        else { return nil }
        self.init(host: String(host), port: number)
    }

    /// The host and port of an `http` or `https` URL (its default port when it names none).
    public init?(url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return nil }
        self.init(host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the host is this machine's loopback (`localhost`, 127.0.0.0/8, `::1`).
    public var isLoopback: Bool { Self.isLoopback(host) }

    static func isLoopback(_ host: String) -> Bool {
        let h = bare(host).lowercased()
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) && (Int(p) ?? 256) <= 255 }
    }

    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}

/// How the proxy runs: where it listens, which hosts it intercepts, where it forwards, and its limits.
public struct ProxyConfiguration: Sendable {
    /// Where it listens (default `127.0.0.1:8877`; port 0 picks a free one).
    public var listen: HostPort
    /// Required (`Proxy-Authorization: Basic`) when `listen` is not loopback; never shown or logged.
    public var password: String?
    /// The environment's base URL: its host is intercepted, and its path prefix is what an app
    /// request's path is read from (`/api/v1/balance`).
    public var baseURL: URL
    /// Further hosts to intercept (`proxy_hosts`), besides the base URL's.
    public var extraHosts: [HostPort]
    public var limits: WireLimits
    public var maxConnections: Int
    /// A connection with nothing to do for this long is closed.
    public var idleTimeout: Duration
    /// A request head must be whole this soon after its first byte (slow senders).
    public var headTimeout: Duration
    /// A request's body must be whole this soon after its head (a trickle holds no connection).
    public var bodyTimeout: Duration = .seconds(60)
    /// The whole upstream exchange must finish within this.
    public var upstreamTimeout: Duration
    /// The faults in force from the start (`--fault`); `ProxyServer.faults` changes them afterwards.
    public var faults: [ProxyFault] = []

    public init(listen: HostPort = HostPort(host: "127.0.0.1", port: 8877), password: String? = nil, baseURL: URL,
                extraHosts: [HostPort] = [], limits: WireLimits = WireLimits(), maxConnections: Int = 256,
                idleTimeout: Duration = .seconds(60), headTimeout: Duration = .seconds(10), upstreamTimeout: Duration = .seconds(30)) {
        self.listen = listen
        self.password = password
        self.baseURL = baseURL
        self.extraHosts = extraHosts
        self.limits = limits
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        self.upstreamTimeout = upstreamTimeout
    }

    /// The base URL's host and port.
    public var baseHost: HostPort? { HostPort(url: baseURL) }

    /// Every host the proxy intercepts (the base URL's first).
    public var interceptedHosts: [HostPort] {
        var seen = Set<HostPort>()
        return ([baseHost].compactMap { $0 } + extraHosts).filter { seen.insert($0).inserted }
    }

    /// Why the proxy must not start as configured (one line), or nil.
    public var refusal: String? {
        if !listen.isLoopback, (password ?? "").isEmpty {
            return "the proxy would listen on \(listen), beyond this machine, without a password: set REITERATE_PROXY_PASSWORD (the phone sends it as the proxy's password), or listen on 127.0.0.1"
        }
        if baseHost == nil { return "the environment's base URL has no host the proxy could intercept" }
        return nil
    }

    /// Reads `HOST:PORT` as given to `--listen` (`:PORT` alone means 127.0.0.1).
    public static func listenAddress(_ text: String) -> HostPort? {
        HostPort(authority: text.hasPrefix(":") ? "127.0.0.1" + text : text, allowingPortZero: true)
    }
}
