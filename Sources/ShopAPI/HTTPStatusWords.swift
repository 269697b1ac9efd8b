/// A status code's standard reason phrase (RFC 9110 §15, with 429 from RFC 6585), for error lines,
/// reports and HAR files: one table for every layer, no HTTP library's.
public enum HTTPStatusWords {
    /// `Service Unavailable` for 503; for a code the table does not name, `Server Error` (5xx) or
    /// `Client Error` (anything else).
    public static func reasonPhrase(_ status: Int) -> String {
        known(status) ?? (status >= 500 ? "Server Error" : "Client Error")
    }

    /// The standard phrase, or nil for a code the table does not name.
    public static func known(_ status: Int) -> String? { table[status] }

    private static let table: [Int: String] = [
        100: "Continue", 101: "Switching Protocols",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content",
        206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
        308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
        411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
        416: "Range Not Satisfiable", 417: "Expectation Failed", 421: "Misdirected Request", 422: "Unprocessable Content",
        426: "Upgrade Required", 429: "Too Many Requests",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        505: "HTTP Version Not Supported",
    ]
}
