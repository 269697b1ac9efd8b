import StubCore

/// An answer before it becomes a Hummingbird `Response`: faults transform it (cut its bytes, change its
/// content type) and the request log reads it.
struct Reply: Sendable {
    var status: Int
    var body: [UInt8]
    var contentType: String
    var headers: [(String, String)] = []
    /// How the connection ends instead of an answer (reset, hang): logged in place of a status.
    var abort: String?
    /// Send the head and the first `keep` body bytes, then stall (the `stall` fault).
    var stall: (keep: Int, seconds: Int)?

    static let jsonType = "application/json; charset=utf-8"

    static func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> Reply {
        Reply(status: status, body: value.serialized(), contentType: jsonType, headers: headers)
    }

    static func error(_ error: ShopError, headers: [(String, String)] = []) -> Reply {
        var h = headers
        if let retryAfter = error.retryAfter { h.append(("Retry-After", String(retryAfter))) }
        if error.status == 401 { h.append(("WWW-Authenticate", "Bearer realm=\"reiterate\"")) }
        return json(error.json, status: error.status, headers: h)
    }

    /// The error page nginx sends when the upstream is down or slow.
    static func proxyPage(status: Int) -> Reply {
        let reason = [500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Temporarily Unavailable", 504: "Gateway Time-out"][status] ?? "Error"
        let html = """
            <html>\r
            <head><title>\(status) \(reason)</title></head>\r
            <body>\r
            <center><h1>\(status) \(reason)</h1></center>\r
            <hr><center>nginx/1.22.1</center>\r
            </body>\r
            </html>\r

            """
        return Reply(status: status, body: Array(html.utf8), contentType: "text/html")
    }
}
