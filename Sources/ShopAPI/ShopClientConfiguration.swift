import Foundation
import HTTPTypes

/// Where a client sends, with which headers, how long it waits and how it retries.
public struct ShopClientConfiguration: Sendable {
    public static let appVersion = "0.1.0"

    /// `http(s)://host[:port][/prefix]`; endpoint paths are appended.
    public var baseURL: String
    public var headers: HTTPFields
    public var requestTimeout: Duration
    public var retry: RetryPolicy
    /// How a retry waits (a test passes its own to make timing exact).
    public var sleeper: Sleeper
    /// The retry's jitter, a number in 0..<1 (a test passes a constant).
    public var random: @Sendable () -> Double

    public init(
        baseURL: String,
        headers: HTTPFields = [.accept: "application/json", .userAgent: "reiterate-shop/\(appVersion) (Swift; Linux)"],
        requestTimeout: Duration = .seconds(10),
        retry: RetryPolicy = RetryPolicy(),
        sleeper: Sleeper = .live,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.requestTimeout = requestTimeout
        self.retry = retry
        self.sleeper = sleeper
        self.random = random
    }

    /// The base URL without a trailing slash, or a configuration error naming what is wrong.
    public func validatedBaseURL() throws -> String {
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil, url.user == nil, url.password == nil,
              url.port.map({ (1...65_535).contains($0) }) ?? true
        else {
            throw ShopAPIError.configuration(.invalidBaseURL(shown: URL(string: baseURL)?.user != nil ? nil : baseURL))
        }
        return baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }
}

/// Waits between retries; a test passes its own to make timing exact.
public struct Sleeper: Sendable {
    public let sleep: @Sendable (Duration) async throws -> Void
    public init(_ sleep: @escaping @Sendable (Duration) async throws -> Void) { self.sleep = sleep }
    public static let live = Sleeper { try await CancellableSleep.sleep(for: $0) }
}
