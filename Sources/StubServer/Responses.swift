import HTTPTypes
import Hummingbird
import StubCore

/// Answers built outside a route's return value: errors (thrown by routes, the router's "no such
/// route", injected faults) and the proxy's HTML page.
enum Responses {
    static let jsonType = "application/json; charset=utf-8"

    /// `value` as JSON with `status` (`StubJSON.encoder`: sorted keys, deterministic bytes).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], contentType: String = jsonType) -> Response {
        var fields: HTTPFields = [.contentType: contentType]
        fields.append(contentsOf: headers)
        do {
            return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try StubJSON.encode(value))))
        } catch {
            // Only a non-finite Double could fail to encode, and the stand-in sends none.
            return Response(status: .internalServerError, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "stand-in error: \(error)")))
        }
    }

    /// A contract error: `{"code","message"}`, with `Retry-After` when it has one and `WWW-Authenticate` on 401.
    static func error(_ error: ShopError, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        if let retryAfter = error.retryAfter { fields.append(HTTPField(name: .retryAfter, value: String(retryAfter))) }
        if error.status == 401 { fields.append(HTTPField(name: .wwwAuthenticate, value: "Bearer realm=\"reiterate\"")) }
        return json(error, status: HTTPResponse.Status(code: error.status), headers: fields)
    }

    static func internalError(_ error: any Error) -> Response {
        self.error(ShopError(status: 500, code: "internal", message: "stand-in error: \(error)"))
    }

    /// The error page nginx sends when the upstream is down or slow.
    static func proxyPage(status: Int, retryAfter: Int?) -> Response {
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
        var headers: HTTPFields = [.contentType: "text/html"]
        if let retryAfter { headers.append(HTTPField(name: .retryAfter, value: String(retryAfter))) }
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

extension HTTPField.Name {
    static let requestID: HTTPField.Name = {
        guard let name = HTTPField.Name("X-Request-Id") else { preconditionFailure("valid header name") }
        return name
    }()
}
