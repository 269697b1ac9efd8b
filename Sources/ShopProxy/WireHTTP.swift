import Foundation
import HTTPTypes
import NIOCore
import ProxyWire

/// An answer the proxy writes: a status, its fields and a body, framed with Content-Length.
struct WireResponse {
    var status: Int
    var fields: [(String, String)]
    var body: [UInt8]
    /// For a HEAD request, or a 204/304: no body goes out (the upstream's Content-Length is kept as sent).
    var bodiless = false

    /// An answer of the proxy's own: plain text, one line (`reason`), and who said it (`X-Reiterate-Proxy`:
    /// `refused`, never forwarded; `upstream-failed` or `upstream-timeout`, forwarded and not answered).
    static func own(_ status: Int, _ reason: String, close: Bool = true, kind: String = "refused", extra: [(String, String)] = []) -> WireResponse {
        var fields: [(String, String)] = [("Content-Type", "text/plain; charset=utf-8"), ("X-Reiterate-Proxy", kind)] + extra
        if close { fields.append(("Connection", "close")) }
        return WireResponse(status: status, fields: fields, body: Array((reason + "\n").utf8))
    }

    func encoded(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 256 + body.count)
        buffer.writeString("HTTP/1.1 \(status) \(Self.reason(status))\r\n")
        var hasLength = false
        for (name, value) in fields {
            if name.lowercased() == "content-length" { hasLength = true }
            buffer.writeString(name)
            buffer.writeString(": ")
            buffer.writeString(value)
            buffer.writeString("\r\n")
        }
        if !hasLength, sendsBody { buffer.writeString("Content-Length: \(body.count)\r\n") }
        buffer.writeString("\r\n")
        if sendsBody { buffer.writeBytes(body) }
        return buffer
    }

    /// Whether the body goes out after the head (not for HEAD, 204, 304 or 1xx).
    var sendsBody: Bool { !(bodiless || status == 204 || status == 304 || (100..<200).contains(status)) }

    /// The standard reason phrase (the status alone says it all; the phrase is for people reading a capture).
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

/// What a request's target says about where it goes.
enum RequestTarget: Equatable {
    /// `/path?query`: for the proxy itself, or inside an intercepted tunnel for its host.
    case origin(String)
    /// `http://host:port/path?query` (a plain-HTTP request through the proxy).
    case absolute(scheme: String, HostPort, String)
    /// `host:port` (CONNECT).
    case authority(HostPort)
    case unreadable

    init(_ target: String, method: String) {
        if method == "CONNECT" {
            self = HostPort(authority: target).map(RequestTarget.authority) ?? .unreadable
        } else if target.hasPrefix("/") {
            self = .origin(target)
        } else if let colon = target.firstIndex(of: ":"), target[colon...].hasPrefix("://"), case let scheme = target[..<colon].lowercased(),
                  scheme == "http" || scheme == "https" {
            let rest = target[target.index(colon, offsetBy: 3)...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = String(rest[..<authorityEnd])
            var path = String(rest[authorityEnd...])
            if path.hasPrefix("?") || path.isEmpty { path = "/" + path }
            let withPort = authority.contains("]:") || (!authority.hasPrefix("[") && authority.contains(":"))
                ? authority : authority + ":" + (scheme == "https" ? "443" : "80")
            guard !authority.contains("@"), let hostPort = HostPort(authority: withPort) else { self = .unreadable; return }
            self = .absolute(scheme: scheme, hostPort, path)
        } else {
            self = .unreadable
        }
    }
}

extension HostPort {
    /// Whether a `Host` header's value names this host (with its port, or without it where the port is
    /// the scheme's default).
    func matches(hostHeader value: String, defaultPort: Int) -> Bool {
        if let named = HostPort(authority: value) { return named == self }
        return HostPort(host: value, port: defaultPort) == self
    }
}
