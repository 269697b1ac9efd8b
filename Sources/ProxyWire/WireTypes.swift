/// The bounds a `RequestReader` holds a client to; beyond them it refuses rather than buffer.
public struct WireLimits: Sendable, Equatable {
    /// The request line and header lines together, with their line ends (leading empty lines count too).
    public var maxHeadBytes: Int
    /// Header fields in one head.
    public var maxHeaderCount: Int
    /// One request's body, after de-chunking.
    public var maxBodyBytes: Int
    /// One chunk-size line with its extensions and line end.
    public var maxChunkLineBytes: Int

    public init(maxHeadBytes: Int = 32 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 16 << 20,
                maxChunkLineBytes: Int = 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
        self.maxChunkLineBytes = maxChunkLineBytes
    }
}

/// One header line: the name as sent, the value without leading or trailing spaces and tabs.
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// How the request's body is delimited.
public enum BodyFraming: Sendable, Equatable {
    /// No Content-Length and no Transfer-Encoding: no body.
    case none
    /// Content-Length: exactly this many bytes.
    case length(Int)
    /// Transfer-Encoding: chunked.
    case chunked
}

/// The shape of a request target (RFC 9112 §3.2).
public enum TargetForm: Sendable, Equatable {
    /// `/path?query`
    case origin
    /// `http://host:port/path`
    case absolute
    /// `host:port`, CONNECT only.
    case authority
    /// `*`, OPTIONS only.
    case asterisk
}

/// A request's line and headers, read and checked.
public struct RequestHead: Sendable, Equatable {
    /// As sent (token characters only), e.g. "GET", "CONNECT".
    public var method: String
    /// As sent: "/a?b", "http://h:p/a", "h:443" (CONNECT) or "*" (OPTIONS).
    public var target: String
    /// HTTP/1.0 → 0, HTTP/1.1 → 1.
    public var minorVersion: Int
    /// In the order sent.
    public var headers: [HeaderField]
    public var framing: BodyFraming
    /// The client sent `Expect: 100-continue` (HTTP/1.1) and waits for a 100 before its body.
    public var expectsContinue: Bool
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool

    public init(method: String, target: String, minorVersion: Int, headers: [HeaderField], framing: BodyFraming,
                expectsContinue: Bool, keepAlive: Bool) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.framing = framing
        self.expectsContinue = expectsContinue
        self.keepAlive = keepAlive
    }

    /// The values of every header with this name (compared without regard to ASCII case), in order.
    public func values(_ name: String) -> [String] {
        headers.compactMap { ASCII.sameIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// The value of the first header with this name (compared without regard to ASCII case).
    public func value(_ name: String) -> String? {
        headers.first { ASCII.sameIgnoringCase($0.name, name) }?.value
    }

    /// The target's form (the reader has already checked it suits the method).
    public var targetForm: TargetForm {
        if target.utf8.first == UInt8(ascii: "/") { return .origin }
        if target == "*" { return .asterisk }
        return method == "CONNECT" ? .authority : .absolute
    }
}

/// What the reader makes of the bytes so far.
public enum WireEvent: Sendable, Equatable {
    /// The head is complete and checked; the body (if any) has not been read yet. The proxy may answer
    /// 100 Continue or refuse (407…) now.
    case head(RequestHead)
    /// The whole request: the body de-chunked, trailers read and dropped.
    case request(RequestHead, body: [UInt8])
}
