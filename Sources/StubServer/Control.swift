import Foundation
import Hummingbird
import StubCore

/// `/_stub/*`: control endpoints outside the API (no auth, never faulted).
///
/// - `GET /_stub/faults` lists the faults in force; `POST /_stub/faults` adds one (a JSON object) or
///   several (an array); `DELETE /_stub/faults` removes all; `DELETE /_stub/faults/ID` removes one.
/// - `POST /_stub/reset` puts the data and tokens back to their seeded state and removes every fault.
/// - `POST /_stub/revoke_tokens` makes every access token issued so far invalid (refresh still works).
/// - `GET /_stub/health` answers `{"status":"ok"}`.
extension StubService {
    func control(_ request: Request, method: String, path: String) async -> Reply {
        do {
            switch (method, path) {
            case ("GET", "/_stub/health"):
                return .json(.object([("status", .string("ok"))]))
            case ("GET", "/_stub/faults"):
                return .json(.object([("faults", .array(await faults.list().map(\.json)))]))
            case ("POST", "/_stub/faults"):
                let body = try await Self.anyJSONBody(request)
                let specs: [FaultSpec]
                do {
                    if case let .array(items) = body {
                        specs = try items.map(FaultSpec.from(json:))
                    } else {
                        specs = [try FaultSpec.from(json: body)]
                    }
                } catch let error as FaultSpecError {
                    throw ShopError.badRequest(error.message, code: "invalid_fault")
                }
                var added: [JSON] = []
                for spec in specs { added.append(await faults.add(spec).json) }
                return .json(.object([("faults", .array(added))]), status: 201)
            case ("DELETE", "/_stub/faults"):
                return .json(.object([("cleared", .int(await faults.clear()))]))
            case ("POST", "/_stub/reset"):
                await store.reset(now: Date().timeIntervalSince1970)
                let cleared = await faults.clear()
                return .json(.object([("reset", .bool(true)), ("faults_cleared", .int(cleared))]))
            case ("POST", "/_stub/revoke_tokens"):
                await store.revokeAccessTokens()
                return .json(.object([("revoked", .bool(true))]))
            case ("DELETE", _) where path.hasPrefix("/_stub/faults/"):
                guard let id = Int(path.dropFirst("/_stub/faults/".count)), await faults.remove(id: id) else {
                    throw ShopError(status: 404, code: "not_found", message: "no fault \(path.dropFirst("/_stub/faults/".count))")
                }
                return .json(.object([("removed", .int(id))]))
            default:
                throw ShopError(status: 404, code: "not_found", message: "no control endpoint \(method) \(path)")
            }
        } catch let error as ShopError {
            return .error(error)
        } catch {
            return .error(ShopError(status: 500, code: "internal", message: "stand-in error: \(error)"))
        }
    }

    static func anyJSONBody(_ request: Request) async throws -> JSON {
        let buffer = try await bodyBytes(request)
        do {
            return try JSONDecoder().decode(JSON.self, from: Data(buffer.readableBytesView))
        } catch {
            throw ShopError.badRequest("request body is not valid JSON", code: "invalid_json")
        }
    }
}
