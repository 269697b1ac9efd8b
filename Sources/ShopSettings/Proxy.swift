import Foundation

/// An HTTP proxy: requests go to it (HTTPS through CONNECT). Its credentials are kept for the
/// transport and never shown: `shown` masks them.
public struct ProxySetting: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `http://host:port`, with `***@` where credentials are (their value never).
    public var shown: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "http://\(username == nil ? "" : "***@")\(name):\(port)"
    }

    /// curl's reading of a proxy: `http://[user:password@]host[:port]`, or `host[:port]` (http is
    /// assumed); the port defaults to 1080, as curl's does. Nil for anything else (an `https://` or
    /// `socks5://` proxy is not supported here).
    public static func parse(_ text: String) -> ProxySetting? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let url = URLComponents(string: withScheme), url.scheme?.lowercased() == "http",
              let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/", url.query == nil
        else { return nil }
        let port = url.port ?? 1080
        guard (1...65_535).contains(port) else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return ProxySetting(host: bare, port: port, username: url.percentEncodedUser?.removingPercentEncoding,
                            password: url.percentEncodedPassword?.removingPercentEncoding)
    }
}

/// Which proxy, if any, a request to the base URL goes through. The order (first match wins):
/// 1. `NO_PROXY`/`no_proxy` names the base URL's host → direct;
/// 2. `proxy` in the environment's config (`proxy = ""` → direct);
/// 3. for an https base URL `https_proxy`, then `HTTPS_PROXY`; for http `http_proxy`, then `HTTP_PROXY`
///    (curl reads only the lower-case `http_proxy`: an old CGI hazard that does not apply here);
/// 4. `all_proxy`, then `ALL_PROXY`.
public enum ProxyResolution {
    public struct Outcome: Sendable, Equatable {
        public var proxy: ProxySetting?
        /// Where it came from: `config file`, `environment variable HTTPS_PROXY`, `NO_PROXY`, `none`.
        public var source: String
    }

    public static func resolve(baseURL: String, configured: String?, environment: [String: String]) -> Result<Outcome, ProxyProblem> {
        let url = URLComponents(string: baseURL)
        let host = (url?.host ?? "").lowercased()
        for name in ["no_proxy", "NO_PROXY"] {
            if let list = environment[name], !list.isEmpty {
                if bypasses(host: host, noProxy: list) { return .success(Outcome(proxy: nil, source: "direct: \(name) names \(host)")) }
                break  // the lower-case one wins when both are set, as in curl
            }
        }
        if let configured {
            if configured.trimmingCharacters(in: .whitespaces).isEmpty { return .success(Outcome(proxy: nil, source: "direct: proxy = \"\" in the config file")) }
            guard let proxy = ProxySetting.parse(configured) else { return .failure(ProxyProblem(variable: nil)) }
            return .success(Outcome(proxy: proxy, source: "config file"))
        }
        let scheme = url?.scheme?.lowercased() == "https" ? "https" : "http"
        for name in ["\(scheme)_proxy", "\(scheme.uppercased())_PROXY", "all_proxy", "ALL_PROXY"] {
            guard let value = environment[name], !value.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            guard let proxy = ProxySetting.parse(value) else { return .failure(ProxyProblem(variable: name)) }
            return .success(Outcome(proxy: proxy, source: "environment variable \(name)"))
        }
        return .success(Outcome(proxy: nil, source: "none"))
    }

    /// curl's `NO_PROXY`: comma-separated names; `*` as the whole value matches every host; a name
    /// matches itself and its subdomains (a leading or trailing dot is ignored); an IP address matches
    /// only itself, or a range written as CIDR (IPv4); a `:port` after a name is ignored.
    public static func bypasses(host rawHost: String, noProxy: String) -> Bool {
        if noProxy.trimmingCharacters(in: .whitespaces) == "*" { return true }
        var host = rawHost.hasPrefix("[") ? String(rawHost.dropFirst().dropLast()) : rawHost
        while host.hasSuffix(".") { host.removeLast() }
        let hostIsIP = ipv4(host) != nil || host.contains(":")
        for raw in noProxy.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.hasPrefix("[") { entry = String(entry.dropFirst().prefix { $0 != "]" }) }
            else if entry.filter({ $0 == ":" }).count == 1 { entry = String(entry.prefix { $0 != ":" }) }
            while entry.hasPrefix(".") { entry.removeFirst() }
            while entry.hasSuffix(".") { entry.removeLast() }
            guard !entry.isEmpty else { continue }
            if let slash = entry.firstIndex(of: "/") {
                if let bits = Int(entry[entry.index(after: slash)...]), inIPv4(host, network: String(entry[..<slash]), bits: bits) { return true }
                continue
            }
            if host == entry || (!hostIsIP && host.hasSuffix("." + entry)) { return true }
        }
        return false
    }

    private static func ipv4(_ s: String) -> UInt32? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false).map { UInt32($0) }
        guard parts.count == 4, parts.allSatisfy({ ($0 ?? 256) < 256 }) else { return nil }
        return parts.reduce(0) { $0 << 8 | ($1 ?? 0) }
    }

    private static func inIPv4(_ host: String, network: String, bits: Int) -> Bool {
        guard let h = ipv4(host), let n = ipv4(network), (0...32).contains(bits) else { return false }
        let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
        return h & mask == n & mask
    }
}

/// A proxy setting that cannot be used; `variable` names the environment variable (nil: the config).
public struct ProxyProblem: Error, Sendable, Equatable {
    public var variable: String?
    public var message: String {
        "\(variable ?? "proxy in the config file") is not an http://host:port proxy (https:// and socks proxies are not supported)"
    }
}
