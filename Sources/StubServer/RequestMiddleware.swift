import HTTPTypes
import Hummingbird
import StubCore

/// Gives every request an id (`rq-` and 16 hex digits), kept in the context for the layers inside and sent
/// back as `X-Request-Id` on every answer: routes, errors, 404s, control endpoints and faults alike.
struct RequestIDMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: StubContext, next: (Request, StubContext) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = Self.newRequestID()
        var response = try await next(request, context)
        if !context.notes.dropRequestID { response.headers[.requestID] = context.requestID }
        return response
    }

    static func newRequestID() -> String {
        var rng = SystemRandomNumberGenerator()
        return "rq-" + String(rng.next() | (1 << 63), radix: 16)
    }
}

/// Keeps every request (method, target, headers, body) and how it was answered in a `RequestRecorder`.
struct RecorderMiddleware: RouterMiddleware {
    let recorder: RequestRecorder

    func handle(_ request: Request, context: StubContext, next: (Request, StubContext) async throws -> Response) async throws -> Response {
        var request = request
        // Buffer the body (it stays in the request for the routes) so it can be recorded.
        let body = (try? await request.collectBody(upTo: StubBody.limit)).map { Array($0.readableBytesView) } ?? []
        let response = try await next(request, context)
        await recorder.record(RequestRecorder.Seen(
            method: request.method.rawValue, uri: request.uri.description,
            headers: request.headers.map { ($0.name.rawName, $0.value) }, body: body,
            outcome: context.notes.outcome(response), requestID: context.requestID
        ))
        return response
    }
}

/// The request log on stderr: one `RequestLog.line` per request once its answer is decided.
struct RequestLogMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: StubContext, next: (Request, StubContext) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        RequestLog.write(RequestLog.line(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
            outcome: context.notes.outcome(response), millis: Int((ContinuousClock.now - started) / .milliseconds(1)),
            requestID: context.requestID, faults: context.notes.appliedFaults.map(\.spec.kind.rawValue), reason: context.notes.reason
        ))
        return response
    }
}

/// Innermost layer: turns what routes throw into the contract's JSON errors, and the router's "no such
/// route" into a 404 (unknown path) or a 405 with `Allow` (a known path, another method).
struct ErrorMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: StubContext, next: (Request, StubContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        do {
            // The router's trie ignores empty segments (`/api/v1/balance/` would reach balance); the
            // contract's paths are exact.
            guard StubRoutes.isCanonical(path) else { throw HTTPError(.notFound) }
            return try await next(request, context)
        } catch let error as ShopError {
            return Responses.error(error)
        } catch let error as HTTPError where error.status == .notFound {
            return Self.noRoute(method: request.method, path: path)
        } catch {
            return Responses.internalError(error)
        }
    }

    static func noRoute(method: HTTPRequest.Method, path: String) -> Response {
        if method == .delete, path.hasPrefix("/_stub/faults/") {
            return Responses.error(ShopError(status: 404, code: "not_found", message: "no fault \(path.dropFirst("/_stub/faults/".count))"))
        }
        if StubRoutes.isControl(path) {
            return Responses.error(ShopError(status: 404, code: "not_found", message: "no control endpoint \(method.rawValue) \(path)"))
        }
        if let operation = Operation.allCases.first(where: { $0.path == path }) {
            return Responses.error(
                ShopError(status: 405, code: "method_not_allowed", message: "\(path) takes \(operation.method.rawValue), not \(method.rawValue)"),
                headers: [.allow: operation.method.rawValue]
            )
        }
        return Responses.error(ShopError(status: 404, code: "not_found", message: "no endpoint \(method.rawValue) \(path)"))
    }
}
