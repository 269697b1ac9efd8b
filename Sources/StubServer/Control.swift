import Foundation
import Hummingbird
import StubCore

/// `/_stub/*`: control endpoints outside the API (no auth, never faulted).
///
/// - `GET /_stub/faults` lists the faults in force; `POST /_stub/faults` adds one (a JSON object) or
///   several (an array); `DELETE /_stub/faults` removes all; `DELETE /_stub/faults/ID` removes one.
/// - `POST /_stub/reset` puts the data and tokens back to their seeded state, forgets the App Store's
///   purchases (its keys stay) and removes every fault.
/// - `PUT /_stub/packs/ID` changes a pack's `name`, `price_cents`, `cheer_total` or `creator` (or adds
///   a pack, given a name); `DELETE /_stub/packs/ID` removes one. For comparisons made on purpose.
/// - `POST /_stub/revoke_tokens` makes every access token issued so far invalid (refresh still works).
/// - `GET /_stub/health` answers `{"status":"ok"}`.
/// - `/_stub/appstore/*`: the App Store's purchases and refunds (`AppStoreControl.swift`).
extension StubService {
    struct Health: ResponseEncodable { let status: String }
    struct Faults: ResponseEncodable { let faults: [ActiveFault] }
    struct Cleared: ResponseEncodable { let cleared: Int }
    struct Removed: ResponseEncodable { let removed: Int }
    struct Revoked: ResponseEncodable { let revoked: Bool }
    struct Edited: ResponseEncodable { let edited: String }
    struct ResetDone: ResponseEncodable {
        let reset: Bool
        let faultsCleared: Int
        enum CodingKeys: String, CodingKey { case reset, faultsCleared = "faults_cleared" }
    }

    func addControlRoutes(to router: Router<StubContext>) {
        let faults = self.faults, store = self.store
        router.get("/_stub/health") { _, _ in Health(status: "ok") }
        router.get("/_stub/faults") { _, _ in Faults(faults: await faults.list()) }
        router.post("/_stub/faults") { request, context in
            // Any JSON: the keys are checked by `FaultSpec.from(json:)`, as `--fault` is.
            let body = try await request.decode(as: JSON.self, context: context)
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
            var added: [ActiveFault] = []
            for spec in specs { added.append(await faults.add(spec)) }
            return EditedResponse(status: .created, response: Faults(faults: added))
        }
        router.delete("/_stub/faults") { _, _ in Cleared(cleared: await faults.clear()) }
        // Any other DELETE under /_stub/faults/ is "no fault …" too (`ErrorMiddleware.noRoute`).
        router.delete("/_stub/faults/:id") { _, context in
            let id = context.parameters.get("id") ?? ""
            guard let number = Int(id), await faults.remove(id: number) else {
                throw ShopError(status: 404, code: "not_found", message: "no fault \(id)")
            }
            return Removed(removed: number)
        }
        router.post("/_stub/reset") { _, _ in
            await store.reset(now: Date().timeIntervalSince1970)
            return ResetDone(reset: true, faultsCleared: await faults.clear())
        }
        router.put("/_stub/packs/:identifier") { request, context in
            let id = context.parameters.get("identifier") ?? ""
            let body = try await request.decode(as: JSON.self, context: context)
            guard case let .object(fields) = body else { throw ShopError.badRequest("expected a JSON object of pack fields", code: "invalid_pack") }
            func field(_ name: String) -> JSON? { fields.last { $0.0 == name }?.1 }
            func int(_ name: String) -> Int? { if case let .int(n)? = field(name) { return Int(n) } else { return nil } }
            func string(_ name: String) -> String? { if case let .string(s)? = field(name) { return s } else { return nil } }
            guard await store.editPack(identifier: id, name: string("name"), priceCents: int("price_cents"), cheerTotal: int("cheer_total"), creator: string("creator")) else {
                throw ShopError.badRequest("a new pack needs a name", code: "invalid_pack")
            }
            return Edited(edited: id)
        }
        router.delete("/_stub/packs/:identifier") { _, context in
            let id = context.parameters.get("identifier") ?? ""
            guard await store.removePack(identifier: id) else { throw ShopError(status: 404, code: "not_found", message: "no pack \(id)") }
            return Edited(edited: id)
        }
        router.post("/_stub/revoke_tokens") { _, _ in
            await store.revokeAccessTokens()
            return Revoked(revoked: true)
        }
    }
}
