/// What the stand-in received, request by request, for tests that check what a client really sent.
public actor RequestRecorder {
    public struct Seen: Sendable {
        public let method: String
        /// Path and query as sent.
        public let uri: String
        public let headers: [(name: String, value: String)]
        public let body: [UInt8]
        /// The status sent, or how the connection ended (`RESET`, `HANG(client gave up)` …).
        public let outcome: String
        public let requestID: String

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var path: String { String(uri.prefix { $0 != "?" }) }
        public var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    private var seen: [Seen] = []

    public init() {}

    func record(_ request: Seen) { seen.append(request) }

    public func all() -> [Seen] { seen }

    public func clear() { seen = [] }

    /// Requests to `path` (no query), in arrival order.
    public func requests(to path: String) -> [Seen] { seen.filter { $0.path == path } }
}
