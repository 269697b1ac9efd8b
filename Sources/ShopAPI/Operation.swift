import Foundation

// What an exchange is: the one place that decides it from a method and a URL or path, for live traffic
// (the client's own requests and the app's through the proxy), HAR files, snapshots and pins.

extension EndpointDescription {
    /// Every operation the REST core sends, as its endpoint types describe them.
    public static let all: [EndpointDescription] = [
        AudioPacks.endpoint, Balance.endpoint, CheerHistory.endpoint, PurchaseCheer.endpoint, SpendCheer.endpoint, RefreshToken.endpoint,
    ]

    /// The operation a method and a path (relative to the base URL, no query) are; nil for any other.
    public static func operation(_ method: RequestMethod, path: String) -> OperationID? {
        all.first { $0.method == method && $0.path == path }?.operation
    }
}

extension RequestKey {
    /// The operation this request is (its path relative to the base URL); nil for a request no endpoint
    /// type sends.
    public var operation: OperationID? { EndpointDescription.operation(method, path: path) }
}

/// The path a base URL has of its own (`/staging` for `https://host/staging/`; "" for none): what comes
/// before an operation's path in every request sent to it.
public struct BasePath: Sendable, Hashable, CustomStringConvertible {
    /// Without a trailing slash; "" for none.
    public let prefix: String

    public init(_ prefix: String) {
        var p = prefix
        while p.hasSuffix("/") { p.removeLast() }
        if !p.isEmpty, !p.hasPrefix("/") { p = "/" + p }
        self.prefix = p
    }

    /// The base URL's own path.
    public init(of baseURL: URL) { self.init(baseURL.path) }

    /// The prefix a request's path has before one of the operations' paths, when it ends with one
    /// (a file that does not say its base URL); nil when it ends with none.
    public init?(inferredFrom path: String) {
        guard let known = EndpointDescription.all.first(where: { path.hasSuffix($0.path) }) else { return nil }
        self.init(String(path.dropLast(known.path.count)))
    }

    public static let none = BasePath("")

    public var description: String { prefix }

    /// `target` (path and query) relative to the base URL: the prefix taken off when the target is under
    /// it (`/staging/api/v1/balance?…` → `/api/v1/balance?…`); else the target as it is.
    public func relative(_ target: String) -> String {
        guard !prefix.isEmpty, target.hasPrefix(prefix) else { return target }
        let rest = target.dropFirst(prefix.count)
        guard rest.isEmpty || rest.hasPrefix("/") || rest.hasPrefix("?") else { return target }  // `/stagingX/…` is not under `/staging`
        return rest.hasPrefix("/") ? String(rest) : "/" + rest
    }

    /// The key of a request line's method and target, relative to the base URL.
    public func key(method: String, target: String) -> RequestKey? {
        RequestKey(method: method, target: relative(target))
    }
}

extension BasePath {
    /// `http://host:8080/staging/api/v1/balance?user_id=x` → (`http://host:8080`, `/staging/api/v1/balance?user_id=x`);
    /// nil for a text with no scheme.
    public static func split(url: String) -> (origin: String, target: String)? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let target = slash == rest.endIndex ? "/" : rest[slash] == "?" ? "/" + rest[slash...] : String(rest[slash...])
        return (String(url[..<slash]), target)
    }
}

extension OperationID {
    /// The balance a 2xx answer of this operation says, read by its endpoint type (a balance read, a spend
    /// and a purchase answer with `CheerBalance`); nil for another operation or a body that does not read.
    public func answeredBalance(_ body: [UInt8]) -> Int? {
        switch self {
        case .getBalance: (try? Balance.decode(body))?.balance
        case .spendCheer: (try? SpendCheer.decode(body))?.balance
        case .purchaseCheer: (try? PurchaseCheer.decode(body))?.balance
        case .listAudioPacks, .getCheerHistory, .refreshToken: nil
        }
    }
}
