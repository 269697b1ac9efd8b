import Foundation
import HTTPTypes
import JSONTokens

/// Reading answers: a 2xx body as the endpoint's value, any other answer as the `ShopAPIError` it is.
extension ShopClient {
    static func decoded<E: Endpoint>(_: E.Type, _ response: TransportResponse) throws -> E.Response {
        do {
            return try response.tokens.map { try E.decode(response.body, tokens: $0) } ?? E.decode(response.body)
        } catch let error as DecodingError {
            let requestID = response.headers[.requestID]
            if let contentType = response.headers[.contentType], !Self.isJSON(contentType) {
                throw ShopAPIError.notJSON(status: response.status, contentType: contentType, requestID: requestID, endpoint: E.endpoint.key,
                                           text: ServerWords.read(response.body, contentType: contentType).text)
            }
            var problem = DecodingFailure.problem(error)
            if problem.reason == .invalidJSON || problem.reason == .outOfRange,
               let value = response.tokens.flatMap({ JSONValue.parse(response.body, tokens: $0) }) ?? JSONValue.parse(response.body),
               let found = DecodingFailure.beyond64Bits(in: value) {
                // Valid JSON holding a number no 64-bit integer holds: a finding about that field, not "invalid JSON".
                problem = DecodeProblem(path: found.path, reason: .beyond64Bits(found.digits))
            } else if problem.path.isEmpty, problem.reason == .invalidJSON, Self.endsEarly(response.body) {
                problem.reason = .cutShort
            } else if problem.reason != .invalidJSON, let error = Self.errorObject(response.body) {
                // The contract's Error object where the answer should be: the status is what is wrong.
                problem = DecodeProblem(path: "", reason: .errorBody(status: response.status, code: error.code, message: error.text))
            }
            throw ShopAPIError.undecodable(problem, requestID: requestID, endpoint: E.endpoint.key)
        }
    }

    /// The server's words when `body` is the contract's Error object (a JSON object with a string `message`,
    /// and an optional `code`), else nil.
    static func errorObject(_ body: [UInt8]) -> ServerWords? {
        guard case let .object(fields)? = JSONValue.parse(body), case .string? = fields["message"] else { return nil }
        let words = ServerWords.read(body, contentType: "application/json")
        return words.text == nil ? nil : words
    }

    /// Whether a body that failed to parse looks cut off (it does not end with a closing bracket).
    static func endsEarly(_ body: [UInt8]) -> Bool {
        guard let last = body.last(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return true }
        return last != UInt8(ascii: "}") && last != UInt8(ascii: "]")
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mime = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return mime == "application/json" || mime.hasSuffix("+json")
    }

    static func httpError(_ response: TransportResponse, endpoint: EndpointKey) -> ShopAPIError {
        let requestID = response.headers[.requestID]
        let contentType = response.headers[.contentType]
        let retryAfter = retryAfter(response.headers[.retryAfter], now: Date())
        // The server's words, whether or not the body follows the Error schema (the watchdog says when not).
        let words = ServerWords.read(response.body, contentType: contentType)
        guard let contentType, isJSON(contentType) else {
            return .notJSON(status: response.status, contentType: contentType, requestID: requestID, endpoint: endpoint, text: words.text)
        }
        return .http(status: response.status, message: words.text, code: words.code, requestID: requestID, endpoint: endpoint,
                     retryAfter: retryAfter.map { min($0, 86_400) })
    }

    /// `Retry-After` in seconds: delta-seconds, or an HTTP-date (RFC 9110). A number too large to hold
    /// counts as "very long" (so it is not waited for); anything unreadable counts as absent.
    static func retryAfter(_ value: String?, now: Date) -> Int? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return Int(text) ?? Int.max }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, Int(date.timeIntervalSince(now).rounded(.up)))
    }
}
