/// Why the reader refuses a request: it is malformed, could be read two ways, or breaks a limit. A
/// refused request is answered with `status` and never forwarded; the connection ends.
public enum WireRefusal: Error, Sendable, Equatable, CaseIterable {
    case headTooLarge
    case tooManyHeaders
    case malformedRequestLine
    case malformedTarget
    case unsupportedVersion
    case malformedHeader
    case obsoleteLineFolding
    case lookalikeHeaderName
    case lengthAndChunked
    case differingContentLengths
    case invalidContentLength
    case unsupportedTransferEncoding
    case transferEncodingInHTTP10
    case badChunk
    case trailersTooLarge
    case bodyTooLarge
    case connectWithBody
    case unsupportedExpectation
    case missingHost
    case multipleHosts
    case invalidHost

    /// The HTTP status to answer with.
    public var status: Int {
        switch self {
        case .headTooLarge, .tooManyHeaders, .trailersTooLarge: 431
        case .bodyTooLarge: 413
        case .unsupportedTransferEncoding: 501
        case .unsupportedVersion: 505
        case .unsupportedExpectation: 417
        case .malformedRequestLine, .malformedTarget, .malformedHeader, .obsoleteLineFolding, .lookalikeHeaderName,
             .lengthAndChunked, .differingContentLengths, .invalidContentLength, .transferEncodingInHTTP10, .badChunk,
             .connectWithBody, .missingHost, .multipleHosts, .invalidHost: 400
        }
    }

    /// One plain sentence for the answer's body and the tester.
    public var reason: String {
        switch self {
        case .headTooLarge: "the request's line and headers are larger than the proxy accepts"
        case .tooManyHeaders: "the request has more header fields than the proxy accepts"
        case .malformedRequestLine:
            "the request line is not 'METHOD target HTTP/1.x' with single spaces and a CRLF line end"
        case .malformedTarget:
            "the request target is not a path, an absolute http URL, host:port (CONNECT only) or * (OPTIONS only)"
        case .unsupportedVersion: "the proxy speaks HTTP/1.0 and HTTP/1.1 only"
        case .malformedHeader:
            "a header line is not 'name: value' with a token name, no space before the colon, a CRLF line end and no control characters"
        case .obsoleteLineFolding: "a header line starts with a space or tab (obsolete line folding), which parsers can read two ways"
        case .lookalikeHeaderName:
            "a header name is Content-Length, Transfer-Encoding or Host with '_' for '-', which some servers read as the real one"
        case .lengthAndChunked: "the request has both Content-Length and Transfer-Encoding, which parsers can read two ways"
        case .differingContentLengths: "the request has Content-Length values that differ, which parsers can read two ways"
        case .invalidContentLength: "the request's Content-Length is not a plain decimal number"
        case .unsupportedTransferEncoding: "the proxy accepts no Transfer-Encoding but exactly 'chunked'"
        case .transferEncodingInHTTP10: "an HTTP/1.0 request has Transfer-Encoding, which HTTP/1.0 does not define"
        case .badChunk: "the chunked body is malformed (a chunk size, its line end or the CRLF after a chunk's data)"
        case .trailersTooLarge: "the chunked body's trailer fields are larger than the proxy accepts"
        case .bodyTooLarge: "the request's body is larger than the proxy accepts"
        case .connectWithBody: "a CONNECT request has a body, which parsers can read two ways"
        case .unsupportedExpectation: "the request expects something other than 100-continue"
        case .missingHost: "an HTTP/1.1 request has no Host header"
        case .multipleHosts: "the request has more than one Host header, which parsers can read two ways"
        case .invalidHost: "the Host header is not a host name or address with an optional port"
        }
    }
}
